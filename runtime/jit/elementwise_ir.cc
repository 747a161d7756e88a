// Partition body -> elementwise kernel IR (elementwise_ir.h).
#include "runtime/jit/elementwise_ir.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>

#include "graph/node_builder.h"

namespace nuphar::jit {
namespace {

bool DimKnown(const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_value() || (d.has_dim_param() && !d.dim_param().empty());
}
bool DimEqual(const onnx::TensorShapeProto::Dimension& a, const onnx::TensorShapeProto::Dimension& b) {
  if (a.has_dim_value() && b.has_dim_value()) return a.dim_value() == b.dim_value();
  return a.has_dim_param() && b.has_dim_param() && !a.dim_param().empty() && a.dim_param() == b.dim_param();
}
bool DimIsOne(const onnx::TensorShapeProto::Dimension& d) { return d.has_dim_value() && d.dim_value() == 1; }

struct OpInfo {
  const char* onnx;
  OpKind kind;
  int arity;  // -1: variadic (folded left to right as the reference does)
};

constexpr OpInfo kOps[] = {
    {"Add", OpKind::kAdd, 2},        {"Sub", OpKind::kSub, 2},          {"Mul", OpKind::kMul, 2},
    {"Div", OpKind::kDiv, 2},        {"Max", OpKind::kMax, -1},         {"Min", OpKind::kMin, -1},
    {"Sum", OpKind::kAdd, -1},       {"Neg", OpKind::kNeg, 1},          {"Abs", OpKind::kAbs, 1},
    {"Relu", OpKind::kRelu, 1},      {"Sqrt", OpKind::kSqrt, 1},        {"Reciprocal", OpKind::kReciprocal, 1},
    {"Floor", OpKind::kFloor, 1},    {"Ceil", OpKind::kCeil, 1},        {"Exp", OpKind::kExp, 1},
    {"Log", OpKind::kLog, 1},        {"LeakyRelu", OpKind::kLeakyRelu, 1}, {"HardSigmoid", OpKind::kHardSigmoid, 1},
    {"Clip", OpKind::kClip, 1},      {"Identity", OpKind::kIdentity, 1}, {"Sigmoid", OpKind::kSigmoid, 1},
    {"Tanh", OpKind::kTanh, 1},      {"Pow", OpKind::kPow, 2},          {"PRelu", OpKind::kPRelu, 2},
};

const OpInfo* FindOp(const std::string& op_type) {
  for (const OpInfo& o : kOps)
    if (op_type == o.onnx) return &o;
  return nullptr;
}

}  // namespace

bool HasElementwiseGenerator(const std::string& op_type) { return FindOp(op_type) != nullptr; }

bool ElementwiseGeneratorTakes(const std::string& op_type, int input_count) {
  const OpInfo* info = FindOp(op_type);
  if (!info) return false;
  if (info->arity == -1) return input_count >= 1;
  if (info->kind == OpKind::kClip) return input_count >= 1 && input_count <= 3;  // Clip-11: min, max inputs
  return input_count == info->arity;
}

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd: return "Add";
    case OpKind::kSub: return "Sub";
    case OpKind::kMul: return "Mul";
    case OpKind::kDiv: return "Div";
    case OpKind::kMax: return "Max";
    case OpKind::kMin: return "Min";
    case OpKind::kNeg: return "Neg";
    case OpKind::kAbs: return "Abs";
    case OpKind::kRelu: return "Relu";
    case OpKind::kSqrt: return "Sqrt";
    case OpKind::kReciprocal: return "Reciprocal";
    case OpKind::kFloor: return "Floor";
    case OpKind::kCeil: return "Ceil";
    case OpKind::kExp: return "Exp";
    case OpKind::kLog: return "Log";
    case OpKind::kLeakyRelu: return "LeakyRelu";
    case OpKind::kHardSigmoid: return "HardSigmoid";
    case OpKind::kClip: return "Clip";
    case OpKind::kIdentity: return "Identity";
    case OpKind::kSigmoid: return "Sigmoid";
    case OpKind::kTanh: return "Tanh";
    case OpKind::kPow: return "Pow";
    case OpKind::kPRelu: return "PRelu";
    case OpKind::kColumnSlice: return "ColumnSlice";
  }
  return "?";
}

bool IsScalarConstantOperand(const onnx::NodeProto& node, int k) {
  return (node.op_type() == "Clip" && k > 0) || (node.op_type() == "Pow" && k == 1);
}

bool IsActivationCall(OpKind kind) {
  return kind == OpKind::kSigmoid || kind == OpKind::kTanh || kind == OpKind::kLog;
}

std::vector<int64_t> LastAxisSplitSizes(const onnx::NodeProto& split, int64_t rank, int64_t width,
                                        const std::vector<int64_t>* constant_sizes) {
  const int64_t axis = AttrInt(split, "axis", 0);
  std::vector<int64_t> sizes = AttrInts(split, "split").value_or(std::vector<int64_t>{});
  if (rank < 1 || width < 0 || (axis != -1 && axis != rank - 1)) return {};
  if (split.input_size() > 1 && !split.input(1).empty()) {
    if (!constant_sizes) return {};
    sizes = *constant_sizes;
  }
  const int64_t parts = split.output_size();
  if (sizes.empty()) {
    if (parts < 1 || width % parts != 0) return {};
    sizes.assign(static_cast<size_t>(parts), width / parts);
  }
  int64_t total = 0;
  for (int64_t v : sizes) {
    if (v < 0 || v > width) return {};  // also keeps the sum from overflowing
    total += v;
  }
  if (static_cast<int64_t>(sizes.size()) != parts || total != width) return {};
  return sizes;
}

bool SameDeclaredShape(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b) {
  if (a.dim_size() != b.dim_size()) return false;
  for (int i = 0; i < a.dim_size(); ++i)
    if (!DimEqual(a.dim(i), b.dim(i))) return false;
  return true;
}

bool ClassifyAccess(const onnx::TensorShapeProto& in, const onnx::TensorShapeProto& out, Access* access,
                    std::string* why) {
  const int ri = in.dim_size(), ro = out.dim_size();
  for (const auto& d : in.dim())
    if (!DimKnown(d)) return *why = "a dim of unknown size", false;
  for (const auto& d : out.dim())
    if (!DimKnown(d)) return *why = "an output dim of unknown size", false;
  if (ri > ro) return *why = "the input has a higher rank than the result", false;
  bool all_one = true;
  for (const auto& d : in.dim()) all_one &= DimIsOne(d);
  if (all_one) return *access = Access::kScalar, true;
  if (SameDeclaredShape(in, out)) return *access = Access::kFull, true;
  if (ro == 0) return *why = "a scalar result", false;
  // Row: [1, ..., 1, cols] (any rank up to the result's).
  bool leading_one = true;
  for (int i = 0; i + 1 < ri; ++i) leading_one &= DimIsOne(in.dim(i));
  if (ri >= 1 && leading_one && DimEqual(in.dim(ri - 1), out.dim(ro - 1))) return *access = Access::kRow, true;
  // Column: [rows..., 1] of the result's rank.
  if (ri == ro && DimIsOne(in.dim(ri - 1))) {
    bool rows_equal = true;
    for (int i = 0; i + 1 < ri; ++i) rows_equal &= DimEqual(in.dim(i), out.dim(i));
    if (rows_equal) return *access = Access::kColumn, true;
  }
  return *why = "a broadcast that is neither a row, a column nor a scalar", false;
}

std::string ElementwiseIR::ToText() const {
  static const char* kAccess[] = {"full", "row", "column", "scalar", "sliced"};
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i)
    s += "v" + std::to_string(i) + " = input " + kAccess[static_cast<int>(inputs[i])] +
         (inputs[i] == Access::kSliced ? " " + std::to_string(input_widths[i]) : std::string()) + "\n";
  for (size_t k = 0; k < ops.size(); ++k) {
    const IrOp& op = ops[k];
    s += "v" + std::to_string(inputs.size() + k) + " = " + OpKindName(op.kind) + " v" + std::to_string(op.a);
    if (op.b >= 0) s += " v" + std::to_string(op.b);
    if (op.kind == OpKind::kColumnSlice) s += " @" + std::to_string(op.offset);
    if (op.kind == OpKind::kLeakyRelu || op.kind == OpKind::kHardSigmoid || op.kind == OpKind::kClip ||
        op.kind == OpKind::kPow) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %a %a", op.alpha, op.beta);  // exact: the text is the identity
      s += buf;
    }
    s += "\n";
  }
  s += "outputs";
  for (int o : outputs) s += " v" + std::to_string(o);
  s += "\n";
  return s;
}

Expected<ElementwiseIR> BuildElementwiseIR(const onnx::GraphProto& body) {
  ElementwiseIR ir;
  if (body.output_size() == 0) return Diag::Msg("jit: a partition without outputs");
  const onnx::TensorShapeProto& space = body.output(0).type().tensor_type().shape();
  std::unordered_map<std::string, int> value_of;
  std::unordered_map<std::string, int> split_uses, other_uses;
  for (const auto& n : body.node())
    for (int i = 0; i < n.input_size(); ++i)
      if (!(n.op_type() == "Split" && i == 1)) ++(n.op_type() == "Split" ? split_uses : other_uses)[n.input(i)];
  const int r = space.dim_size();
  const bool static_cols = r > 0 && space.dim(r - 1).has_dim_value();
  for (const auto& in : body.input()) {
    Access access;
    std::string why;
    int64_t width = 0;
    if (!in.type().tensor_type().has_shape()) return Diag::Msg("jit: input '" + in.name() + "' has no shape");
    const auto& in_shape = in.type().tensor_type().shape();
    if (split_uses.count(in.name())) {
      if (other_uses.count(in.name()))
        return Diag::Msg("jit: input '" + in.name() + "' is read by a Split and by other ops");
      bool rows_equal = in_shape.dim_size() == r && static_cols && in_shape.dim(r - 1).has_dim_value();
      for (int i = 0; rows_equal && i + 1 < r; ++i) rows_equal = DimEqual(in_shape.dim(i), space.dim(i));
      if (!rows_equal) return Diag::Msg("jit: input '" + in.name() + "' is not split along the kernel's last axis");
      access = Access::kSliced;
      width = in_shape.dim(r - 1).dim_value();
      ir.slice_cols = space.dim(r - 1).dim_value();
    } else if (!ClassifyAccess(in_shape, space, &access, &why)) {
      return Diag::Msg("jit: input '" + in.name() + "' cannot be read: " + why);
    }
    value_of[in.name()] = static_cast<int>(ir.inputs.size());
    ir.inputs.push_back(access);
    ir.input_widths.push_back(width);
  }
  std::unordered_map<std::string, float> scalar_constants;
  std::unordered_map<std::string, std::vector<int64_t>> int_constants;
  for (const auto& t : body.initializer()) {
    if (t.data_type() == onnx::TensorProto::FLOAT && t.float_data_size() == 1) scalar_constants[t.name()] = t.float_data(0);
    if (t.data_type() == onnx::TensorProto::INT64)
      int_constants[t.name()].assign(t.int64_data().begin(), t.int64_data().end());
  }
  std::unordered_map<std::string, int> reads;  // uses of each value inside the body
  for (const auto& n : body.node())
    for (const auto& in : n.input()) ++reads[in];
  for (const auto& o : body.output()) ++reads[o.name()];

  auto next_id = [&] { return static_cast<int>(ir.inputs.size() + ir.ops.size()); };
  auto operand = [&](const onnx::NodeProto& n, int i) -> Expected<int> {
    // A node short of inputs (a broken or hostile file; found by tests/fuzz) is an error here,
    // never an index past the end of its input list.
    if (i >= n.input_size())
      return Diag::Node(n, "jit: has " + std::to_string(n.input_size()) + " input(s); operand " + std::to_string(i) +
                               " is missing");
    auto it = value_of.find(n.input(i));
    if (it == value_of.end()) return Diag::Node(n, "jit: operand '" + n.input(i) + "' is not a partition value");
    return it->second;
  };
  for (const auto& n : body.node()) {
    if (n.op_type() == "Split") {  // the outputs this kernel reads are views of a sliced input
      NUPHAR_ASSIGN_OR_RETURN(int src, operand(n, 0));
      if (src >= static_cast<int>(ir.inputs.size()) || ir.inputs[static_cast<size_t>(src)] != Access::kSliced)
        return Diag::Node(n, "jit: a Split must read a kernel input");
      const std::vector<int64_t>* constant_sizes = nullptr;
      if (n.input_size() > 1 && !n.input(1).empty()) {
        auto it = int_constants.find(n.input(1));
        if (it == int_constants.end()) return Diag::Node(n, "jit: the split sizes are not a constant");
        constant_sizes = &it->second;
      }
      const std::vector<int64_t> sizes =
          LastAxisSplitSizes(n, r, ir.input_widths[static_cast<size_t>(src)], constant_sizes);
      if (sizes.empty()) return Diag::Node(n, "jit: not a split of the last axis into known sizes");
      int64_t offset = 0;
      for (int k = 0; k < n.output_size(); ++k) {
        const int64_t size = sizes[static_cast<size_t>(k)];
        if (!n.output(k).empty() && reads.count(n.output(k))) {
          if (size != ir.slice_cols) return Diag::Node(n, "jit: a split output this kernel reads is not its width");
          IrOp slice;
          slice.kind = OpKind::kColumnSlice;
          slice.node = n.name();
          slice.a = src;
          slice.offset = offset;
          ir.ops.push_back(slice);
          value_of[n.output(k)] = next_id() - 1;
        }
        offset += size;
      }
      continue;
    }
    const OpInfo* info = FindOp(n.op_type());
    if (!info) return Diag::Node(n, "jit: op '" + n.op_type() + "' has no elementwise code generator");
    if (n.output_size() != 1) return Diag::Node(n, "jit: expected one output");
    if (!ElementwiseGeneratorTakes(n.op_type(), n.input_size()))
      return Diag::Node(n, "jit: " + std::to_string(n.input_size()) + " input(s) is not what " + n.op_type() + " takes");
    IrOp op;
    op.kind = info->kind;
    op.node = n.name();
    if (info->arity == -1) {  // variadic: fold left to right
      if (n.input_size() < 1) return Diag::Node(n, "jit: no inputs");
      NUPHAR_ASSIGN_OR_RETURN(int acc, operand(n, 0));
      if (n.input_size() == 1) {
        op.kind = OpKind::kIdentity;
        op.a = acc;
        ir.ops.push_back(op);
        acc = next_id() - 1;
      }
      for (int i = 1; i < n.input_size(); ++i) {
        NUPHAR_ASSIGN_OR_RETURN(int b, operand(n, i));
        IrOp step = op;
        step.a = acc;
        step.b = b;
        ir.ops.push_back(step);
        acc = next_id() - 1;
      }
      value_of[n.output(0)] = acc;
      continue;
    }
    NUPHAR_ASSIGN_OR_RETURN(op.a, operand(n, 0));
    if (op.kind == OpKind::kPow) {  // x ^ e for a scalar constant e
      auto c = scalar_constants.find(n.input(1));
      if (c == scalar_constants.end()) return Diag::Node(n, "jit: Pow's exponent must be a scalar constant");
      op.alpha = c->second;
    } else if (info->arity == 2) {
      if (n.input_size() != 2) return Diag::Node(n, "jit: expected two inputs");
      NUPHAR_ASSIGN_OR_RETURN(op.b, operand(n, 1));
    }
    if (op.kind == OpKind::kLeakyRelu) op.alpha = AttrFloat(n, "alpha", 0.01f);
    if (op.kind == OpKind::kHardSigmoid) {
      op.alpha = AttrFloat(n, "alpha", 0.2f);
      op.beta = AttrFloat(n, "beta", 0.5f);
    }
    if (op.kind == OpKind::kClip) {
      op.alpha = AttrFloat(n, "min", std::numeric_limits<float>::lowest());
      op.beta = AttrFloat(n, "max", std::numeric_limits<float>::max());
      for (int i = 1; i < n.input_size() && i <= 2; ++i) {
        if (n.input(i).empty()) continue;
        auto c = scalar_constants.find(n.input(i));
        if (c == scalar_constants.end()) return Diag::Node(n, "jit: Clip bounds must be scalar float constants");
        (i == 1 ? op.alpha : op.beta) = c->second;
      }
    }
    ir.ops.push_back(op);
    value_of[n.output(0)] = next_id() - 1;
  }
  for (const auto& out : body.output()) {
    auto it = value_of.find(out.name());
    if (it == value_of.end()) return Diag::Msg("jit: partition output '" + out.name() + "' is not computed");
    if (!SameDeclaredShape(out.type().tensor_type().shape(), space))
      return Diag::Msg("jit: partition output '" + out.name() + "' does not have the kernel's shape");
    ir.outputs.push_back(it->second);
  }
  return ir;
}

}  // namespace nuphar::jit
