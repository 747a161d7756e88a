// Partition body -> elementwise kernel IR (elementwise_ir.h).
#include "runtime/jit/elementwise_ir.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>

#include "graph/node_builder.h"
#include "graph/split_sizes.h"

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

// Which element types an op takes (ElementwiseResultType).
enum class Types : uint8_t {
  kFloat,       // float only
  kNumber,      // float, int32 or int64, all operands alike; the result has their type
  kInteger,     // int32 or int64 (Mod)
  kCompare,     // float, int32 or int64 (Equal also bool), operands alike -> bool
  kLogic,       // bool -> bool
  kSelect,      // Where: a bool condition, then two values alike of any type
  kConvert,     // Cast: any type to the attribute's
};

struct OpInfo {
  const char* onnx;
  OpKind kind;
  int arity;  // -1: variadic (folded left to right as the reference does)
  Types types = Types::kFloat;
  int min_opset = 6;  // below it the op has another schema (legacy broadcast attributes, Cast's string 'to')
};

constexpr OpInfo kOps[] = {
    {"Add", OpKind::kAdd, 2, Types::kNumber},   {"Sub", OpKind::kSub, 2, Types::kNumber},
    {"Mul", OpKind::kMul, 2, Types::kNumber},   {"Div", OpKind::kDiv, 2, Types::kNumber},
    {"Max", OpKind::kMax, -1, Types::kNumber},  {"Min", OpKind::kMin, -1, Types::kNumber},
    {"Sum", OpKind::kAdd, -1, Types::kNumber},  {"Neg", OpKind::kNeg, 1, Types::kNumber},
    {"Abs", OpKind::kAbs, 1, Types::kNumber},
    {"Relu", OpKind::kRelu, 1},      {"Sqrt", OpKind::kSqrt, 1},        {"Reciprocal", OpKind::kReciprocal, 1},
    {"Floor", OpKind::kFloor, 1},    {"Ceil", OpKind::kCeil, 1},        {"Exp", OpKind::kExp, 1},
    {"Log", OpKind::kLog, 1},        {"LeakyRelu", OpKind::kLeakyRelu, 1}, {"HardSigmoid", OpKind::kHardSigmoid, 1},
    {"Clip", OpKind::kClip, 1},      {"Identity", OpKind::kIdentity, 1}, {"Sigmoid", OpKind::kSigmoid, 1},
    {"Tanh", OpKind::kTanh, 1},      {"Pow", OpKind::kPow, 2},          {"PRelu", OpKind::kPRelu, 2},
    {"Mod", OpKind::kModFloor, 2, Types::kInteger, 10},
    {"Equal", OpKind::kEqual, 2, Types::kCompare, 7},
    {"Less", OpKind::kLess, 2, Types::kCompare, 7},
    {"Greater", OpKind::kGreater, 2, Types::kCompare, 7},
    {"LessOrEqual", OpKind::kLessOrEqual, 2, Types::kCompare, 12},
    {"GreaterOrEqual", OpKind::kGreaterOrEqual, 2, Types::kCompare, 12},
    {"Not", OpKind::kNot, 1, Types::kLogic},
    {"And", OpKind::kAnd, 2, Types::kLogic, 7},
    {"Or", OpKind::kOr, 2, Types::kLogic, 7},
    {"Xor", OpKind::kXor, 2, Types::kLogic, 7},
    {"Where", OpKind::kWhere, 3, Types::kSelect, 9},
    {"Cast", OpKind::kCast, 1, Types::kConvert},
    {"BatchNormalization", OpKind::kBatchNorm, 5, Types::kFloat, 7},
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
    case OpKind::kModFloor: return "ModFloor";
    case OpKind::kModTrunc: return "ModTrunc";
    case OpKind::kEqual: return "Equal";
    case OpKind::kLess: return "Less";
    case OpKind::kGreater: return "Greater";
    case OpKind::kLessOrEqual: return "LessOrEqual";
    case OpKind::kGreaterOrEqual: return "GreaterOrEqual";
    case OpKind::kNot: return "Not";
    case OpKind::kAnd: return "And";
    case OpKind::kOr: return "Or";
    case OpKind::kXor: return "Xor";
    case OpKind::kWhere: return "Where";
    case OpKind::kCast: return "Cast";
    case OpKind::kConstant: return "Constant";
    case OpKind::kClipBelow: return "ClipBelow";
    case OpKind::kClipAbove: return "ClipAbove";
    case OpKind::kBatchNorm: return "BatchNormalization";
  }
  return "?";
}

bool IsScalarConstantOperand(const onnx::NodeProto& node, int k) {
  return (node.op_type() == "Clip" && k > 0) || (node.op_type() == "Pow" && k == 1);
}

bool IsActivationCall(OpKind kind) {
  return kind == OpKind::kSigmoid || kind == OpKind::kTanh || kind == OpKind::kLog;
}

bool IsGeneratedElementType(DType type) {
  return type == DType::kFloat || type == DType::kInt32 || type == DType::kInt64 || type == DType::kBool;
}

DType ElementwiseResultType(const onnx::NodeProto& node, const std::vector<DType>& input_types, std::string* why) {
  const OpInfo* info = FindOp(node.op_type());
  if (!info) return *why = "no code generator for " + node.op_type(), DType::kUndefined;
  // Operands that are values of the kernel (Clip's bounds and Pow's exponent are constants of
  // the body, converted to float by the partitioner).
  std::vector<DType> operands;
  for (size_t i = 0; i < input_types.size(); ++i)
    if (!(i < static_cast<size_t>(node.input_size()) && node.input(static_cast<int>(i)).empty()) &&
        !IsScalarConstantOperand(node, static_cast<int>(i)))
      operands.push_back(input_types[i]);
  if (operands.empty()) return *why = "no operands", DType::kUndefined;
  for (DType t : operands)
    if (!IsGeneratedElementType(t))
      return *why = std::string("an operand of type ") + DTypeName(t) + " (generated: float, int32, int64, bool)",
             DType::kUndefined;
  auto alike = [&](size_t from) {
    for (size_t i = from + 1; i < operands.size(); ++i)
      if (operands[i] != operands[from]) return false;
    return true;
  };
  const DType first = operands[0];
  const bool number = first == DType::kFloat || first == DType::kInt32 || first == DType::kInt64;
  switch (info->types) {
    case Types::kFloat:
      for (DType t : operands)
        if (t != DType::kFloat) return *why = node.op_type() + " is generated for float only", DType::kUndefined;
      return DType::kFloat;
    case Types::kNumber:
      if (!number || !alike(0)) return *why = "operands are not alike float, int32 or int64", DType::kUndefined;
      return first;
    case Types::kInteger:
      if ((first != DType::kInt32 && first != DType::kInt64) || !alike(0))
        return *why = node.op_type() + " is generated for int32 and int64 only", DType::kUndefined;
      if (const int64_t fmod = AttrInt(node, "fmod", 0); fmod != 0 && fmod != 1)
        return *why = "fmod is neither 0 nor 1", DType::kUndefined;  // the reference kernel reports it
      return first;
    case Types::kCompare:
      if (!(number || (first == DType::kBool && info->kind == OpKind::kEqual)) || !alike(0))
        return *why = "operands of " + node.op_type() + " are not alike numbers", DType::kUndefined;
      return DType::kBool;
    case Types::kLogic:
      if (first != DType::kBool || !alike(0)) return *why = node.op_type() + " takes bool only", DType::kUndefined;
      return DType::kBool;
    case Types::kSelect:
      if (operands.size() != 3 || first != DType::kBool || operands[1] != operands[2])
        return *why = "Where needs a bool condition and two values of one type", DType::kUndefined;
      return operands[1];
    case Types::kConvert: {
      const onnx::AttributeProto* to = FindAttr(node, "to");
      if (!to || to->type() != onnx::AttributeProto::INT) return *why = "Cast without an integer 'to'", DType::kUndefined;
      const DType target = static_cast<DType>(to->i());
      if (!IsGeneratedElementType(target))
        return *why = std::string("Cast to ") + DTypeName(target) + " (generated: float, int32, int64, bool)",
               DType::kUndefined;
      return target;
    }
  }
  return *why = "unknown type rule", DType::kUndefined;
}

int ElementwiseMinOpset(const std::string& op_type) {
  const OpInfo* info = FindOp(op_type);
  return info ? info->min_opset : 0;
}

bool SameDeclaredShape(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b) {
  if (a.dim_size() != b.dim_size()) return false;
  for (int i = 0; i < a.dim_size(); ++i)
    if (!DimEqual(a.dim(i), b.dim(i))) return false;
  return true;
}

namespace {

// Whether an input dim may be taken as equal to the result's: equal as DimEqual says, or neither is
// 1 and one of them is symbolic. Inference (ONNX's, an exporter's value_info) names one run-time size
// by several symbols (openWakeWord's melspectrogram: unk__0 and unk__2 for its frame count); taking
// them as equal is safe because every call checks the actual shapes against the access kind
// (JitElementwiseKernel::Fits) and runs the reference kernel when they differ.
bool DimMayEqual(const onnx::TensorShapeProto::Dimension& in, const onnx::TensorShapeProto::Dimension& out) {
  if (DimEqual(in, out)) return true;
  if (DimIsOne(in) || DimIsOne(out)) return false;
  return in.has_dim_param() || out.has_dim_param();
}

}  // namespace

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
  bool same = ri == ro;
  for (int i = 0; same && i < ri; ++i) same = DimMayEqual(in.dim(i), out.dim(i));
  if (same) return *access = Access::kFull, true;
  if (ro == 0) return *why = "a scalar result", false;
  // Row: [1, ..., 1, cols] (any rank up to the result's).
  bool leading_one = true;
  for (int i = 0; i + 1 < ri; ++i) leading_one &= DimIsOne(in.dim(i));
  if (ri >= 1 && leading_one && DimMayEqual(in.dim(ri - 1), out.dim(ro - 1))) return *access = Access::kRow, true;
  // Column: [rows..., 1] of the result's rank.
  if (ri == ro && DimIsOne(in.dim(ri - 1))) {
    bool rows_equal = true;
    for (int i = 0; i + 1 < ri; ++i) rows_equal &= DimMayEqual(in.dim(i), out.dim(i));
    if (rows_equal) return *access = Access::kColumn, true;
  }
  // Any other broadcast (numpy's rule on declared dims, aligned at the last): every dim is the
  // result's or 1; the last is read contiguously unless it is the one repeated.
  for (int i = 0; i < ri; ++i) {
    const auto& d = in.dim(i);
    if (!DimMayEqual(d, out.dim(ro - ri + i)) && !DimIsOne(d))
      return *why = "dims that do not broadcast to the result's (or are not known to)", false;
  }
  const bool repeat_last = DimIsOne(in.dim(ri - 1)) && !DimIsOne(out.dim(ro - 1));
  return *access = repeat_last ? Access::kStridedColumn : Access::kStrided, true;
}

bool ClassifyChannelParam(const onnx::TensorShapeProto& param, const onnx::TensorShapeProto& x, Access* access,
                          std::string* why) {
  if (x.dim_size() < 2) return *why = "X of rank below 2", false;
  if (param.dim_size() != 1 || !DimEqual(param.dim(0), x.dim(1)))
    return *why = "a parameter that is not [C] of X's channels", false;
  *access = x.dim_size() == 2 ? Access::kRow : Access::kChannel;
  return true;
}

bool IsInferenceBatchNorm(const onnx::NodeProto& node, int opset, std::string* why) {
  if (opset < 7) return *why = "BatchNormalization below opset 7 (is_test)", false;
  if (opset < 9 && AttrInt(node, "spatial", 1) != 1) return *why = "spatial=0 (per-activation parameters)", false;
  if (opset >= 14 && AttrInt(node, "training_mode", 0) != 0) return *why = "training_mode=1", false;
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty()) return *why = "training outputs", false;
  return true;
}

int ElementwiseIR::StridedInputs() const {
  int n = 0;
  for (Access a : inputs) n += IsStrided(a);
  return n;
}

void ElementwiseIR::FillStridedGeometry(std::span<const int64_t> result,
                                        const std::function<std::span<const int64_t>(size_t)>& input_shape,
                                        int64_t* out) const {
  const size_t r = result.size(), outer = r - 1;
  for (size_t d = 0; d < outer; ++d) *out++ = result[d];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!IsStrided(inputs[i])) continue;
    int64_t* strides = out;
    out += outer;
    if (inputs[i] == Access::kChannel) {  // [C] viewed as [C, 1, ..., 1] at the result's dim 1
      for (size_t d = 0; d < outer; ++d) strides[d] = d == 1 ? 1 : 0;
      continue;
    }
    const std::span<const int64_t> s = input_shape(i);
    int64_t step = s.empty() ? 1 : s.back();  // the elements of one input row
    for (size_t d = outer; d-- > 0;) {
      const size_t lead = r - s.size();  // the input's dims align at the result's last
      const int64_t dim = d < lead ? 1 : s[d - lead];
      strides[d] = dim == 1 ? 0 : step;  // a repeated dim does not move
      step *= dim;
    }
  }
}

size_t ElementwiseIR::StridedGeometrySize() const {
  const int n = StridedInputs();
  return n == 0 || rank < 1 ? 0 : static_cast<size_t>((rank - 1) * (1 + n));
}

DType ElementwiseIR::TypeOf(int v) const {
  const size_t uv = static_cast<size_t>(v);
  return uv < inputs.size() ? input_types[uv] : ops[uv - inputs.size()].type;
}

bool ElementwiseIR::AllFloat() const {
  for (DType t : input_types)
    if (t != DType::kFloat) return false;
  for (const IrOp& op : ops)
    if (op.type != DType::kFloat) return false;
  return true;
}

std::string ElementwiseIR::ToText() const {
  static const char* kAccess[] = {"full", "row", "column", "scalar", "sliced", "strided", "strided column", "channel"};
  // Float is the default type and goes unnamed (float kernels read as they always did).
  auto type = [](DType t) { return t == DType::kFloat ? std::string() : std::string(" : ") + DTypeName(t); };
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i)
    s += "v" + std::to_string(i) + " = input " + kAccess[static_cast<int>(inputs[i])] +
         (inputs[i] == Access::kSliced ? " " + std::to_string(input_widths[i]) : std::string()) +
         (IsStrided(inputs[i]) ? " rank " + std::to_string(rank) : std::string()) +
         type(input_types[i]) + "\n";
  for (size_t k = 0; k < ops.size(); ++k) {
    const IrOp& op = ops[k];
    s += "v" + std::to_string(inputs.size() + k) + " = " + OpKindName(op.kind);
    if (op.a >= 0) s += " v" + std::to_string(op.a);
    if (op.b >= 0) s += " v" + std::to_string(op.b);
    if (op.c >= 0) s += " if v" + std::to_string(op.c);
    s += type(op.type);
    if (op.kind == OpKind::kColumnSlice) s += " @" + std::to_string(op.offset);
    if (op.kind == OpKind::kLeakyRelu || op.kind == OpKind::kHardSigmoid ||
        op.kind == OpKind::kPow || op.kind == OpKind::kConstant) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %a %a", op.alpha, op.beta);  // exact: the text is the identity
      s += buf;
    }
    s += "\n";
  }
  if (!static_geometry.empty()) {
    s += "geometry";
    for (int64_t g : static_geometry) s += " " + std::to_string(g);
    s += "\n";
  }
  s += "outputs";
  for (int o : outputs) s += " v" + std::to_string(o);
  s += "\n";
  return s;
}

Expected<ElementwiseIR> BuildElementwiseIR(const onnx::GraphProto& body, int opset) {
  ElementwiseIR ir;
  if (body.output_size() == 0) return Diag::Msg("jit: a partition without outputs");
  const onnx::TensorShapeProto& space = body.output(0).type().tensor_type().shape();
  std::unordered_map<std::string, int> value_of;
  std::unordered_map<std::string, int> split_uses, other_uses;
  std::unordered_map<std::string, const onnx::NodeProto*> channel_params;  // BatchNormalization's inputs 1-4
  for (const auto& n : body.node())
    if (n.op_type() == "BatchNormalization")
      for (int i = 1; i < n.input_size() && i < 5; ++i) channel_params[n.input(i)] = &n;
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
    } else if (channel_params.count(in.name())) {
      if (other_uses[in.name()] != 1 || !ClassifyChannelParam(in_shape, space, &access, &why))
        return Diag::Msg("jit: input '" + in.name() + "' is not only a per-channel parameter" +
                         (why.empty() ? std::string() : ": " + why));
    } else if (!ClassifyAccess(in_shape, space, &access, &why)) {
      return Diag::Msg("jit: input '" + in.name() + "' cannot be read: " + why);
    }
    const DType type = static_cast<DType>(in.type().tensor_type().elem_type());
    if (!IsGeneratedElementType(type) || (access == Access::kSliced && type != DType::kFloat))
      return Diag::Msg(std::string("jit: input '") + in.name() + "' has type " + DTypeName(type));
    if (IsStrided(access)) ir.rank = r;
    value_of[in.name()] = static_cast<int>(ir.inputs.size());
    ir.inputs.push_back(access);
    ir.input_types.push_back(type);
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
          LastAxisSplitSizes(n, opset, r, ir.input_widths[static_cast<size_t>(src)], constant_sizes);
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
    std::vector<DType> types;  // of the operands that are values of the kernel
    for (int i = 0; i < n.input_size(); ++i) {
      auto it = value_of.find(n.input(i));
      types.push_back(it == value_of.end() ? DType::kUndefined : ir.TypeOf(it->second));
    }
    std::string why;
    op.type = ElementwiseResultType(n, types, &why);
    if (op.type == DType::kUndefined) return Diag::Node(n, "jit: " + why);
    if (op.kind == OpKind::kModFloor && AttrInt(n, "fmod", 0) == 1) op.kind = OpKind::kModTrunc;
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
    if (op.kind == OpKind::kBatchNorm) {
      // The reference's inference form, op for op in float: a = scale / sqrt(var + epsilon),
      // b = B - mean * a, y = x * a + b (per element in the IR; the same roundings per channel).
      // a and b are not recomputed per element in the code that runs: their operands are
      // per-channel (Access::kChannel: one address per row), the buffers noalias and fdiv and
      // sqrt speculatable without fast-math, so O3's LICM computes them in the column loop's
      // preheader, once per row and tile of kActivationTile columns (checked in the O3 IR of
      // gtcrn_simple's four BatchNormalization kernels: codegen_dump_module:ll). Once per channel
      // instead would take [C] arrays of a and b made before the loop (at load from constant
      // parameters, with the reference's float ops, or by a per-call pre-pass) as new kernel
      // inputs: it would save one sqrt and one division per row of a channel's plane, not per
      // element, so it is not done.
      int x, scale, bias, mean, var;
      NUPHAR_ASSIGN_OR_RETURN(x, operand(n, 0));
      NUPHAR_ASSIGN_OR_RETURN(scale, operand(n, 1));
      NUPHAR_ASSIGN_OR_RETURN(bias, operand(n, 2));
      NUPHAR_ASSIGN_OR_RETURN(mean, operand(n, 3));
      NUPHAR_ASSIGN_OR_RETURN(var, operand(n, 4));
      auto push = [&](OpKind kind, int a, int b, float alpha = 0) {
        IrOp step = op;
        step.kind = kind;
        step.a = a;
        step.b = b;
        step.alpha = alpha;
        ir.ops.push_back(step);
        return next_id() - 1;
      };
      const int eps = push(OpKind::kConstant, -1, -1, AttrFloat(n, "epsilon", 1e-5f));
      const int a = push(OpKind::kDiv, scale, push(OpKind::kSqrt, push(OpKind::kAdd, var, eps), -1));
      const int b = push(OpKind::kSub, bias, push(OpKind::kMul, mean, a));
      value_of[n.output(0)] = push(OpKind::kAdd, push(OpKind::kMul, x, a), b);
      continue;
    }
    if (op.kind == OpKind::kWhere) {  // Where(condition, X, Y)
      NUPHAR_ASSIGN_OR_RETURN(op.c, operand(n, 0));
      NUPHAR_ASSIGN_OR_RETURN(op.a, operand(n, 1));
      NUPHAR_ASSIGN_OR_RETURN(op.b, operand(n, 2));
      ir.ops.push_back(op);
      value_of[n.output(0)] = next_id() - 1;
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
      // The reference's std::min(std::max(x, lo), hi) as ClipBelow then ClipAbove. A bound is a
      // scalar value of the kernel (computed at run time) or a Constant: the input's constant, the
      // attribute, or lowest / max when absent (which still moves -inf and +inf, as the reference).
      float constants[2] = {AttrFloat(n, "min", std::numeric_limits<float>::lowest()),
                            AttrFloat(n, "max", std::numeric_limits<float>::max())};
      int bounds[2] = {-1, -1};
      for (int i = 1; i < n.input_size() && i <= 2; ++i) {
        if (n.input(i).empty()) continue;
        if (auto c = scalar_constants.find(n.input(i)); c != scalar_constants.end()) {
          constants[i - 1] = c->second;
          continue;
        }
        NUPHAR_ASSIGN_OR_RETURN(bounds[i - 1], operand(n, i));
        if (ir.TypeOf(bounds[i - 1]) != DType::kFloat) return Diag::Node(n, "jit: Clip bounds must be float");
      }
      for (int i = 0; i < 2; ++i) {
        if (bounds[i] >= 0) continue;
        IrOp c = op;
        c.kind = OpKind::kConstant;
        c.a = -1;
        c.alpha = constants[i];
        ir.ops.push_back(c);
        bounds[i] = next_id() - 1;
      }
      IrOp below = op;
      below.kind = OpKind::kClipBelow;
      below.b = bounds[0];
      ir.ops.push_back(below);
      IrOp above = op;
      above.kind = OpKind::kClipAbove;
      above.a = next_id() - 1;
      above.b = bounds[1];
      ir.ops.push_back(above);
      value_of[n.output(0)] = next_id() - 1;
      continue;
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
  // The strided geometry is baked when every dim it reads is declared static.
  if (ir.rank > 0) {
    auto static_dims = [](const onnx::TensorShapeProto& shape, std::vector<int64_t>* dims) {
      for (const auto& d : shape.dim()) {
        if (!d.has_dim_value()) return false;
        dims->push_back(d.dim_value());
      }
      return true;
    };
    std::vector<int64_t> result;
    std::vector<std::vector<int64_t>> shapes(ir.inputs.size());
    bool known = static_dims(space, &result);
    for (size_t i = 0; known && i < ir.inputs.size(); ++i)
      if (IsStrided(ir.inputs[i]) && ir.inputs[i] != Access::kChannel)
        known = static_dims(body.input(static_cast<int>(i)).type().tensor_type().shape(), &shapes[i]);
    if (known) {
      ir.static_geometry.resize(ir.StridedGeometrySize());
      ir.FillStridedGeometry(result, [&](size_t i) { return std::span<const int64_t>(shapes[i]); },
                             ir.static_geometry.data());
    }
  }
  return ir;
}

}  // namespace nuphar::jit
