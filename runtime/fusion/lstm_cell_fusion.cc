// Fusion of the int8 LSTM cell (runtime/fusion/lstm_cell_fusion.h).
//
// Before (a to_scan LSTM body after model_quantizer and FuseDynamicQuantMatMul; ONNX gate order
// i, o, f, c, but the roles are read from the data flow, not from the order):
//   Y = DynQuantMatMul(h_prev, Wq, step, base, rowsum[, add])      (asymm8)
//   s0, s1, s2, s3 = Split(Y, axis = last, four equal parts)
//   i = Sigmoid(s_i)  f = Sigmoid(s_f)  g = Tanh(s_c)  o = Sigmoid(s_o)
//   c = Add(Mul(f, c_prev), Mul(i, g))     h = Mul(o, Tanh(c))     (Mul/Add operands in either order)
// After:
//   h, c = com.nuphar.internal.DynQuantLstmCell(h_prev, Wq, step, base, rowsum, add, c_prev)
//   with the DynQuantMatMul's attributes and gates = [part of i, part of o, part of f, part of c].
// Numerics: the kernel computes every op of the pattern in the same order with the same
// roundings (Sigmoid and Tanh by the session's vector math, Mul and Add uncontracted), so h and
// c are bit-identical to the unfused nodes.
// Refused (left as they are), with the reason listed: a symm16 DynQuantMatMul; a Split that is
// not four equal parts of the last axis of h_prev's declared rank (the kernel checks the rank at
// run time); a gate value with another consumer, or a graph output (only h and c may be read
// elsewhere); any other op between the Split and h, c (clip, peepholes, other activations,
// coupled input-forget gates); a c_prev that is a constant, or whose declared shape is not
// h_prev's with H columns; a value of the pattern defined by two nodes (the plan's error).
#include "runtime/fusion/lstm_cell_fusion.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "graph/diagnostics.h"
#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/split_sizes.h"
#include "runtime/core/graph_plan.h"
#include "runtime/core/settings.h"
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"

namespace nuphar {
namespace {

bool IsOnnx(const onnx::NodeProto& n, const char* op) {
  return n.op_type() == op && (n.domain().empty() || n.domain() == "ai.onnx");
}

class CellMatcher {
 public:
  CellMatcher(const onnx::GraphProto& g, const ConstantLookup& lookup, int onnx_opset)
      : g_(g), lookup_(lookup), uses_(g), opset_(onnx_opset) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& in : g.node(i).input())
        if (!in.empty()) consumers_[in].push_back(i);
      for (const auto& out : g.node(i).output())
        if (!out.empty() && ++definitions_[out] == 1) producer_[out] = i;
    }
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
      for (const auto& v : *list)
        if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
          declared_.emplace(v.name(), &v.type().tensor_type());
  }

  struct Cell {
    onnx::NodeProto fused;
    std::vector<int> nodes;  ///< every node of the pattern (the DynQuantMatMul included)
    int c_index = -1;        ///< the Add that makes c: the fused node takes its place
  };

  // The cell around DynQuantMatMul node `d`, or the reason it is none ("" when Y is not split
  // in four at all: not an LSTM candidate, nothing to report).
  bool Match(int d, Cell* cell, std::string* why) const {
    const onnx::NodeProto& dq = g_.node(d);
    const std::string& y = dq.output(0);
    const std::vector<int>* split_at = ConsumersOf(y);
    if (split_at->size() != 1 || !IsOnnx(g_.node(split_at->front()), "Split") ||
        g_.node(split_at->front()).output_size() != 4)
      return false;
    const int s = split_at->front();
    const onnx::NodeProto& split = g_.node(s);
    if (split.input_size() < 1 || split.input(0) != y) return *why = "the product is not the Split's data input", false;
    if (AttrStr(dq, "scheme") != "asymm8") return *why = "not the asymm8 scheme", false;
    const Tensor* wq = lookup_(dq.input(1));
    if (!wq || wq->rank() != 2 || wq->dim(1) % 4 != 0) return *why = "Wq is not 2-D with 4H columns", false;
    const int64_t n = wq->dim(1), h = n / 4;
    if (uses_.Count(y) != 1) return *why = "the product is also read elsewhere", false;
    if (!Declared(dq.input(0))) return *why = "h_prev has no declared shape (the Split's axis cannot be checked)", false;
    if (!SplitsLastAxisInFour(split, dq.input(0), h)) return *why = "the Split is not four equal parts of the last axis", false;
    const int64_t rank = Declared(dq.input(0))->shape().dim_size();
    cell->nodes = {d, s};

    // Each part feeds exactly one Sigmoid or Tanh, read by nothing else.
    int tanh_part = -1;
    std::string act[4];
    std::vector<int> sigmoid_parts;
    for (int p = 0; p < 4; ++p) {
      const int a = SoleConsumer(split.output(p));
      if (a < 0) return *why = "gate part " + std::to_string(p) + " has another consumer", false;
      const onnx::NodeProto& an = g_.node(a);
      if (an.output_size() != 1 || an.input_size() != 1) return *why = "an activation with extra inputs or outputs", false;
      if (IsOnnx(an, "Sigmoid")) {
        sigmoid_parts.push_back(p);
      } else if (IsOnnx(an, "Tanh")) {
        if (tanh_part >= 0)
          return *why = "gate parts " + std::to_string(tanh_part) + " and " + std::to_string(p) + " both go through Tanh",
                 false;
        tanh_part = p;
      } else {
        return *why = "gate part " + std::to_string(p) + " goes through " + an.op_type() + ", not Sigmoid or Tanh", false;
      }
      act[p] = an.output(0);
      cell->nodes.push_back(a);
    }
    if (tanh_part < 0 || sigmoid_parts.size() != 3) return *why = "not three Sigmoid gates and one Tanh", false;
    auto part_of = [&](const std::string& v) {
      for (int p : sigmoid_parts)
        if (act[p] == v) return p;
      return -1;
    };
    // i * g: the Mul that reads Tanh(s_c).
    const int mul_ig = SoleConsumer(act[tanh_part]);
    if (mul_ig < 0 || !IsBinary(g_.node(mul_ig), "Mul")) return *why = "the cell candidate is not multiplied once", false;
    const int part_i = part_of(Other(g_.node(mul_ig), act[tanh_part]));
    if (part_i < 0) return *why = "the cell candidate is not multiplied by a Sigmoid gate", false;
    // c = Add(f * c_prev, i * g).
    const int add_c = SoleConsumer(g_.node(mul_ig).output(0));
    if (add_c < 0 || !IsBinary(g_.node(add_c), "Add")) return *why = "i * g is not added once", false;
    const int mul_fc = ProducerOf(Other(g_.node(add_c), g_.node(mul_ig).output(0)));
    if (mul_fc < 0 || !IsBinary(g_.node(mul_fc), "Mul") || SoleConsumer(g_.node(mul_fc).output(0)) != add_c)
      return *why = "the other term of c is not a Mul read only by it", false;
    int part_f = -1;
    std::string c_prev;
    for (int k = 0; k < 2 && part_f < 0; ++k) {
      const int p = part_of(g_.node(mul_fc).input(k));
      if (p >= 0 && p != part_i) {
        part_f = p;
        c_prev = g_.node(mul_fc).input(1 - k);
      }
    }
    if (part_f < 0) return *why = "the previous cell state is not multiplied by a Sigmoid gate", false;
    // h = Mul(o, Tanh(c)): the one Tanh reading c whose result only that Mul reads.
    const std::string& c = g_.node(add_c).output(0);
    int tanh_c = -1, mul_h = -1, part_o = -1;
    for (int t : *ConsumersOf(c)) {
      if (!IsOnnx(g_.node(t), "Tanh") || g_.node(t).input_size() != 1 || g_.node(t).output_size() != 1) continue;
      const int m = SoleConsumer(g_.node(t).output(0));
      if (m < 0 || !IsBinary(g_.node(m), "Mul")) continue;
      const int p = part_of(Other(g_.node(m), g_.node(t).output(0)));
      if (p < 0 || p == part_i || p == part_f) continue;
      tanh_c = t, mul_h = m, part_o = p;
      break;
    }
    if (tanh_c < 0) return *why = "h is not Mul(Sigmoid gate, Tanh(c))", false;
    for (int p : {part_i, part_f, part_o})
      if (SoleConsumer(act[p]) < 0) return *why = "a Sigmoid gate has another consumer", false;
    // c_prev: a computed float value of Y's leading dims and H columns (the body's state).
    if (lookup_(c_prev)) return *why = "the previous cell state is a constant", false;
    if (!SameRowsAs(c_prev, dq.input(0), h)) return *why = "the previous cell state is not declared [..., H] like h_prev", false;
    cell->nodes.insert(cell->nodes.end(), {mul_ig, add_c, mul_fc, tanh_c, mul_h});
    for (const int v : cell->nodes)
      for (const auto& o : g_.node(v).output()) {
        // (only a graph with a cycle, which the plan refuses, does this)
        if (o == c_prev) return *why = "the previous cell state is computed by the pattern", false;
        // A value defined twice is the plan's error to report; deleting one definition would hide it.
        if (!o.empty() && definitions_.at(o) > 1) return *why = "'" + o + "' is defined more than once", false;
      }
    cell->c_index = add_c;

    onnx::NodeProto& f = cell->fused;
    f.set_op_type(kDynQuantLstmCellOp);
    f.set_domain(kFusedDomain);
    f.set_name(dq.name() + "_lstm_cell");
    for (int k = 0; k < 6; ++k) f.add_input(k < dq.input_size() ? dq.input(k) : "");
    f.add_input(c_prev);
    f.add_output(g_.node(mul_h).output(0));
    f.add_output(c);
    for (const auto& a : dq.attribute())  // the product's own; a stray `gates` or `rank` is not copied
      if (a.name() != "gates" && a.name() != "rank") *f.add_attribute() = a;
    onnx::AttributeProto* rank_attr = f.add_attribute();
    rank_attr->set_name("rank");
    rank_attr->set_type(onnx::AttributeProto::INT);
    rank_attr->set_i(rank);
    onnx::AttributeProto* gates = f.add_attribute();
    gates->set_name("gates");
    gates->set_type(onnx::AttributeProto::INTS);
    for (int p : {part_i, part_o, part_f, tanh_part}) gates->add_ints(p);
    return true;
  }

 private:
  static std::string AttrStr(const onnx::NodeProto& n, const char* name) {
    const onnx::AttributeProto* a = FindAttr(n, name);
    return a ? a->s() : "";
  }
  static bool IsBinary(const onnx::NodeProto& n, const char* op) {
    return IsOnnx(n, op) && n.input_size() == 2 && n.output_size() == 1 && n.input(0) != n.input(1);
  }
  // The operand of binary `n` that is not `known`, or "" when `known` is not one.
  static std::string Other(const onnx::NodeProto& n, const std::string& known) {
    if (n.input_size() != 2) return "";
    return n.input(0) == known ? n.input(1) : n.input(1) == known ? n.input(0) : "";
  }
  const std::vector<int>* ConsumersOf(const std::string& v) const {
    static const std::vector<int> kNone;
    auto it = consumers_.find(v);
    return it == consumers_.end() ? &kNone : &it->second;
  }
  // The node that alone reads `v` (once), when nothing else does (no graph output, no subgraph).
  int SoleConsumer(const std::string& v) const {
    const std::vector<int>* c = ConsumersOf(v);
    return c->size() == 1 && uses_.Count(v) == 1 ? c->front() : -1;
  }
  int ProducerOf(const std::string& v) const {
    auto it = producer_.find(v);
    return it == producer_.end() ? -1 : it->second;
  }
  const onnx::TypeProto_Tensor* Declared(const std::string& name) const {
    auto it = declared_.find(name);
    return it == declared_.end() ? nullptr : it->second;
  }
  // Split of the last axis of X's declared rank into four parts of h, its sizes read as the Split
  // kernel reads them (graph/split_sizes.h).
  bool SplitsLastAxisInFour(const onnx::NodeProto& split, const std::string& x, int64_t h) const {
    const onnx::TypeProto_Tensor* tx = Declared(x);
    if (!tx) return false;
    std::optional<std::vector<int64_t>> constant_sizes;
    if (split.input_size() > 1 && !split.input(1).empty())
      if (const Tensor* t = lookup_(split.input(1)); t && t->dtype() == DType::kInt64)
        constant_sizes.emplace(t->data<int64_t>(), t->data<int64_t>() + t->size());
    const std::vector<int64_t> sizes = LastAxisSplitSizes(split, opset_, tx->shape().dim_size(), 4 * h,
                                                          constant_sizes ? &*constant_sizes : nullptr);
    return sizes == std::vector<int64_t>(4, h);
  }
  // `v` is declared float with x's rank, x's dims but the last, and h columns: then Mul(f, c_prev)
  // needs no broadcast and c_prev has the rows of h_prev.
  bool SameRowsAs(const std::string& v, const std::string& x, int64_t h) const {
    const onnx::TypeProto_Tensor* tv = Declared(v);
    const onnx::TypeProto_Tensor* tx = Declared(x);
    if (!tv || !tx || tv->elem_type() != onnx::TensorProto::FLOAT) return false;
    const auto& dims = tv->shape().dim();
    return !dims.empty() && dims.rbegin()->has_dim_value() && dims.rbegin()->dim_value() == h &&
           SameLeadingDims(tv->shape(), tx->shape());
  }

  const onnx::GraphProto& g_;
  const ConstantLookup& lookup_;
  const UseCounts uses_;
  const int opset_;  ///< the graph's ONNX opset (Split's forms)
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> producer_;     ///< value -> its first defining node
  std::unordered_map<std::string, int> definitions_;  ///< value -> how many nodes define it
  std::unordered_map<std::string, const onnx::TypeProto_Tensor*> declared_;
};

}  // namespace

int FuseDynQuantLstmCell(onnx::GraphProto* graph, const ConstantLookup& lookup, int onnx_opset,
                         std::vector<std::string>* refusals) {
  std::vector<CellMatcher::Cell> cells;
  {
    CellMatcher m(*graph, lookup, onnx_opset);
    std::set<int> taken;
    for (int i = 0; i < graph->node_size(); ++i) {
      const onnx::NodeProto& n = graph->node(i);
      if (n.domain() != kFusedDomain || n.op_type() != kDynQuantMatMulOp || n.output_size() != 1 || n.input_size() < 5)
        continue;
      CellMatcher::Cell cell;
      std::string why;
      if (!m.Match(i, &cell, &why)) {
        if (!why.empty() && refusals) refusals->push_back(n.name() + ": " + why);
        continue;
      }
      if (std::any_of(cell.nodes.begin(), cell.nodes.end(), [&](int k) { return taken.count(k) > 0; })) continue;
      taken.insert(cell.nodes.begin(), cell.nodes.end());
      cells.push_back(std::move(cell));
    }
  }
  if (cells.empty()) return 0;
  // The fused node takes the place of the Add that made c: every input it reads is defined before
  // that Add (h_prev and add before the product, c_prev before f * c_prev), and every reader of h
  // or c comes after it (h's Mul comes after the Add).
  std::set<int> removed;
  for (auto& cell : cells) {
    *graph->mutable_node(cell.c_index) = std::move(cell.fused);
    for (int k : cell.nodes)
      if (k != cell.c_index) removed.insert(k);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph->node_size(); ++i)
    if (!removed.count(i)) kept.Add()->Swap(graph->mutable_node(i));
  graph->mutable_node()->Swap(&kept);
  return static_cast<int>(cells.size());
}

namespace {

class DynQuantLstmCellFusion final : public RuntimeGraphPass {
 public:
  std::string Name() const override { return "dq_lstm_cell_fusion"; }
  // Asked of the graph before any pass ran: the DynQuantMatMul may still be the quantizer's
  // MatMulInteger pattern then.
  bool MayApply(const onnx::GraphProto& graph) const override {
    const auto& nodes = graph.node();
    return std::any_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) {
      return (n.domain() == kFusedDomain && n.op_type() == kDynQuantMatMulOp) || n.op_type() == "MatMulInteger" ||
             n.op_type() == "MatMulInteger16";
    });
  }
  Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) override {
    std::vector<std::string> refusals;
    const int fused = FuseDynQuantLstmCell(graph, ctx.constants, ctx.model.OpsetFor(""), &refusals);
    ctx.model.fused_patterns += fused;
    ctx.model.AddCounter("fused_lstm_cells", fused);
    if (ctx.model.settings && ctx.model.settings->Has("nuphar_dump_partition"))
      for (const auto& r : refusals)
        ReportDiagnostic(Severity::kNote, "nuphar_dump_partition: LSTM cell left unfused: " + r);
    return fused;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateDynQuantLstmCellFusion() { return std::make_unique<DynQuantLstmCellFusion>(); }

}  // namespace nuphar
