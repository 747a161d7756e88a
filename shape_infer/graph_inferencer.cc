// The per-graph driver: seeding, Kahn order, the per-node sequence (merge check, ONNX,
// handler, completion with fresh symbols) and writing value_info back (spec §2.3, S2, S3).
#include "shape_infer/graph_inferencer.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "graph/diagnostics.h"
#include "graph/graph_view.h"
#include "graph/opset_schema.h"
#include "shape_infer/ops/node_context.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {

int RootState::Opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  if (it == opsets.end() && domain.empty()) it = opsets.find("ai.onnx");
  return it == opsets.end() ? 0 : it->second;
}

std::optional<SymShape> ShapeOfType(const onnx::TypeProto& type, SymbolTable& symbols) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  SymShape shape;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value()) shape.emplace_back(sym::Expr(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty()) shape.push_back(symbols.Lookup(d.dim_param()));
    else shape.emplace_back(std::nullopt);
  }
  return shape;
}

void WriteTensorType(onnx::TypeProto* type, int32_t elem_type, const std::optional<SymShape>& shape,
                     SymbolTable& symbols, int verbose) {
  auto* t = type->mutable_tensor_type();
  t->set_elem_type(elem_type);
  if (!shape) {
    t->clear_shape();
    return;
  }
  auto* s = t->mutable_shape();
  s->clear_dim();
  for (const SymDim& d : *shape) {
    auto* dim = s->add_dim();
    if (!d) continue;
    if (auto v = d->AsInt()) {
      if (*v < 0 && verbose > 0)
        ReportDiagnostic(Severity::kWarning, "shape_infer: warning: negative dim " + std::to_string(*v) + " clamped to 0");
      dim->set_dim_value(std::max<int64_t>(*v, 0));
    } else if (d->IsNumber()) {
      dim->set_dim_value(std::max<int64_t>(d->AsNumber().Floor(), 0));  // spec §4.6: floor, never negative
    } else {
      std::string text = d->ToString();
      symbols.Register(text, *d);
      dim->set_dim_param(text);
    }
  }
}

GraphInferencer::GraphInferencer(RootState* root, onnx::GraphProto* graph, const GraphInferencer* parent,
                                 std::string tag, std::string path)
    : root_(root), graph_(graph), parent_(parent), tag_(std::move(tag)), path_(std::move(path)) {}

GraphInferencer::~GraphInferencer() = default;

void GraphInferencer::SeedInputs(const std::vector<size_t>& state_inputs) {
  SymbolTable& symbols = root_->symbols;
  const bool apply_merges = root_->options.auto_merge && symbols.HasMerges();
  for (int i = 0; i < graph_->input_size(); ++i) {
    onnx::ValueInfoProto* in = graph_->mutable_input(i);
    bool nonneg = std::find(state_inputs.begin(), state_inputs.end(), static_cast<size_t>(i)) != state_inputs.end();
    if (in->type().has_tensor_type() && in->type().tensor_type().has_shape()) {
      auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int a = 0; a < shape->dim_size(); ++a) {
        auto* d = shape->mutable_dim(a);
        if (!d->has_dim_value() && (!d->has_dim_param() || d->dim_param().empty()))
          d->set_dim_param(in->name() + "_d" + std::to_string(a));  // naming scheme #1
        if (d->has_dim_param() && apply_merges) {
          if (auto target = symbols.MergeTarget(d->dim_param())) {
            if (auto v = target->AsInt()) d->set_dim_value(*v);
            else d->set_dim_param(target->ToString());
          }
        }
        if (d->has_dim_param()) symbols.LookupInput(d->dim_param(), nonneg);
      }
    }
    known_vi_[in->name()] = std::make_unique<onnx::ValueInfoProto>(*in);
  }
  for (const auto& init : graph_->initializer()) {
    initializers_[init.name()] = &init;
    auto vi = std::make_unique<onnx::ValueInfoProto>();
    vi->set_name(init.name());
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(init.data_type());
    auto* s = t->mutable_shape();
    for (int64_t d : init.dims()) s->add_dim()->set_dim_value(d);
    known_vi_[init.name()] = std::move(vi);
  }
}

const onnx::ValueInfoProto* GraphInferencer::FindValueInfo(const std::string& name) const {
  for (const GraphInferencer* g = this; g; g = g->parent_) {
    auto it = g->known_vi_.find(name);
    if (it != g->known_vi_.end()) return it->second.get();
  }
  return nullptr;
}

const TrackedValue* GraphInferencer::FindTracked(const std::string& name) const {
  for (const GraphInferencer* g = this; g; g = g->parent_) {
    auto it = g->tracked_.find(name);
    if (it != g->tracked_.end()) return &it->second;
    auto init = g->initializers_.find(name);
    if (init != g->initializers_.end()) {
      // Initializer values are read lazily, once per pass (small tensors only).
      auto cached = g->initializer_values_.find(name);
      if (cached == g->initializer_values_.end())
        cached = g->initializer_values_.emplace(name, TrackedFromTensor(*init->second, 4096)).first;
      return cached->second ? &*cached->second : nullptr;
    }
    if (g->known_vi_.count(name)) break;  // defined here without a tracked value: shadows outer names
  }
  return nullptr;
}

const onnx::TensorProto* GraphInferencer::FindConstant(const std::string& name) const {
  for (const GraphInferencer* g = this; g; g = g->parent_) {
    auto c = g->constants_.find(name);
    if (c != g->constants_.end()) return c->second.get();
    auto i = g->initializers_.find(name);
    if (i != g->initializers_.end()) return i->second;
    if (g->known_vi_.count(name)) break;
  }
  return nullptr;
}

onnx::ValueInfoProto& GraphInferencer::MutableValueInfo(const std::string& name) {
  auto& slot = known_vi_[name];
  if (!slot) {
    slot = std::make_unique<onnx::ValueInfoProto>();
    slot->set_name(name);
  }
  return *slot;
}

void GraphInferencer::SetConstant(const std::string& name, const onnx::TensorProto& t) {
  constants_[name] = std::make_unique<onnx::TensorProto>(t);
  constants_[name]->set_name(name);
}

Status GraphInferencer::RunPass() {
  // Kahn's algorithm (S2): FIFO, seeded and tie-broken by file order, implicit (outer-scope)
  // inputs of subgraphs included (graph/graph_view.h).
  TopoOptions topo_options;
  topo_options.ready = ReadyOrder::kFifo;
  topo_options.self_read_is_cycle = true;
  const TopoOrder topo = TopologicalOrder(*graph_, topo_options);
  if (topo.self_read) return Diag::Node(graph_->node(topo.cycle_node), "Invalid model with cyclic graph");
  if (!topo.ok()) {
    Diag d = Diag::Msg("Invalid model with cyclic graph");
    d.graph = graph_->name();
    return d;
  }
  for (int idx : topo.order) {
    Status st = InferNode(idx);
    if (!st.ok()) return st.WithGraph(graph_->name());
  }
  WriteBack();
  return Status::OK();
}

Expected<std::unique_ptr<GraphInferencer>> GraphInferencer::InferSubgraph(onnx::GraphProto* body,
                                                                          const std::vector<size_t>& state_inputs) {
  int k = ++root_->subgraph_counter;
  std::string body_path = path_ + (path_.empty() ? "" : "/") + body->name();
  auto child = std::make_unique<GraphInferencer>(root_, body, this, "_g" + std::to_string(k), body_path);
  child->SeedInputs(state_inputs);
  NUPHAR_RETURN_IF_ERROR(child->RunPass());
  return child;
}

Status GraphInferencer::InferNode(size_t node_index) {
  const onnx::NodeProto& node = graph_->node(static_cast<int>(node_index));
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  NodeContext ctx(*this, node, node_index);
  const RootState& root = *root_;

  // (d, moved before ONNX as upstream does) elementwise inputs must agree dim by dim.
  if (IsMergeOp(domain, node.op_type())) {
    bool is_matmul = node.op_type().rfind("MatMul", 0) == 0;
    std::vector<SymShape> shapes;
    size_t rank = 0;
    for (size_t i = 0; i < ctx.NumInputs(); ++i) {
      if (auto s = ctx.InputShape(i)) {
        rank = std::max(rank, s->size());
        shapes.push_back(std::move(*s));
      }
    }
    size_t limit = is_matmul ? (rank >= 2 ? rank - 2 : 0) : rank;
    for (size_t pos = 0; pos < limit; ++pos) {
      std::vector<sym::Expr> dims;
      for (const SymShape& s : shapes) {
        size_t offset = rank - s.size();
        if (pos < offset || !s[pos - offset]) continue;
        const sym::Expr& d = *s[pos - offset];
        if (d.IsNumber() && d.AsNumber() <= sym::Rational(1)) continue;
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
      }
      if (dims.size() > 1) ctx.SuggestMerge(dims);
    }
  }

  // libonnx 1.12 has no schema for an op version above 17 whose signature changed (Split-18,
  // Reduce*-18, Pad-18, Mish, ...): its older schema would infer the wrong shape, so only the
  // handlers run (graph/opset_schema.h).
  const bool libonnx_knows = !domain.empty() || LibOnnxInfersOp(node.op_type(), root_->Opset(""));
  if (libonnx_knows && !SkipsOnnxInference(domain, node.op_type())) RunOnnxInference(node);
  OpHandler handler = FindHandler(domain, node.op_type());
  if (handler) {
    Status st;
    try {
      st = handler(ctx);
    } catch (const sym::SymOverflow&) {
      ctx.Warn("rational overflow; outputs get fresh symbols");
    }
    if (!st.ok()) return st.WithNode(node);
  }
  bool incomplete = false;
  CompleteOutputs(node, node_index, handler != nullptr, &incomplete);
  if (incomplete && root.options.strict)
    return Diag::Node(node, "cannot infer the output shapes (--strict)");
  if (root.options.verbose > 2) {
    std::ostringstream line;
    line << "shape_infer: " << node.op_type() << " '" << node.name() << "':";
    for (size_t j = 0; j < ctx.NumOutputs(); ++j) {
      if (!ctx.HasOutput(j)) continue;
      line << " " << node.output(static_cast<int>(j)) << "[";
      if (auto s = ctx.OutputShape(j)) {
        for (size_t a = 0; a < s->size(); ++a) line << (a ? "," : "") << ((*s)[a] ? (*s)[a]->ToString() : "?");
      } else {
        line << "?";
      }
      line << "]";
    }
    ReportDiagnostic(Severity::kNote, line.str());
  }
  return Status::OK();
}

// After ONNX and the handler: unknown dims get fresh symbols (spec 2.3 e and S3). A handler op
// that still has unknown dims (or an untyped output) makes the inference incomplete, except when
// auto_merge recorded merges this pass (the next pass resolves them).
void GraphInferencer::CompleteOutputs(const onnx::NodeProto& node, size_t node_index, bool has_handler,
                                      bool* incomplete) {
  NodeContext ctx(*this, node, node_index);
  RootState& root = *root_;
  for (size_t j = 0; j < ctx.NumOutputs(); ++j) {
    if (!ctx.HasOutput(j)) continue;
    const std::string& name = node.output(static_cast<int>(j));
    onnx::ValueInfoProto& vi = MutableValueInfo(name);
    if (produced_set_.insert(name).second) produced_.push_back(name);
    const onnx::TypeProto& type = vi.type();
    if (type.has_sequence_type() || type.has_map_type() || type.has_optional_type() ||
        type.has_sparse_tensor_type())
      continue;
    int32_t elem = type.has_tensor_type() ? type.tensor_type().elem_type() : 0;
    std::optional<SymShape> shape = ctx.OutputShape(j);
    bool unknown_dims = !shape || std::any_of(shape->begin(), shape->end(), [](const SymDim& d) { return !d; });
    if (elem != 0 && !unknown_dims) continue;

    bool lost = has_handler;
    if (!shape || elem == 0) {
      // No rank (or no type): the "unknown op" path, guessing from input 0 when asked.
      if (root.options.guess_output_rank && ctx.HasInput(0)) {
        if (!shape) {  // input 0's rank, all-fresh symbols (naming scheme #2)
          if (auto in = ctx.InputShape(0)) shape = SymShape(in->size());
        }
        if (elem == 0) elem = ctx.InputElemType(0);
        lost = false;
      }
    }
    if (!shape || elem == 0) {
      *incomplete = true;
      root.unknown_values.push_back(path_.empty() ? name : path_ + "/" + name);
      if (root.first_incomplete_node.empty())
        root.first_incomplete_node = node.name() + " (" + node.op_type() + ")";
      continue;
    }
    for (size_t a = 0; a < shape->size(); ++a)
      if (!(*shape)[a]) (*shape)[a] = ctx.NewSymbol(j, a);
    ctx.SetOutput(j, elem, shape);
    if (lost && !(root.options.auto_merge && root.merges_changed)) {
      *incomplete = true;
      root.unknown_values.push_back(path_.empty() ? name : path_ + "/" + name);
      if (root.first_incomplete_node.empty())
        root.first_incomplete_node = node.name() + " (" + node.op_type() + ")";
      if (root.options.verbose > 0)
        ReportDiagnostic(Severity::kWarning, "shape_infer: warning: incomplete shape at " + node.op_type() + " '" +
                                                 node.name() + "' output '" + name + "'; fresh symbols used");
    }
  }
}

void GraphInferencer::WriteBack() {
  std::vector<onnx::ValueInfoProto> kept;
  if (root_->options.keep_value_info) {
    std::unordered_set<std::string> produced(produced_.begin(), produced_.end());
    for (const auto& vi : graph_->value_info())
      if (!produced.count(vi.name())) kept.push_back(vi);
  }
  graph_->clear_value_info();
  for (auto& vi : kept) *graph_->add_value_info() = std::move(vi);
  for (const std::string& name : produced_) {
    auto it = known_vi_.find(name);
    if (it != known_vi_.end() && it->second->has_type()) *graph_->add_value_info() = *it->second;
  }
  for (int i = 0; i < graph_->output_size(); ++i) {
    onnx::ValueInfoProto* out = graph_->mutable_output(i);
    const onnx::ValueInfoProto* vi = FindValueInfo(out->name());
    if (vi && vi->has_type()) *out->mutable_type() = vi->type();
  }
}

}  // namespace nuphar::shape_infer
