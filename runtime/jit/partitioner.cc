// JIT partitioning of one graph level (partitioner.h).
//
// Level 1 forms groups: candidates (nodes the elementwise generator takes, with float values and
// classifiable shapes) are merged with candidate producers of the same output shape in
// topological order; a merge is refused when a path leaves the merged group and comes back
// (that would make the partition node depend on itself). Level 2 (the kernel IR of each group)
// happens in the kernel factory.
#include "runtime/jit/partitioner.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "graph/diagnostics.h"
#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/split_sizes.h"
#include "runtime/core/graph_plan.h"
#include "runtime/core/settings.h"
#include "runtime/jit/jit.h"
#include "runtime/jit/datamove_ir.h"
#include "runtime/jit/elementwise_ir.h"
#include "runtime/jit/if_ir.h"
#include "runtime/jit/jit_if_kernel.h"
#include "runtime/jit/jit_datamove_kernel.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/jit/jit_reduce_kernel.h"
#include "runtime/jit/product_ir.h"
#include "runtime/jit/reduce_ir.h"

namespace nuphar::jit {
namespace {

onnx::TensorShapeProto ToShapeProto(const ModelContext::DeclaredShape& s) {
  onnx::TensorShapeProto p;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    auto* d = p.add_dim();
    if (s.dims[i] >= 0) d->set_dim_value(s.dims[i]);
    else if (!s.dim_params[i].empty()) d->set_dim_param(s.dim_params[i]);
  }
  return p;
}

class Partitioner {
 public:
  Partitioner(onnx::GraphProto* graph, const GraphRewriteContext& ctx) : g_(*graph), ctx_(ctx), model_(ctx.model) {}

  int Run() {
    // Scans (opset 9+) become JitScan: their kernel compiles the whole loop when the body allows.
    for (auto& node : *g_.mutable_node()) {
      if (node.op_type() != "Scan" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      if (model_.OpsetFor("") < 9) continue;
      node.set_op_type(kJitScanOp);
      node.set_domain(kFusedDomain);
      model_.counters["jit_scans"] += 1;
    }
    // Ifs whose branches are only views of the values they read become JitIf (if_ir.h).
    for (auto& node : *g_.mutable_node())
      if (node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx")) TakeViewIf(node);
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
    datamove_.assign(static_cast<size_t>(n), 0);
    FindFoldedValues();
    solo_.assign(static_cast<size_t>(n), 0);
    product_.assign(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      std::string why;
      const onnx::NodeProto& node = g_.node(i);
      if (node.op_type() == "If" || node.op_type() == kJitIfOp) continue;  // TakeViewIf decided
      if (node.op_type() == "Split" && (node.domain().empty() || node.domain() == "ai.onnx")) {
        std::vector<int64_t> sizes;
        if (AcceptsViewSplit(node, &sizes, &why)) {
          view_splits_[i] = std::move(sizes);
          continue;
        }
      } else if (HasReduceGenerator(node.op_type()) && (node.domain().empty() || node.domain() == "ai.onnx")) {
        // A reduction is a partition of its own (its kernel is the reduction generator's).
        candidate_[static_cast<size_t>(i)] = solo_[static_cast<size_t>(i)] = AcceptsReduce(node, &why);
        if (candidate_[static_cast<size_t>(i)]) continue;
      } else if (HasProductGenerator(node.domain(), node.op_type())) {
        // A product (product_ir.h) is a partition of its own, its constants read by name.
        candidate_[static_cast<size_t>(i)] = solo_[static_cast<size_t>(i)] = product_[static_cast<size_t>(i)] =
            AcceptsProduct(node, &why);
        if (candidate_[static_cast<size_t>(i)]) continue;
      } else {
        candidate_[static_cast<size_t>(i)] = Accepts(node, &why);
        if (candidate_[static_cast<size_t>(i)]) continue;
        // Data movement (datamove_ir.h): a partition of its own, never merged.
        if (HasDataMoveGenerator(node.op_type()) && AcceptsDataMove(node, &why)) {
          candidate_[static_cast<size_t>(i)] = datamove_[static_cast<size_t>(i)] = 1;
          continue;
        }
      }
      refusals_.push_back(Describe(node) + ": " + why);
    }
    for (int i = 0; i < n; ++i)
      if (solo_[static_cast<size_t>(i)] && g_.node(i).op_type() == "ReduceMean") FormLayerNorm(i);
    for (int i = 0; i < n; ++i) {
      if (!candidate_[static_cast<size_t>(i)]) continue;
      for (const auto& in : g_.node(i).input()) {
        auto it = producer_.find(in);
        if (it == producer_.end() || !candidate_[static_cast<size_t>(it->second)]) continue;
        if (datamove_[static_cast<size_t>(i)] || datamove_[static_cast<size_t>(it->second)]) continue;
        TryMerge(Find(it->second), Find(i));
      }
    }
    KeepLoneCastsWithDataMovement();
    return Emit() + static_cast<int>(whole_ifs_.size());  // a graph whose only change is a JitIf is rewritten too
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
  DType TypeOf(const std::string& name) const {
    if (const Tensor* c = ctx_.constants(name)) return c->dtype();
    auto it = model_.value_types.find(name);
    return it == model_.value_types.end() ? DType::kUndefined : it->second;
  }
  bool IsFloat(const std::string& name) const { return TypeOf(name) == DType::kFloat; }

  // An If whose two branches are views of the values they read (if_ir.h) becomes JitIf, those
  // values appended to its inputs and their declared ranks in kIfOperandRanksAttr; any other If
  // stays the reference If (its branches are partitioned when they are compiled), refused with
  // the first branch node that is not such a view.
  void TakeViewIf(onnx::NodeProto& node) {
    const onnx::AttributeProto* attrs[2] = {FindAttr(node, "then_branch"), FindAttr(node, "else_branch")};
    std::vector<std::string> names;
    for (const auto* a : attrs) {
      if (!a || !a->has_g()) return refusals_.push_back(Describe(node) + ": a branch is missing");
      // The reference If reports the mismatch, naming the If (a JitIf would name itself).
      if (a->g().output_size() != node.output_size())
        return refusals_.push_back(Describe(node) + ": a branch's output count differs from the node's");
      for (auto& name : IfBranchOuterValues(a->g()))
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
    }
    std::vector<IfOperand> operands;
    for (const std::string& name : names) {
      IfOperand op{name, DType::kUndefined, -1};
      if (const Tensor* c = ctx_.constants(name)) {
        op.dtype = c->dtype();
        op.rank = static_cast<int>(c->rank());
      } else if (auto t = model_.value_types.find(name); t != model_.value_types.end()) {
        op.dtype = t->second;
        if (const auto* shape = ShapeOf(name)) op.rank = static_cast<int>(shape->dims.size());
      }
      operands.push_back(std::move(op));
    }
    for (const auto* a : attrs)
      if (auto ir = BuildIfBranchIR(a->g(), model_.OpsetFor(""), operands); !ir)
        return refusals_.push_back(Describe(node) + ": " + ir.message());
    whole_ifs_.push_back(Describe(node) + ": views of " + std::to_string(operands.size()) + " value(s)");
    node.set_op_type(kJitIfOp);
    node.set_domain(kFusedDomain);
    auto* ranks = node.add_attribute();
    ranks->set_name(kIfOperandRanksAttr);
    ranks->set_type(onnx::AttributeProto::INTS);
    for (const IfOperand& op : operands) {
      node.add_input(op.name);
      ranks->add_ints(op.rank);
    }
    model_.counters["jit_nodes"] += 1;
    model_.counters["jit_whole_ifs"] += 1;
  }

  // A Split along the last axis into known sizes: not a member of any group, but each partition
  // that reads its outputs gets a copy of it, reading the Split's input as views (the GRU's
  // [2H | H] gate split, the LSTM's four gates). Null when `n` is not such a Split.
  const std::vector<int64_t>* ViewSplitSizes(int index) const {
    auto it = view_splits_.find(index);
    return it == view_splits_.end() ? nullptr : &it->second;
  }

  bool AcceptsViewSplit(const onnx::NodeProto& n, std::vector<int64_t>* sizes, std::string* why) const {
    if (model_.OpsetFor("") < 2) return *why = "Split-1", false;
    if (n.output_size() < 2) return *why = "fewer than two outputs", false;
    if (n.input_size() < 1 || n.input(0).empty()) return *why = "no input", false;
    const std::string& in = n.input(0);
    if (!IsFloat(in)) return *why = "input '" + in + "' is not known to be float", false;
    const auto* in_shape = ShapeOf(in);
    if (!in_shape || in_shape->dims.empty() || in_shape->dims.back() < 0)
      return *why = "input '" + in + "' has no static last dim", false;
    std::vector<int64_t> constant;
    if (n.input_size() > 1 && !n.input(1).empty()) {
      const Tensor* c = ctx_.constants(n.input(1));
      if (!c || c->dtype() != DType::kInt64) return *why = "split sizes are not a constant", false;
      constant.assign(c->data<int64_t>(), c->data<int64_t>() + c->size());
    }
    const int64_t rank = static_cast<int64_t>(in_shape->dims.size());
    *sizes = LastAxisSplitSizes(n, model_.OpsetFor(""), rank, in_shape->dims.back(), constant.empty() ? nullptr : &constant);
    if (sizes->empty()) return *why = "not a split of the last axis into known sizes", false;
    for (const auto& o : n.output())
      if (o.empty() || !IsFloat(o) || !ShapeOf(o)) return *why = "an output of unknown type or shape", false;
    return true;
  }

  bool Accepts(const onnx::NodeProto& n, std::string* why) const {
    if (n.domain() == kFusedDomain)
      return *why = n.op_type() == kJitScanOp ? "a Scan: its kernel compiles the whole loop when the body allows"
                                              : "a fused kernel (generated loops call it directly)",
             false;
    if (!n.domain().empty() && n.domain() != "ai.onnx") return *why = "not an ONNX op", false;
    if (n.op_type() == "LSTM" || n.op_type() == "GRU" || n.op_type() == "RNN")
      return *why = "a recurrent op: `model_editor --mode to_scan` makes it a Scan, which the JIT can compile whole", false;
    if (!HasElementwiseGenerator(n.op_type())) return *why = "no code generator for " + n.op_type(), false;
    if (!ElementwiseGeneratorTakes(n.op_type(), n.input_size()))
      return *why = std::to_string(n.input_size()) + " input(s), not what " + n.op_type() + " takes", false;
    if (model_.OpsetFor("") < 6) return *why = "opset below 6", false;
    if (model_.OpsetFor("") < ElementwiseMinOpset(n.op_type()))
      return *why = n.op_type() + " below opset " + std::to_string(ElementwiseMinOpset(n.op_type())), false;
    if ((n.op_type() == "PRelu" || n.op_type() == "Pow") && model_.OpsetFor("") < 7)
      return *why = n.op_type() + " below opset 7 (legacy broadcast)", false;
    if (n.output_size() != 1 || n.output(0).empty()) return *why = "not one output", false;
    if (!Subgraphs(n).empty()) return *why = "has a subgraph", false;
    const bool batch_norm = n.op_type() == "BatchNormalization";
    if (batch_norm && !IsInferenceBatchNorm(n, static_cast<int>(model_.OpsetFor("")), why)) return false;
    const std::string& out = n.output(0);
    if (folded_.count(out)) return *why = "its inputs are constants: folded at load", false;
    // Element types (elementwise_ir.h): the generator's rule for the operands' types, and the
    // declared output type must be what it gives.
    std::vector<DType> types;
    for (const auto& in : n.input()) types.push_back(in.empty() ? DType::kUndefined : TypeOf(in));
    const DType result = ElementwiseResultType(n, types, why);
    if (result == DType::kUndefined) return false;
    if (n.op_type() == "Cast" && types[0] == result)
      return *why = "a Cast to its own type (a view of the data-movement family)", false;
    if (TypeOf(out) != result)
      return *why = "output '" + out + "' is not known to be " + DTypeName(result), false;
    const auto* out_shape = ShapeOf(out);
    if (!out_shape) return *why = "output '" + out + "' has no declared shape", false;
    const onnx::TensorShapeProto space = ToShapeProto(*out_shape);
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string& in = n.input(i);
      if (in.empty()) continue;
      // A Clip bound computed at run time is a float scalar value of the kernel (read per call).
      const bool computed_bound = n.op_type() == "Clip" && i > 0 && !ctx_.constants(in);
      if (computed_bound && TypeOf(in) != DType::kFloat)
        return *why = "Clip bound '" + in + "' is not known to be float", false;
      if (IsScalarConstantOperand(n, i) && !computed_bound) {  // Clip bounds, Pow's exponent
        const Tensor* c = ctx_.constants(in);
        const bool integer_ok = n.op_type() == "Pow";  // the reference converts it to float
        if (!c || c->size() != 1 ||
            !(c->dtype() == DType::kFloat || (integer_ok && (c->dtype() == DType::kInt64 || c->dtype() == DType::kInt32))))
          return *why = n.op_type() + (integer_ok ? " exponent is not a scalar float or integer constant"
                                                  : " bounds are not scalar float constants"),
                 false;
        continue;
      }
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
      const bool read = batch_norm && i > 0 ? ClassifyChannelParam(in_shape, space, &access, &reason)  // scale, B, mean, var
                                            : ClassifyAccess(in_shape, space, &access, &reason);
      if (!read) return *why = "input '" + in + "': " + reason, false;
      if (computed_bound && access != Access::kScalar)
        return *why = "Clip bound '" + in + "' is not known to be a scalar", false;
    }
    return true;
  }

  // The values the plan computes once at load (graph_plan.cc folds every node whose inputs are
  // all constants, transitively): a partition of such a node would run on every call instead.
  void FindFoldedValues() {
    for (const auto& node : g_.node()) {
      if (node.input_size() == 0 || !Subgraphs(node).empty() || node.op_type().rfind("Random", 0) == 0) continue;
      bool constant = true;
      for (const auto& in : node.input()) constant &= in.empty() || folded_.count(in) > 0 || ctx_.constants(in) != nullptr;
      if (constant)
        for (const auto& o : node.output()) folded_.insert(o);
    }
  }

  // A data-movement node the family's IR builder takes (the same builder the kernel runs).
  bool AcceptsDataMove(const onnx::NodeProto& n, std::string* why) const {
    if (!n.domain().empty() && n.domain() != "ai.onnx") return *why = "not an ONNX op", false;
    if (n.output_size() > 0 && folded_.count(n.output(0))) return *why = "its inputs are constants: folded at load", false;
    if (!Subgraphs(n).empty()) return *why = "has a subgraph", false;
    std::vector<MoveOperand> operands(static_cast<size_t>(n.input_size()));
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string& in = n.input(i);
      MoveOperand& op = operands[static_cast<size_t>(i)];
      if (in.empty()) continue;
      if (const Tensor* c = ctx_.constants(in)) {
        op.constant = c;
        op.dtype = c->dtype();
        op.has_shape = true;
        op.dims = c->shape();
        op.dim_params.assign(op.dims.size(), "");
        continue;
      }
      if (auto t = model_.value_types.find(in); t != model_.value_types.end()) op.dtype = t->second;
      if (const auto* s = ShapeOf(in)) {
        op.has_shape = true;
        op.dims = s->dims;
        op.dim_params = s->dim_params;
      }
    }
    if (n.output_size() != 1 || n.output(0).empty()) return *why = "not one output", false;
    auto t = model_.value_types.find(n.output(0));
    auto ir = BuildDataMoveIR(n, static_cast<int>(model_.OpsetFor("")), operands,
                              t == model_.value_types.end() ? DType::kUndefined : t->second);
    if (!ir) return *why = ir.message(), false;
    return true;
  }

  // A product node (product_ir.h): a variable float input 0 of declared rank, a float output, and
  // every other input a constant (the reference kernel packs it at load; MatMul's B a 2-D float).
  bool AcceptsProduct(const onnx::NodeProto& n, std::string* why) const {
    if (n.output_size() != 1 || n.output(0).empty()) return *why = "not one output", false;
    if (folded_.count(n.output(0))) return *why = "its inputs are constants: folded at load", false;
    if (n.input_size() < 2 || n.input(0).empty()) return *why = "no input 0", false;
    const std::string &x = n.input(0), &out = n.output(0);
    if (!IsFloat(x) || ctx_.constants(x)) return *why = "input '" + x + "' is not a variable float", false;
    if (!IsFloat(out)) return *why = "output '" + out + "' is not known to be float", false;
    const auto* x_shape = ShapeOf(x);
    if (!x_shape) return *why = "input '" + x + "' has no declared shape", false;
    for (int k = 1; k < n.input_size(); ++k)
      if (!n.input(k).empty() && !ctx_.constants(n.input(k)))
        return *why = "input '" + n.input(k) + "' is not a constant (the product packs it at load)", false;
    if (n.op_type() == "MatMul") {
      const Tensor* b = n.input_size() == 2 ? ctx_.constants(n.input(1)) : nullptr;  // null for B ""
      if (b == nullptr || b->dtype() != DType::kFloat || b->rank() != 2)
        return *why = "B is not a constant float matrix", false;
    }
    auto ir = BuildProductIR(n, static_cast<int64_t>(x_shape->dims.size()));
    if (!ir) return *why = ir.message(), false;
    return true;
  }

  // The reduction generator's checks (reduce_ir.h) on the declared input shape, and float values.
  bool AcceptsReduce(const onnx::NodeProto& n, std::string* why) const {
    if (n.output_size() != 1 || n.output(0).empty()) return *why = "not one output", false;
    if (folded_.count(n.output(0))) return *why = "its inputs are constants: folded at load", false;
    if (n.input_size() < 1 || n.input(0).empty()) return *why = "no input", false;
    const std::string &in = n.input(0), &out = n.output(0);
    if (!IsFloat(in)) return *why = "input '" + in + "' is not known to be float", false;
    if (!IsFloat(out)) return *why = "output '" + out + "' is not known to be float", false;
    const auto* in_shape = ShapeOf(in);
    if (!in_shape) return *why = "input '" + in + "' has no declared shape", false;
    const int opset = model_.OpsetFor("");
    std::vector<int64_t> axes;
    bool constant_axes = false;
    if (n.input_size() > 1 && IsReduceAxesInput(n, opset, 1)) {
      const Tensor* c = ctx_.constants(n.input(1));
      if (c && c->dtype() == DType::kInt64) {
        axes.assign(c->data<int64_t>(), c->data<int64_t>() + c->size());
        constant_axes = true;
      }
    }
    auto ir = BuildReduceIR(n, ToShapeProto(*in_shape), opset, constant_axes ? &axes : nullptr);
    if (!ir) return *why = ir.diag().reason, false;
    return true;
  }

  // The layer-norm chain anchored on ReduceMean `mean` (reduce_ir.h) becomes one group of its own
  // when its seven nodes are candidates, they are exactly the pattern, and only the Div's output
  // is read outside them (so no path can leave the group and come back).
  void FormLayerNorm(int mean) {
    if (outside_.empty()) {  // graph outputs and values subgraphs read: never intermediate
      for (const auto& o : g_.output()) outside_.insert(o.name());
      for (const auto& node : g_.node())
        for (auto& name : ImplicitInputs(node)) outside_.insert(std::move(name));
      outside_.insert("");
    }
    auto op = [&](int k) -> const std::string& { return g_.node(k).op_type(); };
    auto readers = [&](int k) {  // distinct consumers of k's only output; empty when read outside
      std::vector<int> r;
      if (g_.node(k).output_size() != 1 || outside_.count(g_.node(k).output(0))) return r;
      for (int c : consumers_[static_cast<size_t>(k)])
        if (std::find(r.begin(), r.end(), c) == r.end()) r.push_back(c);
      return r;
    };
    auto next = [&](int k, const char* type) {
      const std::vector<int> r = readers(k);
      return r.size() == 1 && op(r[0]) == type ? r[0] : -1;
    };
    const int sub = next(mean, "Sub");
    if (sub < 0) return;
    const std::vector<int> d = readers(sub);
    if (d.size() != 2) return;
    const int pow = op(d[0]) == "Pow" ? d[0] : d[1], div = pow == d[0] ? d[1] : d[0];
    if (op(pow) != "Pow" || op(div) != "Div") return;
    const int variance = next(pow, "ReduceMean");
    const int add = variance < 0 ? -1 : next(variance, "Add");
    const int sqrt = add < 0 ? -1 : next(add, "Sqrt");
    if (sqrt < 0 || next(sqrt, "Div") != div) return;
    // The two means must be reduction candidates; the elementwise nodes need not be (a mean over
    // several axes broadcasts in a way the elementwise generator refuses, the fused kernel not).
    const std::vector<int> chain = {mean, sub, pow, variance, add, sqrt, div};
    if (!candidate_[static_cast<size_t>(variance)]) return;
    for (size_t k = 1; k < chain.size(); ++k)
      if (chain[k] <= chain[k - 1] || !Subgraphs(g_.node(chain[k])).empty()) return;
    // The constants as the kernel will read them, and the pattern's own checks (reduce_ir.h).
    const onnx::NodeProto& add_node = g_.node(add);
    for (int k : {sub, pow, add, div})  // a node short of inputs (a hostile file) is no chain
      if (g_.node(k).input_size() != 2) return;
    const std::string& eps = add_node.input(0) == g_.node(variance).output(0) ? add_node.input(1) : add_node.input(0);
    const Tensor* e = ctx_.constants(eps);
    const Tensor* p = g_.node(pow).input_size() > 1 ? ctx_.constants(g_.node(pow).input(1)) : nullptr;
    if (!e || e->dtype() != DType::kFloat || e->size() != 1 || !p || p->size() != 1) return;
    const float exponent = p->dtype() == DType::kFloat   ? p->data<float>()[0]
                           : p->dtype() == DType::kInt64 ? static_cast<float>(p->data<int64_t>()[0])
                           : p->dtype() == DType::kInt32 ? static_cast<float>(p->data<int32_t>()[0])
                                                         : 0.0f;
    LayerNormNodes nodes{&g_.node(mean), &g_.node(sub), &g_.node(pow), &g_.node(variance), &add_node, &g_.node(sqrt), &g_.node(div)};
    const auto* x_shape = ShapeOf(g_.node(mean).input(0));
    if (!x_shape || !BuildLayerNormIR(nodes, ToShapeProto(*x_shape), model_.OpsetFor(""), exponent, e->data<float>()[0]))
      return;
    for (int k : chain) {
      candidate_[static_cast<size_t>(k)] = solo_[static_cast<size_t>(k)] = 1;
      group_[static_cast<size_t>(k)] = mean;
      const std::string refused = Describe(g_.node(k)) + ": ";
      std::erase_if(refusals_, [&](const std::string& r) { return r.rfind(refused, 0) == 0; });
    }
  }

  // The elementwise family takes a Cast to fuse it with its neighbours; a Cast that joined no
  // group is a data-movement partition when that family takes it (the same copy, for more types).
  void KeepLoneCastsWithDataMovement() {
    const int n = g_.node_size();
    std::vector<int> group_size(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i)
      if (candidate_[static_cast<size_t>(i)]) ++group_size[static_cast<size_t>(Find(i))];
    for (int i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      std::string why;
      if (candidate_[k] && !datamove_[k] && !solo_[k] && g_.node(i).op_type() == "Cast" &&
          group_size[static_cast<size_t>(Find(i))] == 1 && AcceptsDataMove(g_.node(i), &why))
        datamove_[k] = 1;
    }
  }

  int Find(int i) {
    while (group_[static_cast<size_t>(i)] != i) i = group_[static_cast<size_t>(i)] = group_[static_cast<size_t>(group_[static_cast<size_t>(i)])];
    return i;
  }

  // Merges the groups of roots a and b when they have the same shape and no path leaves the
  // union and re-enters it.
  void TryMerge(int a, int b) {
    if (a == b || solo_[static_cast<size_t>(a)] || solo_[static_cast<size_t>(b)]) return;
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
    DType type = DType::kFloat;  // every partition value's type is known (Accepts); float is the old default
    if (const Tensor* c = ctx_.constants(name)) type = c->dtype();
    else if (auto it = model_.value_types.find(name); it != model_.value_types.end()) type = it->second;
    tt->set_elem_type(static_cast<int>(type));
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
      for (auto& name : ImplicitInputs(node)) read_by_subgraphs.insert(std::move(name));
    for (const auto& o : g_.output()) graph_outputs.insert(o.name());

    std::vector<char> taken(static_cast<size_t>(n), 0);
    std::vector<onnx::NodeProto> partitions;
    std::unordered_map<int, std::unordered_set<int>> read_by_views;  // view Split -> groups reading it
    std::unordered_map<int, size_t> partition_at;  // first member -> its partition
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
      // Named after the nodes it runs, so errors and profiles point at the model's own nodes.
      std::string label;
      for (size_t k = 0; k < nodes.size() && k < 3; ++k)
        label += (k ? "+" : "") + (g_.node(nodes[k]).name().empty() ? g_.node(nodes[k]).op_type() : g_.node(nodes[k]).name());
      if (nodes.size() > 3) label += "+" + std::to_string(nodes.size() - 3) + " more";
      part.set_name(label);
      std::unordered_set<std::string> produced, inputs_seen;
      for (int i : nodes)
        for (const auto& o : g_.node(i).output()) produced.insert(o);
      // The view Splits this group reads come first, each once; their outputs become values of
      // the body and their input (and constant sizes) the body's input (and initializer).
      std::vector<int> views;
      const bool datamove = nodes.size() == 1 && datamove_[static_cast<size_t>(nodes[0])];
      if (datamove) {
        auto* opset = part.add_attribute();
        opset->set_name(kDataMoveOpsetAttr);
        opset->set_type(onnx::AttributeProto::INT);
        opset->set_i(model_.OpsetFor(""));
      }
      for (int i : nodes)
        if (!datamove && !solo_[static_cast<size_t>(root)])  // one-node and layer-norm kernels read no views
        for (const auto& in : g_.node(i).input()) {
          auto it = producer_.find(in);
          if (it == producer_.end() || !ViewSplitSizes(it->second)) continue;
          if (std::find(views.begin(), views.end(), it->second) == views.end()) views.push_back(it->second);
        }
      for (int v : views) {
        const onnx::NodeProto& split = g_.node(v);
        *body->add_node() = split;
        for (const auto& o : split.output()) {
          produced.insert(o);
          *body->add_value_info() = ValueInfo(o);
        }
        const std::string& in = split.input(0);
        if (inputs_seen.insert(in).second) {
          part.add_input(in);
          *body->add_input() = ValueInfo(in);
        }
        if (split.input_size() > 1 && !split.input(1).empty() && inputs_seen.insert(split.input(1)).second) {
          const Tensor* c = ctx_.constants(split.input(1));
          auto* t = body->add_initializer();
          t->set_name(split.input(1));
          t->set_data_type(onnx::TensorProto::INT64);
          t->add_dims(c->size());
          for (int64_t k = 0; k < c->size(); ++k) t->add_int64_data(c->data<int64_t>()[k]);
        }
        read_by_views[v].insert(root);
      }
      std::unordered_set<std::string> bounds_added;
      for (int i : nodes) {
        const onnx::NodeProto& node = g_.node(i);
        *body->add_node() = node;
        for (int k = 0; k < node.input_size(); ++k) {
          const std::string& in = node.input(k);
          if (in.empty() || produced.count(in)) continue;
          // A product's other inputs are constants: its body reads them from this graph by name
          // (the body's reference kernel packs them at load), so they are no partition inputs.
          if (product_[static_cast<size_t>(i)] && k > 0) continue;
          // A data-movement node's constant inputs (Slice bounds, Reshape shapes, Gather tables
          // or indices) become the body's initializers: its IR bakes them.
          if (datamove && ctx_.constants(in)) {
            if (bounds_added.insert(in).second) *body->add_initializer() = TensorToProto(*ctx_.constants(in), in);
            continue;
          }
          // Clip bounds and Pow's exponent become the body's float scalar constants (also when
          // the same value is an operand elsewhere: an initializer may back a graph input). An
          // integer exponent becomes its float value, which is what the reference computes with.
          if (IsScalarConstantOperand(node, k) && ctx_.constants(in)) {
            if (bounds_added.insert(in).second) {
              const Tensor* c = ctx_.constants(in);
              auto* t = body->add_initializer();
              t->set_name(in);
              t->set_data_type(onnx::TensorProto::FLOAT);
              t->add_float_data(c->dtype() == DType::kInt64   ? static_cast<float>(c->data<int64_t>()[0])
                                : c->dtype() == DType::kInt32 ? static_cast<float>(c->data<int32_t>()[0])
                                                              : c->data<float>()[0]);
            }
            continue;
          }
          if (IsReduceAxesInput(node, model_.OpsetFor(""), k)) {  // the reduction's constant axes
            if (bounds_added.insert(in).second) {
              const Tensor* c = ctx_.constants(in);
              auto* t = body->add_initializer();
              t->set_name(in);
              t->set_data_type(onnx::TensorProto::INT64);
              t->add_dims(c->size());
              for (int64_t j = 0; j < c->size(); ++j) t->add_int64_data(c->data<int64_t>()[j]);
            }
            continue;
          }
          if (!inputs_seen.insert(in).second) continue;
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
      if (solo_[static_cast<size_t>(root)]) {  // the reduction kernel reads the ONNX opset's semantics
        auto* opset = part.add_attribute();
        opset->set_name(kOnnxOpsetAttr);
        opset->set_type(onnx::AttributeProto::INT);
        opset->set_i(model_.OpsetFor(""));
      }
      for (int i : nodes) taken[static_cast<size_t>(i)] = 1;
      taken_nodes += static_cast<int>(nodes.size());
      partition_at[nodes[0]] = partitions.size();
      partitions.push_back(std::move(part));
    }
    // A view Split whose outputs only partitions read is gone; one with other readers stays.
    for (const auto& [v, groups] : read_by_views) {
      bool other_readers = false;
      for (const auto& o : g_.node(v).output())
        other_readers |= graph_outputs.count(o) > 0 || read_by_subgraphs.count(o) > 0;
      for (int c : consumers_[static_cast<size_t>(v)]) other_readers |= !candidate_[static_cast<size_t>(c)] || !taken[static_cast<size_t>(c)] ||
                                                         datamove_[static_cast<size_t>(c)] || solo_[static_cast<size_t>(c)];
      if (other_readers) continue;
      taken[static_cast<size_t>(v)] = 1;
      ++taken_nodes;
    }
    // The nodes that stay are moved, not copied: a copy cost a deep copy of every Constant's
    // tensor and every If/Loop body at each load, and the old list was destroyed right after.
    // Each partition takes its first member's place: the plan's topological order prefers low
    // indices, and partitions appended at the end ran as late as possible, far from their
    // producers and consumers (0.1 us more per node on Silero v3.1, in cache misses).
    onnx::GraphProto rewritten_nodes;
    for (int i = 0; i < n; ++i) {
      if (auto p = partition_at.find(i); p != partition_at.end()) *rewritten_nodes.add_node() = std::move(partitions[p->second]);
      if (!taken[static_cast<size_t>(i)]) *rewritten_nodes.add_node() = std::move(*g_.mutable_node(i));
    }
    const int count = static_cast<int>(partitions.size());
    g_.mutable_node()->Swap(rewritten_nodes.mutable_node());
    return Report(count, taken_nodes);
  }

  int Report(int partitions, int taken_nodes) {
    model_.counters["jit_partitions"] += partitions;
    model_.counters["jit_nodes"] += taken_nodes;
    if (model_.settings && model_.settings->Has("nuphar_dump_partition")) {
      ReportDiagnostic(Severity::kNote, "nuphar_dump_partition: graph '" + g_.name() + "': " + std::to_string(partitions) +
                                            " partition(s) of " + std::to_string(taken_nodes) + " node(s); " +
                                            std::to_string(refusals_.size()) +
                                            " node(s) left to the reference executor");
      for (const auto& node : g_.node()) {
        if (node.op_type() != kJitKernelOp) continue;
        std::string ops;
        for (const auto& b : node.attribute(0).g().node()) ops += (ops.empty() ? "" : ", ") + b.op_type();
        ReportDiagnostic(Severity::kNote, "  " + node.attribute(0).g().name() + " ['" + node.name() + "']: " +
                                              std::to_string(node.input_size()) + " input(s), " +
                                              std::to_string(node.output_size()) + " output(s): " + ops);
      }
      for (const auto& w : whole_ifs_) ReportDiagnostic(Severity::kNote, "  whole If " + w);
      for (const auto& r : refusals_) ReportDiagnostic(Severity::kNote, "  reference: " + r);
    }
    return partitions;
  }

  onnx::GraphProto& g_;
  const GraphRewriteContext& ctx_;
  const ModelContext& model_;
  std::unordered_map<std::string, int> producer_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> group_;
  std::vector<char> candidate_;
  std::vector<char> datamove_;  ///< candidates of the data-movement family (partitions of one node)
  std::unordered_set<std::string> folded_;  ///< values folded at load (FindFoldedValues)
  std::vector<char> solo_;  ///< a reduction or a layer-norm chain: never merged with others
  std::vector<char> product_;  ///< a product anchor (product_ir.h): a partition of one node, solo too
  std::unordered_set<std::string> outside_;  ///< FormLayerNorm: values read outside the nodes
  std::vector<std::string> refusals_;
  std::vector<std::string> whole_ifs_;  ///< TakeViewIf: the Ifs that became JitIf
  std::unordered_map<int, std::vector<int64_t>> view_splits_;  ///< node index -> split sizes
};


class JitPartitionPass final : public RuntimeGraphPass {
 public:
  std::string Name() const override { return "jit_partitioner"; }
  bool MayApply(const onnx::GraphProto& graph) const override {
    if (graph.name().rfind(kPartitionPrefix, 0) == 0) return false;
    for (const auto& n : graph.node())
      if (HasElementwiseGenerator(n.op_type()) || HasDataMoveGenerator(n.op_type()) || HasReduceGenerator(n.op_type()) ||
          HasProductGenerator(n.domain(), n.op_type()) || n.op_type() == "Scan" || n.op_type() == "If")
        return true;
    return false;
  }
  Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) override {
    return Partitioner(graph, ctx).Run();
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateJitPartitionPass() { return std::make_unique<JitPartitionPass>(); }

}  // namespace nuphar::jit
