// Fusion of the quantizer's dynamic MatMulInteger pattern (runtime/fusion/dynamic_quant_matmul_fusion.h).
//
// Before (asymm8, 26 nodes; editor_quantizer.md §3.7):
//   rmax = ReduceMax(X)  bias = ReduceMin(X)  delta = Sub(rmax, bias)  inv = Reciprocal(delta | Max(delta, g))
//   norm = Mul(Sub(X, bias), inv)   scale = Mul(delta, 1/R)
//   Q = Cast<u8>(Clip(Floor(Add(Mul(norm, R), 0.5)), 0, 127))   Qsum = ReduceSum(Cast<i32>(Q))
//   QY = MatMulInteger(Q, Wq)
//   Y = Sum(Mul(base, Mul(bias, K)), Mul(base, Mul(scale, Cast<f32>(Qsum))),
//           Mul(Mul(step, bias), rowsum), Mul(Mul(step, scale), Cast<f32>(QY)))
// Before (symm16, 14 nodes):
//   delta = ReduceMax(Abs(X))  inv = Reciprocal(delta)  norm = Mul(X, inv)  scale = Mul(delta, 1/R)
//   Q = Cast<i16>(Clip(Floor(Add(Mul(norm, R), 0.5)), -4096, 4095))
//   Y = Mul(Mul(step, scale), Cast<f32>(MatMulInteger16(Q, Wq)))
// Optionally followed by (either operand order; float addition commutes exactly):
//   Z = Add(Y, B)  or  Z = Add(B, Y)
// After:
//   Y = com.nuphar.internal.DynQuantMatMul(X, Wq, step, base, rowsum)      attributes: scheme and the constants
//   Z = com.nuphar.internal.DynQuantMatMul(X, Wq, step, base, rowsum, B)   when the Add is absorbed
//   (symm16 leaves base and rowsum empty). The kernel adds B after the dequantization, one more
//   float32 rounding exactly like the Add node, so Z stays bit-identical to the unfused graph.
// Refused (left unfused): any operand of Mul/Add in another order than a commutative swap, a
//   reduction over another axis than -1 or keepdims=0, a non-constant Wq/step/base/rowsum or
//   scalar, a Cast to another type, MatMulInteger with zero-point inputs.
// Refused Adds (the pattern is fused, the Add stays a node), because the kernel only adds B
// as a row broadcast or element for element and the output shape must stay Y's:
//   - Y has another consumer (also inside a subgraph), is a graph output, or is both operands;
//   - the Add already went to another pattern (Add(Y1, Y2) of two patterns: the first takes it);
//   - Wq is not 2-D (N unknown);
//   - a constant B that is not float of shape [N] or [1, ..., 1, N] (e.g. [M, 1], [M, N]);
//   - a computed B whose declared shape (graph input, value_info or output of this graph) is
//     missing, not float, or neither [1, ..., 1, N] nor of Y's rank with the same leading dims
//     as X or Y (equal dim_value, or equal non-empty dim_param), e.g. [M, 1] or a B from an
//     enclosing graph. The kernel re-checks the actual shapes at run time and reports a model
//     whose declared shapes were wrong.
// Intermediate nodes are not removed here: a prologue shared by several MatMulIntegers keeps
// feeding the others, and nodes left without consumers are dropped by dead-code elimination.
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/pass.h"
#include "runtime/core/graph_plan.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace nuphar {
namespace {

class Matcher {
 public:
  Matcher(const onnx::GraphProto& g, const ConstantLookup& lookup) : lookup_(lookup) {
    for (const auto& n : g.node())
      for (const auto& o : n.output())
        if (!o.empty()) producer_[o] = &n;
  }

  // The node of type `op` that produces `name`, when it has the inputs the matchers read (one,
  // two for the binary ops and the integer MatMuls): a broken file's Sub with one input is no
  // match, never an index past its input list (found by tests/fuzz).
  const onnx::NodeProto* Producer(const std::string& name, const char* op) const {
    auto it = producer_.find(name);
    if (it == producer_.end() || it->second->op_type() != op) return nullptr;
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Max", "MatMulInteger", "MatMulInteger16"};
    const int needed = kBinary.count(op) ? 2 : 1;
    if (it->second->input_size() < needed) return nullptr;
    return it->second;
  }

  // A scalar (or single-element) float constant.
  bool ScalarConst(const std::string& name, float* value) const {
    const Tensor* t = lookup_(name);
    if (!t || t->dtype() != DType::kFloat || t->size() != 1) return false;
    *value = t->data<float>()[0];
    return true;
  }
  bool IsConst(const std::string& name) const { return lookup_(name) != nullptr; }

  // ReduceMax/ReduceMin/ReduceSum over the last axis with keepdims=1 (attribute or input form).
  bool IsLastAxisReduce(const onnx::NodeProto& n) const {
    if (AttrInt(n, "keepdims", 1) != 1) return false;
    std::vector<int64_t> axes = AttrInts(n, "axes").value_or(std::vector<int64_t>{});
    if (n.input_size() > 1 && !n.input(1).empty()) {
      const Tensor* t = lookup_(n.input(1));
      if (!t) return false;
      auto v = t->ToInt64Vector();
      if (!v) return false;
      axes = *v;
    }
    return axes.size() == 1 && axes[0] == -1;
  }

  // `mul` is Mul(a, b) with {a, b} == {x, y} in either order (float multiplication commutes exactly).
  static bool MulOf(const onnx::NodeProto* mul, const std::string& x, const std::string& y) {
    if (!mul || mul->input_size() != 2) return false;
    return (mul->input(0) == x && mul->input(1) == y) || (mul->input(0) == y && mul->input(1) == x);
  }
  // The operand of commutative Mul `mul` that is not `known`, or "" when `known` is not an operand.
  static std::string Other(const onnx::NodeProto* mul, const std::string& known) {
    if (!mul || mul->input_size() != 2) return "";
    if (mul->input(0) == known) return mul->input(1);
    if (mul->input(1) == known) return mul->input(0);
    return "";
  }

  // Shared tail: Q = Cast<qtype>(Clip(Floor(Add(Mul(norm, R), half)))). Fills range, half, clip.
  bool MatchQuantize(const std::string& q, int cast_to, std::string* norm, onnx::NodeProto* fused) const {
    const auto* cast = Producer(q, "Cast");
    if (!cast || AttrInt(*cast, "to", 0) != cast_to) return false;
    const auto* clip = Producer(cast->input(0), "Clip");
    if (!clip) return false;
    float lo, hi;
    if (clip->input_size() >= 3) {
      if (!ScalarConst(clip->input(1), &lo) || !ScalarConst(clip->input(2), &hi)) return false;
    } else {  // the attribute form (before opset 11): both bounds must be given
      const onnx::AttributeProto* min = FindAttr(*clip, "min");
      const onnx::AttributeProto* max = FindAttr(*clip, "max");
      if (!min || !max) return false;
      lo = min->f();
      hi = max->f();
    }
    const auto* floor = Producer(clip->input(0), "Floor");
    if (!floor) return false;
    const auto* add = Producer(floor->input(0), "Add");
    if (!add || add->input_size() != 2) return false;
    float half;
    std::string scaled;
    if (ScalarConst(add->input(1), &half)) scaled = add->input(0);
    else if (ScalarConst(add->input(0), &half)) scaled = add->input(1);
    else return false;
    const auto* mul = Producer(scaled, "Mul");
    if (!mul || mul->input_size() != 2) return false;
    float range;
    if (ScalarConst(mul->input(1), &range)) *norm = mul->input(0);
    else if (ScalarConst(mul->input(0), &range)) *norm = mul->input(1);
    else return false;
    SetAttr(*fused, "range", range);
    SetAttr(*fused, "half", half);
    SetAttr(*fused, "clip_min", lo);
    SetAttr(*fused, "clip_max", hi);
    return true;
  }

  // inv = Reciprocal(delta) or Reciprocal(Max(delta, guard)). Returns delta's name.
  std::string MatchReciprocal(const std::string& inv, onnx::NodeProto* fused) const {
    const auto* rec = Producer(inv, "Reciprocal");
    if (!rec) return "";
    if (const auto* max = Producer(rec->input(0), "Max"); max && max->input_size() == 2) {
      float guard;
      if (!ScalarConst(max->input(1), &guard)) return "";
      SetAttr(*fused, "guard_zero_delta", int64_t{1});
      SetAttr(*fused, "guard_value", guard);
      return max->input(0);
    }
    return rec->input(0);
  }

  // o0 = Mul(Mul(step, scale), Cast<f32>(QY)): returns QY's producer and fills step/scale.
  const onnx::NodeProto* MatchScaledProduct(const std::string& o0, const char* mm_op, std::string* step,
                                            std::string* scale) const {
    const auto* mul = Producer(o0, "Mul");
    if (!mul || mul->input_size() != 2) return nullptr;
    for (int side = 0; side < 2; ++side) {
      const auto* cast = Producer(mul->input(side), "Cast");
      const auto* inner = Producer(mul->input(1 - side), "Mul");
      if (!cast || !inner || AttrInt(*cast, "to", 0) != onnx::TensorProto::FLOAT) continue;
      const auto* mm = Producer(cast->input(0), mm_op);
      if (!mm || mm->input_size() != 2) continue;
      for (int s = 0; s < 2; ++s) {
        if (IsConst(inner->input(s)) && !IsConst(inner->input(1 - s))) {
          *step = inner->input(s);
          *scale = inner->input(1 - s);
          return mm;
        }
      }
    }
    return nullptr;
  }

  // The asymm8 pattern ending at Y = Sum(o3, o2, o1, o0).
  bool MatchAsymm8(const onnx::NodeProto& sum, onnx::NodeProto* fused) const {
    if (sum.input_size() != 4) return false;
    std::string step, scale;
    const auto* mm = MatchScaledProduct(sum.input(3), "MatMulInteger", &step, &scale);
    if (!mm) return false;
    const std::string& q = mm->input(0);
    const std::string& wq = mm->input(1);
    if (!IsConst(wq)) return false;
    std::string norm;
    if (!MatchQuantize(q, onnx::TensorProto::UINT8, &norm, fused)) return false;
    // norm = Mul(Sub(X, bias), inv)
    const auto* norm_mul = Producer(norm, "Mul");
    if (!norm_mul || norm_mul->input_size() != 2) return false;
    const onnx::NodeProto* centered = nullptr;
    std::string inv;
    for (int s = 0; s < 2; ++s)
      if (const auto* sub = Producer(norm_mul->input(s), "Sub")) {
        centered = sub;
        inv = norm_mul->input(1 - s);
      }
    if (!centered) return false;
    const std::string& x = centered->input(0);
    const std::string& bias = centered->input(1);
    const auto* rmin = Producer(bias, "ReduceMin");
    if (!rmin || rmin->input(0) != x || !IsLastAxisReduce(*rmin)) return false;
    const std::string delta = MatchReciprocal(inv, fused);
    const auto* delta_sub = Producer(delta, "Sub");
    if (!delta_sub || delta_sub->input(1) != bias) return false;
    const auto* rmax = Producer(delta_sub->input(0), "ReduceMax");
    if (!rmax || rmax->input(0) != x || !IsLastAxisReduce(*rmax)) return false;
    // scale = Mul(delta, 1/R)
    float inv_range;
    const auto* scale_mul = Producer(scale, "Mul");
    if (!scale_mul || !ScalarConst(Other(scale_mul, delta), &inv_range)) return false;
    // o1 = Mul(Mul(step, bias), rowsum)
    const auto* o1 = Producer(sum.input(2), "Mul");
    if (!o1 || o1->input_size() != 2) return false;
    std::string rowsum;
    for (int s = 0; s < 2; ++s)
      if (MulOf(Producer(o1->input(s), "Mul"), step, bias)) rowsum = o1->input(1 - s);
    if (rowsum.empty() || !IsConst(rowsum)) return false;
    // o2 = Mul(base, Mul(scale, Cast<f32>(ReduceSum(Cast<i32>(Q)))))
    const auto* o2 = Producer(sum.input(1), "Mul");
    if (!o2 || o2->input_size() != 2) return false;
    std::string base;
    for (int s = 0; s < 2; ++s) {
      const auto* inner = Producer(o2->input(s), "Mul");
      const std::string qsum_f = Other(inner, scale);
      const auto* cast_f = Producer(qsum_f, "Cast");
      if (!cast_f || AttrInt(*cast_f, "to", 0) != onnx::TensorProto::FLOAT) continue;
      const auto* rsum = Producer(cast_f->input(0), "ReduceSum");
      if (!rsum || !IsLastAxisReduce(*rsum)) continue;
      const auto* cast_i = Producer(rsum->input(0), "Cast");
      if (!cast_i || AttrInt(*cast_i, "to", 0) != onnx::TensorProto::INT32 || cast_i->input(0) != q) continue;
      base = o2->input(1 - s);
    }
    if (base.empty() || !IsConst(base)) return false;
    // o3 = Mul(base, Mul(bias, K))
    const auto* o3 = Producer(sum.input(0), "Mul");
    const auto* bias_k = Producer(Other(o3, base), "Mul");
    float k_as_float;
    if (!bias_k || !ScalarConst(Other(bias_k, bias), &k_as_float)) return false;

    fused->add_input(x);
    fused->add_input(wq);
    fused->add_input(step);
    fused->add_input(base);
    fused->add_input(rowsum);
    SetAttr(*fused, "scheme", std::string("asymm8"));
    SetAttr(*fused, "inv_range", inv_range);
    SetAttr(*fused, "k_as_float", k_as_float);
    return true;
  }

  // The symm16 pattern ending at Y = Mul(Mul(step, scale), Cast<f32>(MatMulInteger16(Q, Wq))).
  bool MatchSymm16(const onnx::NodeProto& y_mul, onnx::NodeProto* fused) const {
    if (y_mul.output_size() < 1) return false;
    std::string step, scale;
    const auto* mm = MatchScaledProduct(y_mul.output(0), "MatMulInteger16", &step, &scale);
    if (!mm || !IsConst(mm->input(1))) return false;
    std::string norm;
    if (!MatchQuantize(mm->input(0), onnx::TensorProto::INT16, &norm, fused)) return false;
    const auto* norm_mul = Producer(norm, "Mul");
    if (!norm_mul || norm_mul->input_size() != 2) return false;
    for (int s = 0; s < 2; ++s) {
      const std::string& x = norm_mul->input(s);
      const std::string delta = MatchReciprocal(norm_mul->input(1 - s), fused);
      const auto* rmax = Producer(delta, "ReduceMax");
      if (!rmax || !IsLastAxisReduce(*rmax)) continue;
      const auto* abs = Producer(rmax->input(0), "Abs");
      if (!abs || abs->input(0) != x) continue;
      float inv_range;
      const auto* scale_mul = Producer(scale, "Mul");
      if (!scale_mul || !ScalarConst(Other(scale_mul, delta), &inv_range)) return false;
      fused->add_input(x);
      fused->add_input(mm->input(1));
      fused->add_input(step);
      SetAttr(*fused, "scheme", std::string("symm16"));
      SetAttr(*fused, "inv_range", inv_range);
      return true;
    }
    return false;
  }

 private:
  const ConstantLookup& lookup_;
  std::unordered_map<std::string, const onnx::NodeProto*> producer_;
};

// Decides whether a fused pattern may take over the Add that follows its output Y (see the
// Refused Adds list at the top of this file).
class AddAbsorber {
 public:
  // Reads of a name count node inputs here and anywhere inside subgraphs (an outer-scope
  // reference from a body counts; a body value that merely shares the name over-counts, which
  // only refuses an Add) and graph outputs.
  AddAbsorber(const onnx::GraphProto& g, const ConstantLookup& lookup) : graph_(g), lookup_(lookup), uses_(g) {
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
      for (const auto& v : *list)
        if (v.type().has_tensor_type()) declared_.emplace(v.name(), &v.type().tensor_type());
  }

  struct Decision {
    int add_index = -1;  ///< the Add to absorb, or -1
    bool refused = false;  ///< an Add reads Y but cannot be absorbed (`reason` says why)
    std::string b, reason;
  };

  // Whether the Add that reads `y` can be absorbed. `x` is the pattern's float input, `n` the
  // columns of Wq (-1 if Wq is not 2-D).
  Decision Find(const std::string& y, const std::string& x, int64_t n) const {
    Decision d;
    const onnx::NodeProto* add = nullptr;
    for (int i = 0; i < graph_.node_size() && !add; ++i)
      for (const auto& in : graph_.node(i).input())
        if (in == y && graph_.node(i).op_type() == "Add" && graph_.node(i).domain().empty()) {
          add = &graph_.node(i);
          d.add_index = i;
        }
    if (!add) return d;  // no Add follows: nothing to absorb, nothing refused
    d.b = add->input_size() != 2 ? "" : add->input(0) == y ? add->input(1) : add->input(0);
    const std::string reason = Check(*add, y, x, n, d.b);
    if (!reason.empty()) {
      d.add_index = -1;
      d.refused = true;
      d.reason = reason;
    }
    return d;
  }

  // "" when Add(Y, b) can be absorbed, else why not.
  std::string Check(const onnx::NodeProto& add, const std::string& y, const std::string& x, int64_t n,
                    const std::string& b) const {
    if (add.input_size() != 2 || add.output_size() != 1) return "the Add does not have 2 inputs and 1 output";
    if (uses_.Count(y) != 1) return "Y has another consumer or is a graph output";
    if (b == y || b.empty()) return "the Add has no other operand";
    if (n <= 0) return "Wq is not 2-D";
    const std::string row_shape = "[" + std::to_string(n) + "] or [1, ..., 1, " + std::to_string(n) + "]";
    if (const Tensor* t = lookup_(b)) {
      if (t->dtype() != DType::kFloat || !IsRowShape(t->shape(), n))
        return "constant operand '" + b + "' " + ShapeToString(t->shape()) + " is not float " + row_shape;
      return "";
    }
    const onnx::TypeProto_Tensor* tb = Declared(b);
    if (!tb || tb->elem_type() != onnx::TensorProto::FLOAT)
      return "operand '" + b + "' has no declared float shape in this graph";
    const auto& dims = tb->shape().dim();
    if (dims.empty() || !dims.rbegin()->has_dim_value() || dims.rbegin()->dim_value() != n)
      return "operand '" + b + "' does not end in " + std::to_string(n) + " columns";
    bool row = true;
    for (int i = 0; i + 1 < dims.size(); ++i) row &= dims.Get(i).has_dim_value() && dims.Get(i).dim_value() == 1;
    if (row || SameLeadingDims(*tb, Declared(x)) || SameLeadingDims(*tb, Declared(y))) return "";
    return "operand '" + b + "' is neither " + row_shape +
           " nor provably of Y's shape (a broadcast the kernel cannot do)";
  }

  // [N] or [1, ..., 1, N]: added to every row (the kernel's ld_add = 0).
  static bool IsRowShape(const std::vector<int64_t>& shape, int64_t n) {
    if (shape.empty() || shape.back() != n) return false;
    for (size_t i = 0; i + 1 < shape.size(); ++i)
      if (shape[i] != 1) return false;
    return true;
  }

 private:
  const onnx::TypeProto_Tensor* Declared(const std::string& name) const {
    auto it = declared_.find(name);
    return it == declared_.end() || !it->second->has_shape() ? nullptr : it->second;
  }

  // Same rank and every dim but the last provably equal: then B and Y have one shape (Y's last
  // dim is N by construction, B's was checked by the caller).
  static bool SameLeadingDims(const onnx::TypeProto_Tensor& b, const onnx::TypeProto_Tensor* other) {
    return other && nuphar::SameLeadingDims(b.shape(), other->shape());
  }

  const onnx::GraphProto& graph_;
  const ConstantLookup& lookup_;
  const UseCounts uses_;
  std::unordered_map<std::string, const onnx::TypeProto_Tensor*> declared_;
};

}  // namespace

int FuseDynamicQuantMatMul(onnx::GraphProto* graph, const ConstantLookup& lookup, DynQuantFusionReport* report) {
  std::vector<std::pair<int, onnx::NodeProto>> replacements;
  std::set<int> absorbed_adds;
  {
    Matcher m(*graph, lookup);
    AddAbsorber absorber(*graph, lookup);
    for (int i = 0; i < graph->node_size(); ++i) {
      const auto& n = graph->node(i);
      onnx::NodeProto fused;
      fused.set_op_type(kDynQuantMatMulOp);
      fused.set_domain(kFusedDomain);
      fused.set_name(n.name() + "_fused_dq_matmul");
      const bool match = (n.op_type() == "Sum" && n.domain().empty() && m.MatchAsymm8(n, &fused)) ||
                         (n.op_type() == "Mul" && n.domain().empty() && m.MatchSymm16(n, &fused));
      if (!match) continue;
      const std::string& y = n.output(0);
      const Tensor* wq = lookup(fused.input(1));
      const int64_t cols = wq && wq->rank() == 2 ? wq->dim(1) : -1;
      AddAbsorber::Decision add = absorber.Find(y, fused.input(0), cols);
      if (add.add_index >= 0 && absorbed_adds.count(add.add_index)) {
        add = {.add_index = -1, .refused = true, .reason = "the Add was absorbed by the pattern of its other operand"};
      }
      if (add.add_index >= 0) {
        absorbed_adds.insert(add.add_index);
        while (fused.input_size() < 5) fused.add_input("");  // symm16 has no base/rowsum
        fused.add_input(add.b);
        fused.add_output(graph->node(add.add_index).output(0));
      } else {
        fused.add_output(y);
        if (add.refused && report) report->refused_adds.push_back(n.name() + ": " + add.reason);
      }
      replacements.emplace_back(i, std::move(fused));
    }
  }
  if (report) {
    report->patterns += static_cast<int>(replacements.size());
    report->absorbed_adds += static_cast<int>(absorbed_adds.size());
  }
  if (replacements.empty()) return 0;
  for (auto& [index, fused] : replacements) *graph->mutable_node(index) = std::move(fused);
  for (auto it = absorbed_adds.rbegin(); it != absorbed_adds.rend(); ++it) graph->mutable_node()->DeleteSubrange(*it, 1);
  // Dead-code elimination of this graph only (bodies are fused when they are compiled): a node
  // none of whose outputs is read (graph outputs and reads from subgraphs count) goes, repeatedly.
  // Initializers, graph inputs and value_info stay.
  DeadValueOptions dce;
  dce.follow_producers = false;
  dce.drop_value_info = false;
  dce.all_nodes = true;
  dce.subgraphs = false;
  RemoveDeadValues(graph, /*is_main=*/false, {}, dce);
  return static_cast<int>(replacements.size());
}

namespace {

class DynQuantMatMulFusion final : public RuntimeGraphPass {
 public:
  std::string Name() const override { return "dynamic_quant_matmul_fusion"; }
  bool MayApply(const onnx::GraphProto& graph) const override {
    const auto& nodes = graph.node();
    return std::any_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) {
      return n.op_type() == "MatMulInteger" || n.op_type() == "MatMulInteger16";
    });
  }
  Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) override {
    const int fused = FuseDynamicQuantMatMul(graph, ctx.constants);
    ctx.model.fused_patterns += fused;
    return fused;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateDynQuantMatMulFusion() { return std::make_unique<DynQuantMatMulFusion>(); }

}  // namespace nuphar
