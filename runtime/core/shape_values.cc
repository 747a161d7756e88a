// Values the input shapes decide (shape_values.h).
#include "runtime/core/shape_values.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <unordered_set>

#include "graph/graph_view.h"
#include "runtime/core/graph_rewrite.h"

namespace nuphar {
namespace {

// Ops whose output shapes follow from their input shapes and attributes alone, and whose
// contents are a deterministic function of their inputs. Dropout is left out (random in
// training mode), as are ops with subgraphs and ops of a data-dependent output shape.
const std::unordered_set<std::string>& ShapeFromShapesOps() {
  static const std::unordered_set<std::string> ops = {
      // elementwise
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf", "Exp", "Floor",
      "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Neg", "Not", "Reciprocal", "Relu",
      "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh",
      "ThresholdedRelu", "Elu", "Celu", "Gelu", "Mish", "Cast", "CastLike", "Add", "Sub", "Mul", "Div", "Pow", "Mod",
      "Max", "Min", "Sum", "Mean", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
      "Where", "PRelu", "BitShift", "Clip",
      // products, normalization, pooling, recurrences (sequence_lens does not change a shape)
      "MatMul", "Gemm", "Conv", "ConvTranspose", "MatMulInteger", "ConvInteger", "BatchNormalization",
      "InstanceNormalization", "LayerNormalization", "Softmax", "LogSoftmax", "Hardmax", "MaxPool", "AveragePool",
      "LpPool", "GlobalAveragePool", "GlobalMaxPool", "LRN", "LSTM", "GRU", "RNN", "ArgMax", "ArgMin",
      "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "CumSum",
      // data movement whose shape is in its attributes or its inputs' shapes
      "Transpose", "Flatten", "Concat", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements",
      "DepthToSpace", "SpaceToDepth", "Trilu", "EyeLike"};
  return ops;
}

// Ops that are in the table only up to an opset, and the inputs whose contents set the output
// shape from that opset on (before it, those parameters are attributes).
struct ParamOp {
  const char* op;
  int from_opset;  ///< the parameters are inputs from this opset (0: always)
  std::vector<int> params;
};
const std::vector<ParamOp>& ParamOps() {
  static const std::vector<ParamOp> ops = {
      {"Reshape", 0, {1}},          {"Expand", 0, {1}},          {"Tile", 0, {1}},
      {"Slice", 10, {1, 2, 3, 4}},  {"Squeeze", 13, {1}},        {"Unsqueeze", 13, {1}},
      {"Split", 13, {1}},           {"Pad", 11, {1, 3}},         {"ConstantOfShape", 0, {0}},
      {"Range", 0, {0, 1, 2}},      {"Resize", 0, {1, 2, 3}},    {"Upsample", 9, {1}},
      {"TopK", 10, {1}},            {"OneHot", 0, {1}},          {"ReduceSum", 13, {1}},
      {"ReduceMean", 18, {1}},      {"ReduceMax", 18, {1}},      {"ReduceMin", 18, {1}},
      {"ReduceProd", 18, {1}},      {"ReduceL1", 18, {1}},       {"ReduceL2", 18, {1}},
      {"ReduceLogSum", 18, {1}},    {"ReduceLogSumExp", 18, {1}}, {"ReduceSumSquare", 18, {1}},
      {"Constant", 0, {}}};
  return ops;
}

// The runtime's fused ops whose shapes follow from their inputs' shapes (runtime/fusion/).
bool IsShapeFromShapesFusedOp(const std::string& op) {
  return op == "FusedConv" || op == "MatMulAddBias" || op == "DynQuantMatMul" || op == "DynQuantLstmCell";
}

// The inputs whose contents set the output shape, or nullopt when the op is not in the table.
std::optional<std::vector<int>> ShapeParams(const onnx::NodeProto& node, int opset) {
  const std::string& op = node.op_type();
  if (node.domain() == kFusedDomain) {
    if (IsShapeFromShapesFusedOp(op)) return std::vector<int>{};
    return std::nullopt;
  }
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (ShapeFromShapesOps().count(op)) return std::vector<int>{};
  for (const ParamOp& p : ParamOps())
    if (op == p.op) return opset >= p.from_opset ? p.params : std::vector<int>{};
  return std::nullopt;
}

struct Decided {
  std::unordered_set<std::string> shape, value;
};

class Walker {
 public:
  Walker(const std::function<bool(const std::string&)>& is_constant, const std::function<int(const std::string&)>& opset)
      : is_constant_(is_constant), opset_(opset) {}

  // Classifies `node`'s outputs into `d`; true when they are all value-decided.
  bool Visit(const onnx::NodeProto& node, Decided& d) const {
    auto shape_known = [&](const std::string& n) { return n.empty() || d.shape.count(n) || is_constant_(n); };
    auto value_known = [&](const std::string& n) { return n.empty() || d.value.count(n) || is_constant_(n); };
    bool all_values = true, all_shapes = true;
    for (const auto& in : node.input()) {
      all_values &= value_known(in);
      all_shapes &= shape_known(in);
    }
    bool outputs_shape = false, outputs_value = false;
    if (node.domain() == kFusedDomain && node.op_type() == kPartitionOp) {
      return VisitPartition(node, d);
    } else if (((node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "If") ||
               (node.domain() == kFusedDomain && node.op_type() == kWholeIfOp)) {
      return VisitIf(node, d);
    } else if (!Subgraphs(node).empty()) {
      // Loop, Scan: decide nothing.
    } else if ((node.domain().empty() || node.domain() == "ai.onnx") &&
               (node.op_type() == "Shape" || node.op_type() == "Size")) {
      outputs_shape = true;
      outputs_value = node.input_size() == 1 && shape_known(node.input(0));
    } else if (auto params = ShapeParams(node, opset_(node.domain()))) {
      bool params_known = true;
      for (int p : *params)
        if (p < node.input_size()) params_known &= value_known(node.input(p));
      outputs_shape = all_shapes && params_known;
      outputs_value = all_values;
    }
    for (const auto& o : node.output()) {
      if (o.empty()) continue;
      if (outputs_shape || outputs_value) d.shape.insert(o);
      if (outputs_value) d.value.insert(o);
    }
    return outputs_value && node.output_size() > 0;
  }

 private:
  // A partition computes its outputs from its inputs with the nodes of its body: the body's
  // inputs and outputs match the node's by position, its initializers are constants.
  bool VisitPartition(const onnx::NodeProto& node, Decided& outer) const {
    const onnx::GraphProto* body = nullptr;
    for (const auto& a : node.attribute())
      if (a.name() == "body" && a.has_g()) body = &a.g();
    if (!body || body->input_size() != node.input_size() || body->output_size() != node.output_size()) return false;
    Decided inner;
    auto outer_shape = [&](const std::string& n) { return n.empty() || outer.shape.count(n) || is_constant_(n); };
    auto outer_value = [&](const std::string& n) { return n.empty() || outer.value.count(n) || is_constant_(n); };
    for (int b = 0; b < body->input_size(); ++b) {
      if (outer_shape(node.input(b))) inner.shape.insert(body->input(b).name());
      if (outer_value(node.input(b))) inner.value.insert(body->input(b).name());
    }
    for (const auto& init : body->initializer()) {
      inner.shape.insert(init.name());
      inner.value.insert(init.name());
    }
    // The outer is_constant_ must not answer for body names: a body value may share a name with
    // an outer constant only if it is that constant, which the copy above already covers.
    Walker body_walker(no_constant_, opset_);
    for (const auto& n : body->node()) body_walker.Visit(n, inner);
    bool all_values = node.output_size() > 0;
    for (int o = 0; o < body->output_size(); ++o) {
      const std::string& name = body->output(o).name();
      const bool value = inner.value.count(name) > 0;
      all_values &= value;
      if (node.output(o).empty()) continue;
      if (value || inner.shape.count(name)) outer.shape.insert(node.output(o));
      if (value) outer.value.insert(node.output(o));
    }
    return all_values;
  }

  // An If whose condition the shapes decide takes the same branch whenever they repeat: an
  // output is shape-decided (value-decided) when it is so in both branches, walked with what is
  // decided outside them (a branch reads outer values by name; a whole If's inputs after the
  // condition are those values too).
  bool VisitIf(const onnx::NodeProto& node, Decided& outer) const {
    if (node.input_size() < 1 || !(outer.value.count(node.input(0)) || is_constant_(node.input(0)))) return false;
    const onnx::GraphProto* branches[2] = {nullptr, nullptr};
    for (const auto& a : node.attribute()) {
      if (a.name() == "then_branch" && a.has_g()) branches[0] = &a.g();
      if (a.name() == "else_branch" && a.has_g()) branches[1] = &a.g();
    }
    if (!branches[0] || !branches[1]) return false;
    Decided inner[2] = {outer, outer};
    for (int b = 0; b < 2; ++b) {
      if (branches[b]->output_size() != node.output_size()) return false;
      for (const auto& init : branches[b]->initializer()) {
        inner[b].shape.insert(init.name());
        inner[b].value.insert(init.name());
      }
      for (const auto& n : branches[b]->node()) Visit(n, inner[b]);
    }
    bool all_values = node.output_size() > 0;
    for (int o = 0; o < node.output_size(); ++o) {
      const std::string &then_name = branches[0]->output(o).name(), &else_name = branches[1]->output(o).name();
      const bool value = inner[0].value.count(then_name) && inner[1].value.count(else_name);
      const bool shape = value || (inner[0].shape.count(then_name) && inner[1].shape.count(else_name));
      all_values &= value;
      if (node.output(o).empty()) continue;
      if (shape) outer.shape.insert(node.output(o));
      if (value) outer.value.insert(node.output(o));
    }
    return all_values;
  }

  const std::function<bool(const std::string&)>& is_constant_;
  const std::function<int(const std::string&)>& opset_;
  inline static const std::function<bool(const std::string&)> no_constant_ = [](const std::string&) { return false; };
};

}  // namespace

std::vector<bool> FindValueDecidedNodes(const onnx::GraphProto& graph, const std::vector<int>& order,
                                        const std::function<bool(const std::string&)>& is_constant,
                                        const std::function<int(const std::string&)>& opset,
                                        const std::vector<std::string>& outer_values) {
  Decided d;
  for (const auto& in : graph.input()) d.shape.insert(in.name());
  d.shape.insert(outer_values.begin(), outer_values.end());
  std::vector<bool> decided(static_cast<size_t>(graph.node_size()), false);
  Walker walker(is_constant, opset);
  for (int idx : order) {
    const onnx::NodeProto& node = graph.node(idx);
    decided[static_cast<size_t>(idx)] = walker.Visit(node, d);
  }
  return decided;
}

}  // namespace nuphar
