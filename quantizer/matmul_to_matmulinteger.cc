// The quantization pass: MatMul with a constant rank-2 weight -> MatMulInteger (spec §3.3-§3.8).
//
// Before:  Y = MatMul(X, W)                       W: float32 [K, N] initializer (any enclosing graph)
// After:   Q_X, scale_X, bias_X, ΣQ_X = dynamic per-row quantization of X   (dynamic_quant.h)
//          Q_Y = MatMulInteger(Q_X, W_qparam)      (com.microsoft MatMulInteger16 for 16 bits)
//          Y   = Sum(o3, o2, o1, o0)              dequantization with W_step/W_base/W_qparam_rowsum
//          W_step, W_qparam[, W_base, W_qparam_rowsum] in the main graph; W removed once unused
// Refused (left float, one note each under --verbose): W not an initializer, not rank 2, not
//          float32, non-finite; a consumer of W that is not MatMul/Gemm input B; X known not float;
//          MatMuls outside Scan/Loop bodies under --only_for_scan.
// Errors:  one weight used with two different W-configs or symmetric flags.
#include "quantizer/matmul_quantizer.h"

#include <cstdio>

#include "graph/tensor_data.h"
#include "quantizer/opset_upgrade.h"

namespace nuphar::quant {
namespace {

void CollectUses(const onnx::GraphProto& g,
                 std::unordered_map<std::string, std::vector<std::pair<std::string, int>>>* uses) {
  for (const auto& node : g.node()) {
    for (int i = 0; i < node.input_size(); ++i) (*uses)[node.input(i)].emplace_back(node.op_type(), i);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectUses(a.g(), uses);
      for (const auto& sub : a.graphs()) CollectUses(sub, uses);
    }
  }
}

void CollectReads(const onnx::GraphProto& g, std::unordered_set<std::string>* reads) {
  for (const auto& o : g.output()) reads->insert(o.name());
  for (const auto& node : g.node()) {
    for (const auto& in : node.input()) reads->insert(in);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectReads(a.g(), reads);
      for (const auto& sub : a.graphs()) CollectReads(sub, reads);
    }
  }
}

/// Elem type of `name` from value_info / inputs / outputs along the scope chain, 0 if unknown.
int32_t KnownElemType(const GraphScope* scope, const std::string& name) {
  for (; scope; scope = scope->parent) {
    const onnx::GraphProto& g = *scope->graph;
    for (const auto* list : {&g.value_info(), &g.input(), &g.output()}) {
      for (const auto& vi : *list) {
        if (vi.name() == name && vi.type().has_tensor_type()) return vi.type().tensor_type().elem_type();
      }
    }
    if (scope->runtime_values.count(name)) return 0;
  }
  return 0;
}

std::string InputShareKey(const std::string& x, const NodeQuantConfig& cfg) {
  // The original's key: "<X>_<Symmetric>_QuantizeBit:<b>|QuantizationType:<..>|ReservedBit:<r>".
  return x + "_" + (cfg.symmetric ? "1" : "0") + "_QuantizeBit:" + std::to_string(cfg.x.type_bits) +
         "|QuantizationType:" + (cfg.x.is_signed ? "Signed" : "Unsigned") +
         "|ReservedBit:" + std::to_string(cfg.x.reserved_bits);
}

}  // namespace

std::string GraphKey(const onnx::GraphProto* graph, const std::string& name) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p|", static_cast<const void*>(graph));
  return buf + name;
}

MatMulQuantizer::MatMulQuantizer(onnx::ModelProto* model, const QuantizeOptions& options, int64_t opset,
                                 bool upgrade_to_opset10)
    : model_(model), options_(options), upgrade_to_opset10_(upgrade_to_opset10), names_(*model) {
  forms_.opset = opset;
  for (size_t i = 0; i < options.node_configs.size(); ++i) node_config_index_[options.node_configs[i].first] = i;
  std::unordered_map<std::string, std::vector<std::pair<std::string, int>>> uses;
  CollectUses(model->graph(), &uses);
  for (auto& [name, list] : uses) {
    for (auto& [op, index] : list) uses_[name].push_back(Use{op, index});
  }
}

Expected<QuantizeReport> MatMulQuantizer::Run() {
  GraphScope main;
  main.graph = model_->mutable_graph();
  main.path = "main";
  NUPHAR_RETURN_IF_ERROR(WalkGraph(main));
  RemoveUnusedWeights();
  return std::move(report_);
}

Status MatMulQuantizer::WalkGraph(GraphScope& scope) {
  onnx::GraphProto* g = scope.graph;
  for (const auto& in : g->input()) scope.runtime_values.insert(in.name());
  for (const auto& node : g->node()) {
    for (const auto& out : node.output()) scope.runtime_values.insert(out);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> old_nodes;
  old_nodes.Swap(g->mutable_node());
  NodeBuilder emit(g, g->mutable_node(), &names_, forms_.opset);
  InputTable input_table;  // one per graph, as in the original
  InputTable* inputs = options_.share_input_quantization ? &input_table : nullptr;

  for (onnx::NodeProto& node : old_nodes) {
    if (upgrade_to_opset10_ && UpgradeNodeToOpset10(node, emit)) {
      report_.messages.push_back("Converted " + node.op_type() + " '" + node.name() + "' in " + scope.path +
                                 " to its opset-10 form");
      continue;
    }
    if (node.op_type() == "MatMul" || node.op_type() == "Gemm") {
      if (options_.only_for_scan && !scope.in_loop_body) {
        Skip(node, scope, "outside Scan/Loop bodies (--only_for_scan)");
      } else {
        auto replaced = node.op_type() == "MatMul" ? QuantizeMatMul(node, scope, emit, inputs)
                                                   : QuantizeGemm(node, scope, emit, inputs);
        if (!replaced.ok()) return replaced.status().WithGraph(scope.path);
        if (*replaced) continue;
      }
    }
    onnx::NodeProto* kept = g->add_node();
    kept->Swap(&node);
    for (auto& attr : *kept->mutable_attribute()) {
      const bool is_body = (kept->op_type() == "Scan" || kept->op_type() == "Loop") && attr.name() == "body";
      auto walk = [&](onnx::GraphProto* sub) -> Status {
        GraphScope child;
        child.graph = sub;
        child.parent = &scope;
        child.path = scope.path + "/" + kept->name() + "." + attr.name();
        child.in_loop_body = scope.in_loop_body || is_body;
        return WalkGraph(child);
      };
      if (attr.has_g()) NUPHAR_RETURN_IF_ERROR(walk(attr.mutable_g()));
      for (auto& sub : *attr.mutable_graphs()) NUPHAR_RETURN_IF_ERROR(walk(&sub));
    }
  }
  return Status::OK();
}

WeightRef MatMulQuantizer::FindInitializer(const GraphScope& scope, const std::string& name) const {
  for (const GraphScope* s = &scope; s; s = s->parent) {
    for (const auto& t : s->graph->initializer()) {
      if (t.name() == name) return WeightRef{s->graph, &t};
    }
    // A graph input or node output of this graph shadows outer initializers.
    if (s->runtime_values.count(name)) return {};
  }
  return {};
}

std::string MatMulQuantizer::ConsumerProblem(const std::string& weight) const {
  auto it = uses_.find(weight);
  if (it == uses_.end()) return "";
  for (const Use& use : it->second) {
    if ((use.op_type != "MatMul" && use.op_type != "Gemm") || use.input_index != 1) {
      return "weight '" + weight + "' is also read by a " + use.op_type + " (input " +
             std::to_string(use.input_index) + ")";
    }
  }
  return "";
}

Expected<NodeQuantConfig> MatMulQuantizer::ConfigFor(const std::string& output) {
  auto it = node_config_index_.find(output);
  if (it != node_config_index_.end()) return options_.node_configs[it->second].second;
  if (!options_.node_configs.empty()) {
    report_.messages.push_back("Warning: qcfg is not found for node with output: " + output +
                               ", fall back to default qcfg.");
  }
  NUPHAR_RETURN_IF_ERROR(ValidateNodeConfig(options_.default_config, "default qcfg"));
  return options_.default_config;
}

Expected<const ConvertedWeight*> MatMulQuantizer::ConvertWeight(const WeightRef& weight, bool transposed,
                                                                const NodeQuantConfig& cfg, std::string* skip) {
  const onnx::TensorProto& t = *weight.tensor;
  const std::string key = GraphKey(weight.graph, t.name()) + (transposed ? "|T" : "");
  if (auto it = converted_.find(key); it != converted_.end()) {
    if (!(it->second.w_cfg == cfg.w) || it->second.symmetric != cfg.symmetric) {
      return Diag::Msg("weight '" + t.name() +
                       "' is shared by MatMuls with different quantization configs (W config or Symmetric differ)");
    }
    return &it->second;
  }
  if (t.dims_size() != 2) {
    *skip = "weight '" + t.name() + "' has rank " + std::to_string(t.dims_size()) + ", not 2";
    return nullptr;
  }
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    *skip = "weight '" + t.name() + "' is " + DTypeName(static_cast<DType>(t.data_type())) + ", not float32";
    return nullptr;
  }
  int64_t k = t.dims(0), n = t.dims(1);
  if (k == 0 || n == 0) {
    *skip = "weight '" + t.name() + "' is empty";
    return nullptr;
  }
  // Read raw_data in place (the common case, and the big one); typed fields are copied.
  std::vector<float> copy;
  const float* data = nullptr;
  if (t.has_raw_data() && t.raw_data().size() == static_cast<size_t>(k * n) * sizeof(float)) {
    data = reinterpret_cast<const float*>(t.raw_data().data());
  } else {
    auto values = ReadTensor<float>(t);
    if (!values.ok()) return values.status();
    copy = std::move(*values);
    data = copy.data();
  }
  if (transposed) {
    std::vector<float> tr(static_cast<size_t>(k * n));
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < n; ++c) tr[c * k + r] = data[r * n + c];
    }
    copy.swap(tr);
    data = copy.data();
    std::swap(k, n);
  }
  auto qw = QuantizeWeightPerColumn(data, k, n, cfg.w, cfg.symmetric);
  if (!qw.ok()) {
    *skip = "weight '" + t.name() + "': " + qw.diag().reason;
    return nullptr;
  }
  ConvertedWeight cw;
  cw.w_cfg = cfg.w;
  cw.symmetric = cfg.symmetric;
  cw.n = n;
  cw.names.k = k;
  if (options_.compute_weight_error) cw.error = MeasureWeightError(data, *qw, cfg.w);

  // Main-graph initializers, in the original's order: step, qparam[, base, rowsum].
  const std::string base_name = transposed ? t.name() + "_trans" : t.name();
  onnx::GraphProto* main = model_->mutable_graph();
  cw.names.step = names_.Fixed(base_name + "_step");
  *main->add_initializer() = MakeTensor<float>(cw.names.step, {n}, qw->step);
  cw.names.qparam = names_.Fixed(base_name + "_qparam");
  onnx::TensorProto* qparam = main->add_initializer();  // filled by move: the biggest tensor
  qparam->set_name(cw.names.qparam);
  qparam->set_data_type(StorageDataType(cfg.w));
  qparam->add_dims(k);
  qparam->add_dims(n);
  qparam->set_raw_data(std::move(qw->q_bytes));
  if (!cfg.symmetric) {
    cw.names.base = names_.Fixed(base_name + "_base");
    *main->add_initializer() = MakeTensor<float>(cw.names.base, {n}, qw->base);
    cw.names.rowsum = names_.Fixed(base_name + "_qparam_rowsum");
    *main->add_initializer() = MakeTensor<float>(cw.names.rowsum, {n}, qw->rowsum);
  }
  removable_.emplace_back(weight.graph, t.name());
  return &converted_.emplace(key, std::move(cw)).first->second;
}

void MatMulQuantizer::EmitQuantized(NodeBuilder& emit, const std::string& prefix, const std::string& x,
                                    const ConvertedWeight& w, const NodeQuantConfig& cfg, const std::string& y,
                                    InputTable* inputs) {
  emit.set_prefix(prefix);
  const std::string share_key = InputShareKey(x, cfg);
  QuantizedInput qx;
  if (inputs && inputs->count(share_key)) {
    qx = inputs->at(share_key);
  } else {
    qx = EmitInputQuantization(emit, x, cfg, forms_, options_.guard_zero_delta);
    if (inputs) (*inputs)[share_key] = qx;
  }
  EmitIntegerMatMul(emit, qx, w.names, cfg, y);
}

void MatMulQuantizer::RecordQuantized(const onnx::NodeProto& node, const GraphScope& scope, const std::string& weight,
                                      const ConvertedWeight& w, const NodeQuantConfig& cfg, bool reused) {
  QuantizedMatMul q;
  q.graph = scope.path;
  q.node = node.name();
  q.op = node.op_type();
  q.output = node.output(0);
  q.weight = weight;
  q.k = w.names.k;
  q.n = w.n;
  q.config = cfg;
  q.weight_reused = reused;
  q.weight_max_abs_error = w.error.max_abs_error;
  q.weight_max_abs = w.error.max_abs;
  q.weight_rel_l2_error = w.error.rel_l2_error;
  report_.quantized.push_back(std::move(q));
  report_.used_configs.emplace_back(node.output(0), cfg);
}

void MatMulQuantizer::Skip(const onnx::NodeProto& node, const GraphScope& scope, const std::string& reason) {
  report_.skipped.push_back(scope.path + ": " + node.op_type() + " '" + node.name() + "' left float: " + reason);
}

Expected<bool> MatMulQuantizer::QuantizeMatMul(const onnx::NodeProto& node, const GraphScope& scope,
                                               NodeBuilder& emit, InputTable* inputs) {
  if (node.input_size() != 2 || node.output_size() != 1) {
    Skip(node, scope, "unexpected number of inputs or outputs");
    return false;
  }
  const std::string& w_name = node.input(1);
  if (std::string problem = ConsumerProblem(w_name); !problem.empty()) {
    Skip(node, scope, problem);
    return false;
  }
  auto cfg = ConfigFor(node.output(0));
  if (!cfg.ok()) return cfg.status().WithNode(node);
  const WeightRef weight = FindInitializer(scope, w_name);
  if (!weight.tensor) {
    Skip(node, scope, "weight '" + w_name + "' is not an initializer");
    return false;
  }
  if (const int32_t x_type = KnownElemType(&scope, node.input(0)); x_type != 0 && x_type != onnx::TensorProto::FLOAT) {
    Skip(node, scope, "input '" + node.input(0) + "' is not float32");
    return false;
  }
  const bool reused = converted_.count(GraphKey(weight.graph, w_name)) != 0;
  std::string skip;
  auto converted = ConvertWeight(weight, /*transposed=*/false, *cfg, &skip);
  if (!converted.ok()) return converted.status().WithNode(node);
  if (!*converted) {
    Skip(node, scope, skip);
    return false;
  }
  EmitQuantized(emit, node.name(), node.input(0), **converted, *cfg, node.output(0), inputs);
  RecordQuantized(node, scope, w_name, **converted, *cfg, reused);
  return true;
}

void MatMulQuantizer::RemoveUnusedWeights() {
  std::unordered_set<std::string> reads;
  CollectReads(model_->graph(), &reads);
  for (const auto& [graph, name] : removable_) {
    if (reads.count(name)) continue;  // a float consumer remains (e.g. --only_for_scan)
    auto* inits = graph->mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i) {
      if (inits->Get(i).name() == name) inits->DeleteSubrange(i, 1);
    }
    auto* ins = graph->mutable_input();
    for (int i = ins->size() - 1; i >= 0; --i) {
      if (ins->Get(i).name() == name) ins->DeleteSubrange(i, 1);
    }
  }
}

}  // namespace nuphar::quant
