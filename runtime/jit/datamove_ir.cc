// The data-movement kernel IR: building it from a node and its text (datamove_ir.h; the
// per-call plan is datamove_plan.cc).
#include "runtime/jit/datamove_ir.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "graph/node_builder.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"

namespace nuphar::jit {
namespace {

// Casts the generator converts exactly as the reference (elementwise_cast.cc): from an integer,
// bool or float type to an integer, bool or float type, except float to integer (the reference's
// NaN and range rules).
bool IsIntegral(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUint8: case DType::kUint16: case DType::kUint32: case DType::kUint64: case DType::kBool: return true;
    default: return false;
  }
}
bool IsFloating(DType t) { return t == DType::kFloat || t == DType::kDouble; }
bool ConvertibleCast(DType from, DType to) {
  if (!(IsIntegral(from) || IsFloating(from)) || !(IsIntegral(to) || IsFloating(to))) return false;
  return !(IsFloating(from) && IsIntegral(to) && to != DType::kBool);
}

bool IsViewOp(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity";
}


}  // namespace

bool IsDataMoveView(const std::string& op) { return IsViewOp(op); }

bool HasDataMoveGenerator(const std::string& op) {
  return IsViewOp(op) || op == "Cast" || op == "Transpose" || op == "Slice" || op == "Concat" || op == "Gather" || op == "Pad" ||
         op == "Shape" || op == "Size" || op == "ScatterND" || op == "ConstantOfShape";
}

std::string DataMoveIR::ToText() const {
  // The op's name is not part of it: a Slice and a Transpose of the same numbers are the same code.
  std::string s = "datamove elem " + std::to_string(elem_bytes) + "B";
  if (index_bytes) s += " index " + std::to_string(index_bytes) + "B";
  if (cast_from != DType::kUndefined)
    s += std::string(" cast ") + DTypeName(cast_from) + " -> " + DTypeName(cast_to);
  if (pad_reflect) s += " reflect";
  if (pad_edge) s += " edge";
  if (has_fill) s += " fill 0x" + [&] {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(fill));
    return std::string(hex);
  }();
  s += " operands " + std::to_string(num_operands) + "\n";
  size_t n = 0;
  auto number = [&]() {
    std::string v = baked[n] ? std::to_string(numbers[n]) : std::string("?");
    if (!baked[n]) v += std::to_string(n);
    ++n;
    return v;
  };
  if (has_fill) s += "  fill " + number() + " elements\n";
  for (const MovePiece& p : pieces) {
    s += "  piece from operand " + std::to_string(p.source) + ": src+" + number();
    s += " dst+" + number() + "\n";
    for (int l = 0; l < p.loops; ++l) {
      s += "    loop " + number();
      s += " src*" + number();
      s += " dst*" + number();
      if (l == p.indirect_loop) s += " via index operand " + std::to_string(p.index_operand) + " bound " + number();
      s += "\n";
    }
  }
  if (num_values > 0) {
    s += "  values";
    for (int v = 0; v < num_values; ++v) s += " " + number();
    s += "\n";
  }
  return s;
}

namespace {

// The node's constant input `i` as int64 values (int32 or int64), or nullopt.
std::optional<std::vector<int64_t>> ConstantInts(std::span<const MoveOperand> inputs, size_t i) {
  if (i >= inputs.size() || !inputs[i].constant) return std::nullopt;
  auto v = inputs[i].constant->ToInt64Vector();
  if (!v) return std::nullopt;
  return std::move(*v);
}

bool HasInput(const onnx::NodeProto& node, int i) { return i < node.input_size() && !node.input(i).empty(); }

// Node input `i` as a computed parameter: an int64 or int32 vector of static length.
bool ComputedParameter(std::span<const MoveOperand> inputs, int i, DataMoveIR& ir, std::string* why) {
  // A node short of that input (a broken or hostile file; fuzz_session_create) is refused here.
  if (i < 0 || static_cast<size_t>(i) >= inputs.size()) return *why = "input " + std::to_string(i) + " is missing", false;
  const MoveOperand& in = inputs[static_cast<size_t>(i)];
  if (in.dtype != DType::kInt64 && in.dtype != DType::kInt32)
    return *why = "computed parameter input " + std::to_string(i) + " is not known to be int64 or int32", false;
  if (!in.has_shape || in.dims.size() != 1 || in.dims[0] < 0 || in.dims[0] > static_cast<int64_t>(kMaxMoveRank))
    return *why = "computed parameter input " + std::to_string(i) + " has no static length", false;
  ir.param_operands[ir.onnx_op == "Reshape" || ir.onnx_op == "ConstantOfShape" ? 0 : i - 1] = ir.num_operands++;
  ir.operand_node_input.push_back(i);
  ir.computed_params = true;
  return true;
}

// ScatterND's constant indices as a box (datamove_ir.h): index tuple p (a multi-index over the
// indices' dims but the last) must be base + sum over t of p[t] * unit(axis[t]), each data axis
// walked by at most one index dim; false with `why` otherwise (the reference then runs it).
bool ReadScatterBox(const Tensor& indices, int64_t rank, DataMoveIR& ir, std::string* why) {
  auto values = indices.ToInt64Vector();
  if (!values || indices.rank() < 1) return *why = "indices are not an integer tensor", false;
  const std::vector<int64_t>& idx = *values;
  const int64_t k = indices.shape().back();
  if (k < 1 || k > rank) return *why = "index tuples longer than the data rank", false;
  ir.scatter_dims.assign(indices.shape().begin(), indices.shape().end() - 1);
  if (static_cast<int64_t>(ir.scatter_dims.size()) + rank - k > static_cast<int64_t>(kMaxMoveRank))
    return *why = "updates of rank above 16", false;
  const int64_t tuples = static_cast<int64_t>(idx.size()) / k;
  ir.scatter_base.assign(idx.begin(), idx.begin() + std::min<int64_t>(k, static_cast<int64_t>(idx.size())));
  if (tuples == 0) return *why = "no indices", false;
  for (int64_t b : ir.scatter_base)
    if (b < 0) return *why = "negative indices", false;
  // Each index dim's axis: the one coordinate that grows by 1 from the first tuple to its next.
  int64_t step = tuples;
  std::vector<char> walked(static_cast<size_t>(k), 0);
  for (int64_t d : ir.scatter_dims) {
    step /= std::max<int64_t>(d, 1);
    int64_t axis = -1;
    if (d > 1) {
      for (int64_t a = 0; a < k; ++a) {
        const int64_t diff = idx[static_cast<size_t>(step * k + a)] - ir.scatter_base[static_cast<size_t>(a)];
        if (diff == 1 && axis < 0 && !walked[static_cast<size_t>(a)]) axis = a;
        else if (diff != 0) return *why = "indices are not a box", false;
      }
      if (axis < 0) return *why = "indices are not a box", false;
      walked[static_cast<size_t>(axis)] = 1;
    }
    ir.scatter_axes.push_back(axis);
  }
  // Every tuple where the box puts it.
  std::vector<int64_t> expect(static_cast<size_t>(k));
  for (int64_t p = 0; p < tuples; ++p) {
    expect.assign(ir.scatter_base.begin(), ir.scatter_base.end());
    int64_t rest = p;
    for (size_t t = ir.scatter_dims.size(); t-- > 0;) {
      const int64_t d = std::max<int64_t>(ir.scatter_dims[t], 1);
      if (ir.scatter_axes[t] >= 0) expect[static_cast<size_t>(ir.scatter_axes[t])] += rest % d;
      rest /= d;
    }
    if (!std::equal(expect.begin(), expect.end(), idx.begin() + p * k)) return *why = "indices are not a box", false;
  }
  return true;
}

// Reads the node's attributes and constant inputs into `ir`; false with `why` when it cannot.
bool ReadParameters(const onnx::NodeProto& node, int opset, std::span<const MoveOperand> inputs, DataMoveIR& ir,
                    std::string* why) {
  const std::string& op = node.op_type();
  const int64_t rank = static_cast<int64_t>(inputs[0].dims.size());
  if (op == "Transpose") {
    ir.op = MoveOp::kTranspose;
    ir.perm = AttrInts(node, "perm").value_or(std::vector<int64_t>{});
    if (ir.perm.empty())
      for (int64_t k = rank; k-- > 0;) ir.perm.push_back(k);
    std::vector<char> seen(static_cast<size_t>(rank), 0);
    if (static_cast<int64_t>(ir.perm.size()) != rank) return *why = "perm does not match the input rank", false;
    for (int64_t p : ir.perm) {
      if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return *why = "perm is not a permutation", false;
      seen[static_cast<size_t>(p)] = 1;
    }
    return true;
  }
  if (op == "Slice") {
    ir.op = MoveOp::kSlice;
    if (opset < 10) {
      ir.starts = AttrInts(node, "starts").value_or(std::vector<int64_t>{});
      ir.ends = AttrInts(node, "ends").value_or(std::vector<int64_t>{});
      ir.axes = AttrInts(node, "axes").value_or(std::vector<int64_t>{});
    } else {
      std::vector<int64_t>* fields[] = {&ir.starts, &ir.ends, &ir.axes, &ir.steps};
      for (int i = 1; i <= 4; ++i) {
        if (!HasInput(node, i)) {
          if (i <= 2) return *why = "starts and ends are required", false;
          continue;
        }
        if (auto v = ConstantInts(inputs, static_cast<size_t>(i))) {
          *fields[i - 1] = std::move(*v);
          continue;
        }
        if (!ComputedParameter(inputs, i, ir, why)) return false;
      }
      if (ir.computed_params) return true;  // lengths and steps are checked per call
    }
    if (ir.axes.empty())
      for (size_t i = 0; i < ir.starts.size(); ++i) ir.axes.push_back(static_cast<int64_t>(i));
    if (ir.steps.empty()) ir.steps.assign(ir.starts.size(), 1);
    if (ir.ends.size() != ir.starts.size() || ir.axes.size() != ir.starts.size() || ir.steps.size() != ir.starts.size())
      return *why = "starts, ends, axes and steps have different lengths", false;
    for (int64_t s : ir.steps)
      if (s == 0) return *why = "a step is 0", false;
    return true;
  }
  if (op == "Concat") {
    ir.op = MoveOp::kConcat;
    if (!FindAttr(node, "axis")) return *why = "no axis attribute", false;
    ir.axis = AttrInt(node, "axis", 0);
    return true;
  }
  if (op == "Gather") {
    ir.op = MoveOp::kGather;
    ir.axis = AttrInt(node, "axis", 0);
    const DType t = inputs.size() > 1 ? inputs[1].dtype : DType::kUndefined;
    if (t != DType::kInt32 && t != DType::kInt64) return *why = "indices are not known to be int32 or int64", false;
    ir.index_bytes = t == DType::kInt32 ? 4 : 8;
    return true;
  }
  if (op == "Pad") {
    ir.op = MoveOp::kPad;
    if (opset < 2) return *why = "Pad-1", false;
    const std::string mode = AttrString(node, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") return *why = "mode " + mode, false;
    ir.pad_reflect = mode == "reflect";
    ir.pad_edge = mode == "edge";
    const DType t = inputs[0].dtype;
    if (opset < 11) {
      ir.pads = AttrInts(node, "pads").value_or(std::vector<int64_t>{});
      const float value = AttrFloat(node, "value", 0.0f);
      if (t != DType::kFloat) return *why = "Pad-2 on a type other than float", false;
      std::memcpy(&ir.fill, &value, sizeof(value));
    } else {
      if (auto pads = ConstantInts(inputs, 1)) {
        ir.pads = std::move(*pads);
      } else {  // computed (or folded at load, after the partitioner): read per call
        if (!ComputedParameter(inputs, 1, ir, why)) return false;
        if (inputs[1].dims[0] != 2 * rank) return *why = "pads do not match the input rank", false;
        ir.pads.assign(static_cast<size_t>(2 * rank), 1);  // the structure: every side may be padded
      }
      if (HasInput(node, 2)) {
        const Tensor* v = inputs[2].constant;
        if (!v || v->dtype() != t || v->size() != 1) return *why = "constant_value is not a constant of the data type", false;
        std::memcpy(&ir.fill, v->raw(), DTypeSize(t));
      }
      if (HasInput(node, 3)) return *why = "Pad-18 axes", false;
    }
    if (static_cast<int64_t>(ir.pads.size()) != 2 * rank) return *why = "pads do not match the input rank", false;
    ir.has_fill = mode == "constant";
    if (!ir.has_fill && std::any_of(ir.pads.begin(), ir.pads.end(), [](int64_t p) { return p < 0; }))
      return *why = "negative pads with mode " + mode, false;
    return true;
  }
  if (op == "ScatterND") {
    ir.op = MoveOp::kScatter;
    if (opset < 11) return *why = "ScatterND below opset 11", false;
    if (AttrString(node, "reduction", "none") != "none") return *why = "a reduction", false;
    if (!inputs[1].constant) return *why = "indices are not a constant", false;
    return ReadScatterBox(*inputs[1].constant, rank, ir, why);
  }
  if (op == "ConstantOfShape") {  // its input is computed (a constant one is folded at load)
    ir.op = MoveOp::kFill;
    Tensor value = Tensor::FromVector<float>({1}, {0.0f});
    if (const auto* a = FindAttr(node, "value")) {
      auto v = TensorFromProto(a->t());
      if (!v) return *why = "value: " + v.message(), false;
      value = std::move(*v);
    }
    if (value.size() != 1 || value.dtype() == DType::kString || DTypeSize(value.dtype()) == 0 || DTypeSize(value.dtype()) > 8)
      return *why = "value is not one fixed-size element", false;
    ir.fill_type = value.dtype();
    ir.elem_bytes = static_cast<int>(DTypeSize(value.dtype()));
    std::memcpy(&ir.fill, value.raw(), DTypeSize(value.dtype()));
    ir.has_fill = true;
    if (!ComputedParameter(inputs, 0, ir, why)) return false;
    ir.target.assign(static_cast<size_t>(inputs[0].dims[0]), 0);  // its length: the output rank
    return true;
  }
  if (op == "Shape") {
    ir.op = MoveOp::kShape;
    ir.shape_start = AttrInt(node, "start", 0);
    ir.shape_end = AttrInt(node, "end", INT64_MAX);
    return true;
  }
  if (op == "Size") {
    ir.op = MoveOp::kSize;
    return true;
  }
  if (op == "Cast") {
    const DType to = static_cast<DType>(AttrInt(node, "to", 0));
    const auto* to_attr = FindAttr(node, "to");
    if (!to_attr || to_attr->type() != onnx::AttributeProto::INT) return *why = "no integer 'to' attribute", false;
    if (to == inputs[0].dtype) {
      ir.op = MoveOp::kView;  // the same type: the values as they are
      return true;
    }
    if (!ConvertibleCast(inputs[0].dtype, to))
      return *why = std::string("Cast from ") + DTypeName(inputs[0].dtype) + " to " + DTypeName(to) + " (float to integer, float16 and others stay on the reference)", false;
    ir.op = MoveOp::kCast;
    ir.cast_from = inputs[0].dtype;
    ir.cast_to = to;
    ir.elem_bytes = static_cast<int>(DTypeSize(to));
    return true;
  }
  // The views.
  ir.op = MoveOp::kView;
  if (op == "Flatten") {
    ir.view = ViewKind::kFlatten;
    ir.axis = AttrInt(node, "axis", 1);
  } else if (op == "Reshape") {
    ir.view = ViewKind::kReshape;
    if (opset < 5) return *why = "Reshape-1", false;
    if (auto target = ConstantInts(inputs, 1)) {
      ir.target = std::move(*target);
    } else {
      // Computed (shape arithmetic): a view all the same, its dims read per call.
      if (!ComputedParameter(inputs, 1, ir, why)) return false;
      ir.target.assign(static_cast<size_t>(inputs[1].dims[0]), 0);  // its length: the output rank
    }
    ir.allowzero = AttrInt(node, "allowzero", 0) != 0;
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    ir.view = op == "Squeeze" ? ViewKind::kSqueeze : ViewKind::kUnsqueeze;
    if (opset >= 13 && HasInput(node, 1)) {
      auto axes = ConstantInts(inputs, 1);
      if (!axes) return *why = "axes are computed at run time", false;
      ir.axes = std::move(*axes);
    } else {
      ir.axes = AttrInts(node, "axes").value_or(std::vector<int64_t>{});
    }
    if (op == "Unsqueeze" && ir.axes.empty()) return *why = "no axes", false;
  }
  return true;
}

// The symbols' stand-in values of one variant (two variants tell baked numbers from arguments).
// With `every_dim`, static dims stand for symbols too (one per distinct value, so dims that are
// equal stay equal): the numbers then baked are the ones no dim changes (unit strides, zeros).
//
// Variants 0 and 1 take large values (so clamps behave as for long dims), but never so large that
// a probed shape's element count passes 2^50: the plan multiplies dims, strides and offsets in
// int64, and four symbols at 100003 overflowed it (UBSan, in CI). The headroom above 2^50 covers
// the plan's sums (Concat offsets) and its stride-by-step products of small steps.
int64_t ProbeCeiling(std::span<const MoveOperand> inputs, bool every_dim) {
  double ceiling = 100003.0;
  for (const MoveOperand& in : inputs) {
    double fixed = 1.0;
    int substituted = 0;
    for (int64_t d : in.dims) {
      if (d >= 0 && !every_dim) fixed *= static_cast<double>(std::max<int64_t>(d, 1));
      else ++substituted;
    }
    if (substituted == 0) continue;
    const double room = std::max(std::ldexp(1.0, 50) / fixed, 1.0);
    ceiling = std::min(ceiling, std::pow(room, 1.0 / substituted));
  }
  return static_cast<int64_t>(ceiling);
}

std::vector<std::vector<int64_t>> Substitute(std::span<const MoveOperand> inputs, int variant, bool every_dim) {
  // Variant 0 near the ceiling's half, variant 1 near all of it; at least 3 and 5 (distinct from
  // variants 2 and 3's small values once the per-symbol offsets are added).
  const int64_t half = std::max<int64_t>(ProbeCeiling(inputs, every_dim) / 2, 3);
  std::map<std::string, int64_t> symbols;
  std::vector<std::vector<int64_t>> shapes;
  int unnamed = 0;
  for (const MoveOperand& in : inputs) {
    std::vector<int64_t> s = in.dims;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] >= 0 && !every_dim) continue;
      // Static dims by value, unnamed symbols by position, named ones by name.
      std::string name = s[k] >= 0 ? std::string("=") : in.dim_params[k].empty() ? std::string("?") : in.dim_params[k];
      if (s[k] >= 0) name += std::to_string(s[k]);
      else if (in.dim_params[k].empty()) name += std::to_string(unnamed++);
      auto it = symbols.find(name);
      if (it == symbols.end()) {
        const int64_t i = static_cast<int64_t>(symbols.size());
        const int64_t value = variant == 0 ? half + 7 * i : variant == 1 ? 2 * half + 11 + 13 * i : variant == 2 ? 2 + i : 1;
        it = symbols.emplace(name, value).first;
      }
      s[k] = it->second;
    }
    shapes.push_back(std::move(s));
  }
  return shapes;
}

}  // namespace

Expected<DataMoveIR> BuildDataMoveIR(const onnx::NodeProto& node, int opset, std::span<const MoveOperand> inputs,
                                     DType output_dtype) {
  DataMoveIR ir;
  ir.onnx_op = node.op_type();
  if (!HasDataMoveGenerator(ir.onnx_op)) return Diag::Msg("no code generator for " + ir.onnx_op);
  if (node.output_size() != 1 || node.output(0).empty()) return Diag::Msg("not one output");
  if (inputs.empty() || node.input(0).empty()) return Diag::Msg("no data input");
  const bool metadata = ir.onnx_op == "Shape" || ir.onnx_op == "Size";
  const bool cast = ir.onnx_op == "Cast";
  // The operands the kernel reads: Concat's every input, Gather's data and indices, the data input
  // of the others (their other inputs are constants the IR holds).
  // ScatterND reads its data and updates (inputs 0 and 2); its indices are the IR's.
  // ConstantOfShape reads nothing but its computed dims (ReadParameters adds them).
  const bool scatter = ir.onnx_op == "ScatterND";
  const bool fill = ir.onnx_op == "ConstantOfShape";
  ir.num_operands = ir.onnx_op == "Concat" ? node.input_size() : ir.onnx_op == "Gather" || scatter ? 2 : fill ? 0 : 1;
  if (ir.num_operands > kMaxMoveOperands - 4) return Diag::Msg("more than 12 inputs");
  if (static_cast<int>(inputs.size()) < ir.num_operands + (scatter ? 1 : 0)) return Diag::Msg("missing inputs");
  for (int i = 0; i < ir.num_operands; ++i) ir.operand_node_input.push_back(scatter && i == 1 ? 2 : i);
  std::vector<MoveOperand> operand_inputs;  // the inputs the operands are, in operand order
  for (int i : ir.operand_node_input) operand_inputs.push_back(inputs[static_cast<size_t>(i)]);
  for (int o = 0; o < ir.num_operands; ++o) {
    const int i = ir.operand_node_input[static_cast<size_t>(o)];
    const MoveOperand& in = inputs[static_cast<size_t>(i)];
    if (node.input(i).empty()) return Diag::Msg("an empty input");
    if (!in.has_shape) return Diag::Msg("input '" + node.input(i) + "' has no declared shape");
    if (in.dims.size() > kMaxMoveRank) return Diag::Msg("rank above 16");
    // The load-time plan multiplies declared dims in int64; a declared shape no tensor can have
    // (fuzz_session_create: a static dim of 2^63 - 1) would overflow it.
    double elements = 1.0;
    for (int64_t d : in.dims) elements *= static_cast<double>(std::max<int64_t>(d, 1));
    if (elements > std::ldexp(1.0, 50))
      return Diag::Msg("input '" + node.input(i) + "' is declared with more than 2^50 elements");
  }
  const DType data = inputs[0].dtype;
  if (!metadata && !fill) {
    if (data == DType::kUndefined || data == DType::kString || DTypeSize(data) == 0)
      return Diag::Msg("input '" + node.input(0) + "' is not known to be a fixed-size type");
    if (output_dtype != data && !cast) return Diag::Msg("output type differs from the input's");
    for (int i = 1; i < ir.num_operands && (ir.onnx_op == "Concat" || scatter); ++i)
      if (operand_inputs[static_cast<size_t>(i)].dtype != data) return Diag::Msg("inputs of different types");
    ir.elem_bytes = static_cast<int>(DTypeSize(data));
  } else {
    ir.elem_bytes = 8;
  }
  std::string why;
  if (!ReadParameters(node, opset, inputs, ir, &why)) return Diag::Msg(why);
  if (ir.op == MoveOp::kCast && output_dtype != ir.cast_to) return Diag::Msg("output type is not the Cast's 'to'");
  if (ir.op == MoveOp::kFill && output_dtype != ir.fill_type) return Diag::Msg("output type is not the value's");

  // The structure, then the numbers of both variants.
  const int rank = static_cast<int>(inputs[0].dims.size());
  switch (ir.op) {
    case MoveOp::kTranspose:
    case MoveOp::kSlice:
    case MoveOp::kPad:
      if (ir.has_fill) {
        ir.pieces.push_back({0, rank, -1, -1});
        break;
      }
      // Reflect, edge: the pieces PadRegionPieces counts (datamove_plan.cc writes them in order).
      if (PadRegionPieces(ir.pads) > 64) return Diag::Msg("more than 64 pad regions");
      for (int64_t i = 0; i < PadRegionPieces(ir.pads); ++i) ir.pieces.push_back({0, rank, -1, -1});
      break;
    case MoveOp::kCast: ir.pieces.push_back({0, 1, -1, -1}); break;
    case MoveOp::kConcat:
      for (int i = 0; i < ir.num_operands; ++i) ir.pieces.push_back({i, 2, -1, -1});
      break;
    case MoveOp::kGather: ir.pieces.push_back({0, 3, 1, 1}); break;
    case MoveOp::kScatter:
      ir.pieces.push_back({0, 1, -1, -1});
      ir.pieces.push_back({1, static_cast<int>(ir.scatter_dims.size()) + rank - static_cast<int>(ir.scatter_base.size()), -1, -1});
      break;
    default: break;
  }
  size_t count = ir.has_fill ? 1 : 0;
  for (const MovePiece& p : ir.pieces) count += 2 + 3 * static_cast<size_t>(p.loops) + (p.indirect_loop >= 0 ? 1 : 0);
  if (ir.op == MoveOp::kSize) ir.num_values = 1;
  if (ir.op == MoveOp::kShape) {
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    ir.num_values = static_cast<int>(std::max(clamp(ir.shape_start), clamp(ir.shape_end)) - clamp(ir.shape_start));
  }
  count += static_cast<size_t>(ir.num_values);
  if (count > kMaxPlanNumbers) return Diag::Msg("more than 256 plan numbers");
  switch (ir.op) {
    case MoveOp::kView:
      ir.out_rank = ir.onnx_op == "Identity" || ir.onnx_op == "Cast" ? rank
                    : ir.onnx_op == "Flatten"   ? 2
                    : ir.onnx_op == "Reshape"   ? static_cast<int>(ir.target.size())
                    : ir.onnx_op == "Unsqueeze" ? rank + static_cast<int>(ir.axes.size())
                    : ir.axes.empty()           ? -1  // squeezes the dims that are 1: known from the shapes
                                                : rank - static_cast<int>(ir.axes.size());
      if (ir.out_rank < 0) {
        ir.out_rank = 0;
        for (int64_t d : inputs[0].dims) ir.out_rank += d != 1;
        for (int64_t d : inputs[0].dims)
          if (d < 0) return Diag::Msg("Squeeze without axes of a dim that may be 1");
      }
      break;
    case MoveOp::kGather: ir.out_rank = rank - 1 + static_cast<int>(inputs[1].dims.size()); break;
    case MoveOp::kShape: ir.out_rank = 1; break;
    case MoveOp::kFill: ir.out_rank = static_cast<int>(ir.target.size()); break;
    case MoveOp::kSize: ir.out_rank = 0; break;
    default: ir.out_rank = rank; break;
  }
  if (ir.computed_params) {  // numbers depend on values known per call only: all arguments
    ir.numbers.assign(count, 0);
    ir.baked.assign(count, 0);
    ir.checked.assign(count, 0);
    return ir;
  }
  // Variants 0 and 1 stand every symbol for a large value, variant 2 for a small one (a Slice
  // bound clamped by a symbolic dim is the same for all large values) and variant 3 for 1 (a
  // batch of 1 changes which loops merge); variants 2 and 3 may not make a plan (a Reshape's -1
  // that small dims do not divide) and are then not consulted.
  ir.numbers.assign(count, 0);
  std::vector<int64_t> out_shape(2 * kMaxMoveRank);
  int64_t out_size[2] = {0, 0};
  auto bake = [&](bool every_dim) {
    ir.baked.assign(count, 1);
    std::vector<int64_t> other(count);
    for (int variant = 0; variant < 4; ++variant) {
      const auto shapes = Substitute(operand_inputs, variant, every_dim);
      std::vector<std::span<const int64_t>> spans(shapes.begin(), shapes.end());
      int64_t* numbers = variant == 0 ? ir.numbers.data() : other.data();
      if (!PlanDataMove(ir, spans, numbers, out_shape.data())) {
        // A view has no numbers: its output rank is known, each call checks its dims (a Squeeze
        // of a symbolic dim that must be 1).
        if (variant >= 2 || ir.op == MoveOp::kView) continue;
        return false;
      }
      if (variant < 2 && !every_dim)
        out_size[variant] = std::accumulate(out_shape.begin(), out_shape.begin() + ir.out_rank, int64_t{1},
                                            std::multiplies<int64_t>());
      if (variant > 0)
        for (size_t n = 0; n < count; ++n) ir.baked[n] = ir.baked[n] && ir.numbers[n] == other[n];
    }
    return true;
  };
  if (!bake(false)) return Diag::Msg("the declared shapes do not make a valid " + ir.onnx_op);
  const std::vector<int64_t> from_static = ir.numbers;
  const std::vector<char> baked_static = ir.baked;
  std::vector<char> structural(count, 0);
  if (bake(true)) structural = ir.baked;
  // A small static output gains nothing measurable from constant sizes, while each distinct
  // kernel costs a compile (~10 ms): it bakes only the numbers no dim changes (unit strides,
  // zero offsets), so the small copies of one structure (a model's int64 shape arithmetic, its
  // many small Slices) share one function. A larger one bakes every static number.
  const bool small = out_size[0] == out_size[1] && out_size[0] < kBakeMinElements;
  ir.baked = small ? structural : baked_static;
  ir.checked.assign(count, 0);
  for (size_t n = 0; n < count; ++n) {
    ir.numbers[n] = ir.baked[n] ? from_static[n] : 0;
    ir.checked[n] = ir.baked[n] && !structural[n];
  }
  return ir;
}

}  // namespace nuphar::jit
