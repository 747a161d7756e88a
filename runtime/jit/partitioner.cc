// JIT partitioning of one graph level (partitioner.h).
//
// Level 1 forms groups: candidates (nodes the elementwise generator takes, with float values and
// classifiable shapes) are merged with candidate producers of the same output shape in
// topological order; a merge is refused when a path leaves the merged group and comes back
// (that would make the partition node depend on itself). Level 2 (the kernel IR of each group)
// happens in the kernel factory.
#include "runtime/jit/partitioner.h"

#include <onnx/onnx_pb.h>

#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "runtime/core/graph_plan.h"
#include "runtime/core/settings.h"
#include "runtime/jit/elementwise_ir.h"

namespace nuphar::jit {
namespace {

bool IsGeneratedOp(const std::string& op) {
  static const std::unordered_set<std::string> ops = {
      "Add",  "Sub",  "Mul",   "Div",   "Max",        "Min",       "Sum",         "Neg",  "Abs",      "Relu", "Sqrt",
      "Reciprocal", "Floor", "Ceil", "Exp", "Log", "LeakyRelu", "HardSigmoid", "Clip", "Identity", "Sigmoid", "Tanh",
      "Split"};
  return ops.count(op) > 0;
}

onnx::TensorShapeProto ToShapeProto(const ModelContext::DeclaredShape& s) {
  onnx::TensorShapeProto p;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    auto* d = p.add_dim();
    if (s.dims[i] >= 0) d->set_dim_value(s.dims[i]);
    else if (!s.dim_params[i].empty()) d->set_dim_param(s.dim_params[i]);
  }
  return p;
}

// Names every subgraph of `node` reads from enclosing scopes.
void CollectSubgraphReads(const onnx::GraphProto& g, std::unordered_set<std::string>* reads) {
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) reads->insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectSubgraphReads(a.g(), reads);
      for (const auto& sg : a.graphs()) CollectSubgraphReads(sg, reads);
    }
  }
  for (const auto& o : g.output()) reads->insert(o.name());
}

class Partitioner {
 public:
  Partitioner(onnx::GraphProto* graph, const RewriteContext& ctx) : g_(*graph), ctx_(ctx), model_(ctx.model) {}

  int Run() {
    // Scans (opset 9+) become JitScan: their kernel compiles the whole loop when the body allows.
    for (auto& node : *g_.mutable_node()) {
      if (node.op_type() != "Scan" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      if (model_.OpsetFor("") < 9) continue;
      node.set_op_type(kJitScanOp);
      node.set_domain(kFusedDomain);
      model_.counters["jit_scans"] += 1;
    }
    const int n = g_.node_size();
    for (int i = 0; i < n; ++i)
      for (const auto& o : g_.node(i).output())
        if (!o.empty()) producer_[o] = i;
    consumers_.assign(static_cast<size_t>(n), {});
    for (int i = 0; i < n; ++i)
      for (const auto& in : g_.node(i).input())
        if (auto it = producer_.find(in); it != producer_.end()) consumers_[static_cast<size_t>(it->second)].push_back(i);
    group_.resize(static_cast<size_t>(n));
    std::iota(group_.begin(), group_.end(), 0);
    candidate_.assign(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      std::string why;
      candidate_[static_cast<size_t>(i)] = Accepts(g_.node(i), &why);
      if (!candidate_[static_cast<size_t>(i)]) refusals_.push_back(Describe(g_.node(i)) + ": " + why);
    }
    for (int i = 0; i < n; ++i) {
      if (!candidate_[static_cast<size_t>(i)]) continue;
      for (const auto& in : g_.node(i).input()) {
        auto it = producer_.find(in);
        if (it == producer_.end() || !candidate_[static_cast<size_t>(it->second)]) continue;
        TryMerge(Find(it->second), Find(i));
      }
    }
    return Emit();
  }

 private:
  static std::string Describe(const onnx::NodeProto& n) {
    return "'" + (n.name().empty() ? n.output_size() ? n.output(0) : std::string("?") : n.name()) + "' (" +
           n.op_type() + ")";
  }

  const ModelContext::DeclaredShape* ShapeOf(const std::string& name) const {
    auto it = model_.value_shapes.find(name);
    return it == model_.value_shapes.end() ? nullptr : &it->second;
  }
  bool IsFloat(const std::string& name) const {
    if (const Tensor* c = ctx_.constants(name)) return c->dtype() == DType::kFloat;
    auto it = model_.value_types.find(name);
    return it != model_.value_types.end() && it->second == DType::kFloat;
  }

  // Split along the last axis into equal parts: its outputs become views of its input.
  bool AcceptsSplit(const onnx::NodeProto& n, std::string* why) const {
    if (model_.OpsetFor("") < 2) return *why = "Split-1", false;
    const std::string& in = n.input(0);
    if (!IsFloat(in)) return *why = "input '" + in + "' is not known to be float", false;
    const auto* in_shape = ShapeOf(in);
    if (!in_shape) return *why = "input '" + in + "' has no declared shape", false;
    int64_t axis = 0;
    std::vector<int64_t> split;
    for (const auto& a : n.attribute()) {
      if (a.name() == "axis") axis = a.i();
      if (a.name() == "split") split.assign(a.ints().begin(), a.ints().end());
    }
    const int64_t rank = static_cast<int64_t>(in_shape->dims.size());
    if (axis != -1 && axis != rank - 1) return *why = "not a split along the last axis", false;
    if (n.input_size() > 1 && !n.input(1).empty()) {
      const Tensor* c = ctx_.constants(n.input(1));
      if (!c || c->dtype() != DType::kInt64) return *why = "split sizes are not a constant", false;
      split.assign(c->data<int64_t>(), c->data<int64_t>() + c->size());
    }
    for (int64_t v : split)
      if (v != split.front()) return *why = "unequal split sizes", false;
    const auto* out_shape = ShapeOf(n.output(0));
    if (!out_shape) return *why = "output '" + n.output(0) + "' has no declared shape", false;
    const onnx::TensorShapeProto part = ToShapeProto(*out_shape);
    for (const auto& o : n.output()) {
      const auto* s = ShapeOf(o);
      if (o.empty() || !IsFloat(o) || !s || !SameDeclaredShape(ToShapeProto(*s), part))
        return *why = "outputs of different or unknown shapes", false;
    }
    int64_t parts = 0;
    if (!IsSplitInput(ToShapeProto(*in_shape), part, &parts) || parts != n.output_size())
      return *why = "the outputs do not tile the input", false;
    return true;
  }

  bool Accepts(const onnx::NodeProto& n, std::string* why) const {
    if (!n.domain().empty() && n.domain() != "ai.onnx") return *why = "not an ONNX op", false;
    if (n.op_type() == "Split") return AcceptsSplit(n, why);
    if (!IsGeneratedOp(n.op_type())) return *why = "no code generator for " + n.op_type(), false;
    if (model_.OpsetFor("") < 6) return *why = "opset below 6", false;
    if (n.output_size() != 1 || n.output(0).empty()) return *why = "not one output", false;
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) return *why = "has a subgraph", false;
    const std::string& out = n.output(0);
    if (!IsFloat(out)) return *why = "output '" + out + "' is not known to be float", false;
    const auto* out_shape = ShapeOf(out);
    if (!out_shape) return *why = "output '" + out + "' has no declared shape", false;
    const onnx::TensorShapeProto space = ToShapeProto(*out_shape);
    const bool clip = n.op_type() == "Clip";
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string& in = n.input(i);
      if (in.empty()) continue;
      if (clip && i > 0) {
        const Tensor* c = ctx_.constants(in);
        if (!c || c->dtype() != DType::kFloat || c->size() != 1) return *why = "Clip bounds are not scalar constants", false;
        continue;
      }
      if (!IsFloat(in)) return *why = "input '" + in + "' is not known to be float", false;
      onnx::TensorShapeProto in_shape;
      if (const Tensor* c = ctx_.constants(in)) {
        for (int64_t d : c->shape()) in_shape.add_dim()->set_dim_value(d);
      } else if (const auto* s = ShapeOf(in)) {
        in_shape = ToShapeProto(*s);
      } else {
        return *why = "input '" + in + "' has no declared shape", false;
      }
      Access access;
      std::string reason;
      if (!ClassifyAccess(in_shape, space, &access, &reason)) return *why = "input '" + in + "': " + reason, false;
    }
    return true;
  }

  int Find(int i) {
    while (group_[static_cast<size_t>(i)] != i) i = group_[static_cast<size_t>(i)] = group_[static_cast<size_t>(group_[static_cast<size_t>(i)])];
    return i;
  }

  // Merges the groups of roots a and b when they have the same shape and no path leaves the
  // union and re-enters it.
  void TryMerge(int a, int b) {
    if (a == b) return;
    const auto* sa = ShapeOf(g_.node(a).output(0));
    const auto* sb = ShapeOf(g_.node(b).output(0));
    if (!sa || !sb || !SameDeclaredShape(ToShapeProto(*sa), ToShapeProto(*sb))) return;
    const int n = g_.node_size();
    std::vector<char> inside(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      const int r = candidate_[static_cast<size_t>(i)] ? Find(i) : -1;
      inside[static_cast<size_t>(i)] = r == a || r == b;
    }
    // From every member, walk through outside nodes only; reaching a member again is a cycle.
    std::vector<char> seen(static_cast<size_t>(n), 0);
    std::vector<int> stack;
    for (int i = 0; i < n; ++i)
      if (inside[static_cast<size_t>(i)])
        for (int c : consumers_[static_cast<size_t>(i)])
          if (!inside[static_cast<size_t>(c)] && !seen[static_cast<size_t>(c)]) {
            seen[static_cast<size_t>(c)] = 1;
            stack.push_back(c);
          }
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      for (int c : consumers_[static_cast<size_t>(k)]) {
        if (inside[static_cast<size_t>(c)]) return;  // leaves and re-enters: refuse
        if (!seen[static_cast<size_t>(c)]) {
          seen[static_cast<size_t>(c)] = 1;
          stack.push_back(c);
        }
      }
    }
    group_[static_cast<size_t>(a)] = b;
  }

  onnx::ValueInfoProto ValueInfo(const std::string& name) const {
    onnx::ValueInfoProto vi;
    vi.set_name(name);
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    if (const Tensor* c = ctx_.constants(name)) {
      auto* shape = tt->mutable_shape();
      for (int64_t d : c->shape()) shape->add_dim()->set_dim_value(d);
    } else if (const auto* s = ShapeOf(name)) {
      *tt->mutable_shape() = ToShapeProto(*s);
    }
    return vi;
  }

  int Emit() {
    const int n = g_.node_size();
    std::unordered_map<int, std::vector<int>> members;
    for (int i = 0; i < n; ++i)
      if (candidate_[static_cast<size_t>(i)]) members[Find(i)].push_back(i);
    if (members.empty()) return Report(0, 0);
    // Values read outside a group: by other nodes, by subgraphs, as graph outputs.
    std::unordered_set<std::string> read_by_subgraphs, graph_outputs;
    for (const auto& node : g_.node())
      for (const auto& a : node.attribute()) {
        if (a.has_g()) CollectSubgraphReads(a.g(), &read_by_subgraphs);
        for (const auto& sg : a.graphs()) CollectSubgraphReads(sg, &read_by_subgraphs);
      }
    for (const auto& o : g_.output()) graph_outputs.insert(o.name());

    std::vector<char> taken(static_cast<size_t>(n), 0);
    std::vector<onnx::NodeProto> partitions;
    int taken_nodes = 0;
    const int64_t first_index = model_.counters.count("jit_partitions") ? model_.counters.at("jit_partitions") : 0;
    for (auto& [root, nodes] : members) {
      std::sort(nodes.begin(), nodes.end());
      std::unordered_set<int> in_group(nodes.begin(), nodes.end());
      onnx::NodeProto part;
      part.set_op_type(kJitKernelOp);
      part.set_domain(kFusedDomain);
      auto* attr = part.add_attribute();
      attr->set_name("body");
      attr->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto* body = attr->mutable_g();
      const std::string name = std::string(kPartitionPrefix) + std::to_string(first_index + partitions.size());
      body->set_name(name);
      part.set_name(name);
      std::unordered_set<std::string> produced, inputs_seen;
      for (int i : nodes)
        for (const auto& o : g_.node(i).output()) produced.insert(o);
      for (int i : nodes) {
        const onnx::NodeProto& node = g_.node(i);
        *body->add_node() = node;
        for (int k = 0; k < node.input_size(); ++k) {
          const std::string& in = node.input(k);
          if (in.empty() || produced.count(in) || !inputs_seen.insert(in).second) continue;
          if (node.op_type() == "Clip" && k > 0) {  // bounds become the body's scalar constants
            auto* t = body->add_initializer();
            t->set_name(in);
            t->set_data_type(onnx::TensorProto::FLOAT);
            t->add_float_data(ctx_.constants(in)->data<float>()[0]);
            continue;
          }
          part.add_input(in);
          *body->add_input() = ValueInfo(in);
        }
      }
      for (int i : nodes) {
        for (const std::string& out : g_.node(i).output()) {
          bool external = graph_outputs.count(out) || read_by_subgraphs.count(out);
          for (int c : consumers_[static_cast<size_t>(i)]) {
            if (in_group.count(c)) continue;
            for (const auto& in : g_.node(c).input()) external |= in == out;
          }
          if (external) {
            part.add_output(out);
            *body->add_output() = ValueInfo(out);
          } else {
            *body->add_value_info() = ValueInfo(out);
          }
        }
      }
      if (part.output_size() == 0) continue;  // dead code: left for the executor's own handling
      for (int i : nodes) taken[static_cast<size_t>(i)] = 1;
      taken_nodes += static_cast<int>(nodes.size());
      partitions.push_back(std::move(part));
    }
    onnx::GraphProto rewritten_nodes;
    for (int i = 0; i < n; ++i)
      if (!taken[static_cast<size_t>(i)]) *rewritten_nodes.add_node() = g_.node(i);
    for (auto& p : partitions) *rewritten_nodes.add_node() = std::move(p);
    const int count = static_cast<int>(partitions.size());
    g_.mutable_node()->Swap(rewritten_nodes.mutable_node());
    return Report(count, taken_nodes);
  }

  int Report(int partitions, int taken_nodes) {
    model_.counters["jit_partitions"] += partitions;
    model_.counters["jit_nodes"] += taken_nodes;
    if (model_.settings && model_.settings->Has("nuphar_dump_partition")) {
      std::fprintf(stderr, "nuphar_dump_partition: graph '%s': %d partition(s) of %d node(s); %zu node(s) left to the reference executor\n",
                   g_.name().c_str(), partitions, taken_nodes, refusals_.size());
      for (const auto& node : g_.node()) {
        if (node.op_type() != kJitKernelOp) continue;
        std::string ops;
        for (const auto& b : node.attribute(0).g().node()) ops += (ops.empty() ? "" : ", ") + b.op_type();
        std::fprintf(stderr, "  %s: %d input(s), %d output(s): %s\n", node.name().c_str(), node.input_size(),
                     node.output_size(), ops.c_str());
      }
      for (const auto& r : refusals_) std::fprintf(stderr, "  reference: %s\n", r.c_str());
    }
    return partitions;
  }

  onnx::GraphProto& g_;
  const RewriteContext& ctx_;
  const ModelContext& model_;
  std::unordered_map<std::string, int> producer_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> group_;
  std::vector<char> candidate_;
  std::vector<std::string> refusals_;
};

}  // namespace

GraphRewrite JitPartitionRewrite() {
  GraphRewrite r;
  r.name = "jit_partitioner";
  r.may_apply = [](const onnx::GraphProto& g, const ModelContext&) {
    if (g.name().rfind(kPartitionPrefix, 0) == 0) return false;
    for (const auto& n : g.node())
      if (IsGeneratedOp(n.op_type()) || n.op_type() == "Scan") return true;
    return false;
  };
  r.apply = [](onnx::GraphProto* g, const RewriteContext& ctx) -> Expected<int> {
    return Partitioner(g, ctx).Run();
  };
  return r;
}

}  // namespace nuphar::jit
