// The data-movement kernel IR: building it from a node, the per-call plan, its text
// (datamove_ir.h).
#include "runtime/jit/datamove_ir.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "graph/node_builder.h"
#include "runtime/core/tensor.h"

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

int64_t Product(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end; ++k) p *= dims[k];
  return p;
}

// Appends a plan's numbers in the order the code generator reads them.
struct NumberWriter {
  int64_t* out;
  size_t n = 0;
  void Put(int64_t v) { out[n++] = v; }
  void Loop(int64_t size, int64_t src_stride, int64_t dst_stride) {
    Put(size);
    Put(src_stride);
    Put(dst_stride);
  }
};

// The `count` loops (size, source stride, destination stride) at `loops`, outermost first,
// rewritten to copy the same elements with longer inner loops: a loop of size 1 moves outward,
// and a loop whose strides continue the next inner one's merges into it (size 1 left behind).
// The loop count stays (the code's structure); a Transpose of [33, 2, 1, 4] becomes one
// contiguous loop where the copy allows, instead of four nested short ones.
void MergeLoops(int64_t* loops, int count) {
  for (int k = count - 2; k >= 0; --k) {
    int64_t* outer = loops + 3 * k;
    int64_t* inner = outer + 3;
    if (outer[0] == 1) continue;
    if (inner[0] == 1) {
      std::copy(outer, outer + 3, inner);
    } else if (outer[1] == inner[0] * inner[1] && outer[2] == inner[0] * inner[2]) {
      inner[0] *= outer[0];
    } else {
      continue;
    }
    outer[0] = 1;
    outer[1] = outer[2] = 0;
  }
}

// Row-major strides of `shape` into `strides`.
void Strides(std::span<const int64_t> shape, int64_t* strides) {
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s *= shape[k];
  }
}

bool PlanView(const DataMoveIR& ir, const MoveParams& p, std::span<const int64_t> x, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (ir.view == ViewKind::kSame) {
    std::copy(x.begin(), x.end(), out);
    return static_cast<int>(rank) == ir.out_rank;
  }
  if (ir.view == ViewKind::kFlatten) {
    const int64_t axis = ir.axis < 0 ? ir.axis + rank : ir.axis;
    if (axis < 0 || axis > rank) return false;
    out[0] = Product(x, 0, static_cast<size_t>(axis));
    out[1] = Product(x, static_cast<size_t>(axis), x.size());
    return true;
  }
  if (ir.view == ViewKind::kReshape) {
    const int64_t size = Product(x, 0, x.size());
    int64_t known = 1, infer_at = -1;
    if (p.target.size() != static_cast<size_t>(ir.out_rank)) return false;
    for (size_t i = 0; i < p.target.size(); ++i) {
      int64_t d = p.target[i];
      if (d == 0 && !ir.allowzero) {
        if (static_cast<int64_t>(i) >= rank) return false;
        d = x[i];
      }
      if (d == -1) {
        if (infer_at >= 0) return false;
        infer_at = static_cast<int64_t>(i);
      } else if (d < 0) {
        return false;
      } else {
        known *= d;
      }
      out[i] = d;
    }
    if (infer_at >= 0) {
      if (known == 0 || size % known != 0) return false;
      out[infer_at] = size / known;
    } else if (known != size) {
      return false;
    }
    return true;
  }
  // Squeeze / Unsqueeze with constant axes.
  bool flag[kMaxMoveRank] = {};
  if (ir.view == ViewKind::kUnsqueeze) {
    const int64_t out_rank = rank + static_cast<int64_t>(ir.axes.size());
    if (out_rank > static_cast<int64_t>(kMaxMoveRank)) return false;
    for (int64_t a : ir.axes) {
      const int64_t axis = a < 0 ? a + out_rank : a;
      if (axis < 0 || axis >= out_rank || flag[axis]) return false;
      flag[axis] = true;
    }
    int64_t next = 0;
    for (int64_t k = 0; k < out_rank; ++k) out[k] = flag[k] ? 1 : x[static_cast<size_t>(next++)];
    return out_rank == ir.out_rank;
  }
  for (int64_t a : ir.axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank || x[static_cast<size_t>(axis)] != 1) return false;
    flag[axis] = true;
  }
  int64_t n = 0;
  for (int64_t k = 0; k < rank; ++k)
    if (!(ir.axes.empty() ? x[static_cast<size_t>(k)] == 1 : flag[k])) out[n++] = x[static_cast<size_t>(k)];
  return n == ir.out_rank;
}

bool PlanTranspose(const DataMoveIR& ir, std::span<const int64_t> x, NumberWriter& w, int64_t* out) {
  const size_t rank = x.size();
  if (ir.perm.size() != rank) return false;
  int64_t strides[kMaxMoveRank], out_strides[kMaxMoveRank];
  Strides(x, strides);
  for (size_t k = 0; k < rank; ++k) out[k] = x[static_cast<size_t>(ir.perm[k])];
  Strides(std::span<const int64_t>(out, rank), out_strides);
  w.Put(0);
  w.Put(0);
  const size_t first = w.n;
  for (size_t k = 0; k < rank; ++k) w.Loop(out[k], strides[ir.perm[k]], out_strides[k]);
  MergeLoops(w.out + first, static_cast<int>(rank));
  return true;
}

// The reference Slice's arithmetic (tensor_slice_pad.cc), with the same clamping.
bool PlanSlice(const MoveParams& p, std::span<const int64_t> x, NumberWriter& w, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t strides[kMaxMoveRank], out_strides[kMaxMoveRank];
  bool seen[kMaxMoveRank] = {};
  Strides(x, strides);
  std::copy(x.begin(), x.end(), out);
  int64_t base = 0;
  const size_t n = p.starts.size();
  if (p.ends.size() != n || p.axes.size() != n || p.steps.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = p.axes[i] < 0 ? p.axes[i] + rank : p.axes[i];
    if (axis < 0 || axis >= rank || seen[axis]) return false;
    seen[axis] = true;
    const int64_t dim = x[static_cast<size_t>(axis)], step = p.steps[i];
    if (step == 0) return false;
    int64_t start = p.starts[i] < 0 ? p.starts[i] + dim : p.starts[i];
    int64_t end = p.ends[i] < 0 ? p.ends[i] + dim : p.ends[i];
    int64_t count;
    if (dim == 0) {
      start = 0;
      count = 0;
    } else if (step > 0) {
      start = std::clamp(start, int64_t{0}, dim);
      end = std::clamp(end, int64_t{0}, dim);
      count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp(start, int64_t{0}, dim - 1);
      end = std::clamp(end, int64_t{-1}, dim - 1);
      count = start > end ? (start - end - 1) / -step + 1 : 0;
    }
    out[axis] = count;
    if (count > 0) base += start * strides[axis];
    strides[axis] *= step;
  }
  Strides(std::span<const int64_t>(out, x.size()), out_strides);
  w.Put(base);
  w.Put(0);
  const size_t first = w.n;
  for (int64_t k = 0; k < rank; ++k) w.Loop(out[k], strides[k], out_strides[k]);
  MergeLoops(w.out + first, static_cast<int>(rank));
  return true;
}

bool PlanConcat(const DataMoveIR& ir, std::span<const std::span<const int64_t>> shapes, NumberWriter& w,
                int64_t* out) {
  const std::span<const int64_t> first = shapes[0];
  const int64_t rank = static_cast<int64_t>(first.size());
  const int64_t axis = ir.axis < 0 ? ir.axis + rank : ir.axis;
  if (axis < 0 || axis >= rank) return false;
  std::copy(first.begin(), first.end(), out);
  out[axis] = 0;
  for (const auto& s : shapes) {
    if (s.size() != first.size()) return false;
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && s[static_cast<size_t>(k)] != first[static_cast<size_t>(k)]) return false;
    out[axis] += s[static_cast<size_t>(axis)];
  }
  const int64_t outer = Product(first, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(first, static_cast<size_t>(axis) + 1, first.size());
  int64_t offset = 0;
  for (const auto& s : shapes) {
    const int64_t dim = s[static_cast<size_t>(axis)];
    w.Put(0);
    w.Put(offset * inner);
    w.Loop(outer, dim * inner, out[axis] * inner);
    w.Loop(dim * inner, 1, 1);  // the axis slab is contiguous on both sides
    offset += dim;
  }
  return true;
}

bool PlanGather(const DataMoveIR& ir, std::span<const int64_t> data, std::span<const int64_t> indices,
                NumberWriter& w, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(data.size());
  const int64_t axis = ir.axis < 0 ? ir.axis + rank : ir.axis;
  if (axis < 0 || axis >= rank) return false;
  size_t n = 0;
  for (int64_t k = 0; k < axis; ++k) out[n++] = data[static_cast<size_t>(k)];
  for (int64_t d : indices) out[n++] = d;
  for (int64_t k = axis + 1; k < rank; ++k) out[n++] = data[static_cast<size_t>(k)];
  const int64_t outer = Product(data, 0, static_cast<size_t>(axis));
  const int64_t dim = data[static_cast<size_t>(axis)];
  const int64_t inner = Product(data, static_cast<size_t>(axis) + 1, data.size());
  const int64_t count = Product(indices, 0, indices.size());
  w.Put(0);
  w.Put(0);
  w.Loop(outer, dim * inner, count * inner);
  w.Loop(count, inner, inner);
  w.Put(dim);  // the index bound
  w.Loop(inner, 1, 1);
  return true;
}

// Constant padding (negative pads crop): fill the output, then copy the kept part of the input.
bool PlanPad(const DataMoveIR& ir, std::span<const int64_t> x, NumberWriter& w, int64_t* out) {
  const size_t rank = x.size();
  if (ir.pads.size() != 2 * rank) return false;
  int64_t strides[kMaxMoveRank], out_strides[kMaxMoveRank];
  Strides(x, strides);
  for (size_t k = 0; k < rank; ++k) {
    out[k] = x[k] + ir.pads[k] + ir.pads[k + rank];
    if (out[k] < 0) return false;
  }
  Strides(std::span<const int64_t>(out, rank), out_strides);
  w.Put(Product(std::span<const int64_t>(out, rank), 0, rank));
  int64_t src = 0, dst = 0;
  int64_t kept[kMaxMoveRank];
  bool empty = false;
  for (size_t k = 0; k < rank; ++k) {
    const int64_t begin = ir.pads[k], end = ir.pads[k + rank];
    kept[k] = x[k] + std::min<int64_t>(begin, 0) + std::min<int64_t>(end, 0);
    if (kept[k] <= 0) empty = true;
    src += std::max<int64_t>(-begin, 0) * strides[k];
    dst += std::max<int64_t>(begin, 0) * out_strides[k];
  }
  w.Put(empty ? 0 : src);
  w.Put(empty ? 0 : dst);
  const size_t first = w.n;
  for (size_t k = 0; k < rank; ++k) w.Loop(empty ? 0 : kept[k], strides[k], out_strides[k]);
  MergeLoops(w.out + first, static_cast<int>(rank));
  return true;
}

}  // namespace

bool HasDataMoveGenerator(const std::string& op) {
  return IsViewOp(op) || op == "Cast" || op == "Transpose" || op == "Slice" || op == "Concat" || op == "Gather" || op == "Pad" ||
         op == "Shape" || op == "Size";
}

bool PlanDataMove(const DataMoveIR& ir, std::span<const std::span<const int64_t>> shapes, int64_t* numbers,
                  int64_t* out_shape, const MoveParams* computed) {
  if (shapes.size() != static_cast<size_t>(ir.num_operands)) return false;
  if (ir.computed_params && !computed) return false;
  if (ir.op == MoveOp::kView && !computed) return shapes[0].size() <= kMaxMoveRank && PlanView(ir, {ir.starts, ir.ends, ir.axes, ir.steps, ir.target}, shapes[0], out_shape);
  const MoveParams held{ir.starts, ir.ends, ir.axes, ir.steps, ir.target};
  const MoveParams& params = computed ? *computed : held;
  for (const auto& s : shapes)
    if (s.size() > kMaxMoveRank) return false;
  NumberWriter w{numbers};
  bool ok = false;
  switch (ir.op) {
    case MoveOp::kView: ok = PlanView(ir, params, shapes[0], out_shape); break;
    case MoveOp::kTranspose: ok = PlanTranspose(ir, shapes[0], w, out_shape); break;
    case MoveOp::kSlice: ok = PlanSlice(params, shapes[0], w, out_shape); break;
    case MoveOp::kConcat: ok = PlanConcat(ir, shapes, w, out_shape); break;
    case MoveOp::kGather: ok = PlanGather(ir, shapes[0], shapes[1], w, out_shape); break;
    case MoveOp::kPad: ok = PlanPad(ir, shapes[0], w, out_shape); break;
    case MoveOp::kShape: {
      const int64_t rank = static_cast<int64_t>(shapes[0].size());
      auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
      const int64_t begin = clamp(ir.shape_start), end = std::max(begin, clamp(ir.shape_end));
      out_shape[0] = end - begin;
      for (int64_t i = begin; i < end; ++i) w.Put(shapes[0][static_cast<size_t>(i)]);
      ok = end - begin == ir.num_values;
      break;
    }
    case MoveOp::kSize: w.Put(Product(shapes[0], 0, shapes[0].size())); ok = true; break;
    case MoveOp::kCast:
      std::copy(shapes[0].begin(), shapes[0].end(), out_shape);
      w.Put(0);
      w.Put(0);
      w.Loop(Product(shapes[0], 0, shapes[0].size()), 1, 1);
      ok = true;
      break;
  }
  return ok && w.n == ir.numbers.size();
}

std::string DataMoveIR::ToText() const {
  // The op's name is not part of it: a Slice and a Transpose of the same numbers are the same code.
  std::string s = "datamove elem " + std::to_string(elem_bytes) + "B";
  if (index_bytes) s += " index " + std::to_string(index_bytes) + "B";
  if (cast_from != DType::kUndefined)
    s += std::string(" cast ") + DTypeName(cast_from) + " -> " + DTypeName(cast_to);
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
  const MoveOperand& in = inputs[static_cast<size_t>(i)];
  if (in.dtype != DType::kInt64 && in.dtype != DType::kInt32)
    return *why = "computed parameter input " + std::to_string(i) + " is not known to be int64 or int32", false;
  if (!in.has_shape || in.dims.size() != 1 || in.dims[0] < 0 || in.dims[0] > static_cast<int64_t>(kMaxMoveRank))
    return *why = "computed parameter input " + std::to_string(i) + " has no static length", false;
  ir.param_operands[ir.onnx_op == "Reshape" ? 0 : i - 1] = ir.num_operands++;
  ir.operand_node_input.push_back(i);
  ir.computed_params = true;
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
    if (AttrString(node, "mode", "constant") != "constant") return *why = "mode is not constant", false;
    const DType t = inputs[0].dtype;
    if (opset < 11) {
      ir.pads = AttrInts(node, "pads").value_or(std::vector<int64_t>{});
      const float value = AttrFloat(node, "value", 0.0f);
      if (t != DType::kFloat) return *why = "Pad-2 on a type other than float", false;
      std::memcpy(&ir.fill, &value, sizeof(value));
    } else {
      auto pads = ConstantInts(inputs, 1);
      if (!pads) return *why = "pads are not a constant", false;
      ir.pads = std::move(*pads);
      if (HasInput(node, 2)) {
        const Tensor* v = inputs[2].constant;
        if (!v || v->dtype() != t || v->size() != 1) return *why = "constant_value is not a constant of the data type", false;
        std::memcpy(&ir.fill, v->raw(), DTypeSize(t));
      }
      if (HasInput(node, 3)) return *why = "Pad-18 axes", false;
    }
    if (static_cast<int64_t>(ir.pads.size()) != 2 * rank) return *why = "pads do not match the input rank", false;
    ir.has_fill = true;
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
std::vector<std::vector<int64_t>> Substitute(std::span<const MoveOperand> inputs, int variant, bool every_dim) {
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
        const int64_t value = variant == 0 ? 100003 + 7 * i : variant == 1 ? 200017 + 13 * i : variant == 2 ? 2 + i : 1;
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
  ir.num_operands = ir.onnx_op == "Concat" ? node.input_size() : ir.onnx_op == "Gather" ? 2 : 1;
  if (ir.num_operands > kMaxMoveOperands - 4) return Diag::Msg("more than 12 inputs");
  if (static_cast<int>(inputs.size()) < ir.num_operands) return Diag::Msg("missing inputs");
  for (int i = 0; i < ir.num_operands; ++i) ir.operand_node_input.push_back(i);
  for (int i = 0; i < ir.num_operands; ++i) {
    const MoveOperand& in = inputs[static_cast<size_t>(i)];
    if (node.input(i).empty()) return Diag::Msg("an empty input");
    if (!in.has_shape) return Diag::Msg("input '" + node.input(i) + "' has no declared shape");
    if (in.dims.size() > kMaxMoveRank) return Diag::Msg("rank above 16");
  }
  const DType data = inputs[0].dtype;
  if (!metadata) {
    if (data == DType::kUndefined || data == DType::kString || DTypeSize(data) == 0)
      return Diag::Msg("input '" + node.input(0) + "' is not known to be a fixed-size type");
    if (output_dtype != data && !cast) return Diag::Msg("output type differs from the input's");
    for (int i = 1; i < ir.num_operands && ir.onnx_op == "Concat"; ++i)
      if (inputs[static_cast<size_t>(i)].dtype != data) return Diag::Msg("inputs of different types");
    ir.elem_bytes = static_cast<int>(DTypeSize(data));
  } else {
    ir.elem_bytes = 8;
  }
  std::string why;
  if (!ReadParameters(node, opset, inputs, ir, &why)) return Diag::Msg(why);
  if (ir.op == MoveOp::kCast && output_dtype != ir.cast_to) return Diag::Msg("output type is not the Cast's 'to'");

  // The structure, then the numbers of both variants.
  const int rank = static_cast<int>(inputs[0].dims.size());
  switch (ir.op) {
    case MoveOp::kTranspose:
    case MoveOp::kSlice:
    case MoveOp::kPad: ir.pieces.push_back({0, rank, -1, -1}); break;
    case MoveOp::kCast: ir.pieces.push_back({0, 1, -1, -1}); break;
    case MoveOp::kConcat:
      for (int i = 0; i < ir.num_operands; ++i) ir.pieces.push_back({i, 2, -1, -1});
      break;
    case MoveOp::kGather: ir.pieces.push_back({0, 3, 1, 1}); break;
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
      const auto shapes = Substitute(inputs.first(static_cast<size_t>(ir.num_operands)), variant, every_dim);
      std::vector<std::span<const int64_t>> spans(shapes.begin(), shapes.end());
      int64_t* numbers = variant == 0 ? ir.numbers.data() : other.data();
      if (!PlanDataMove(ir, spans, numbers, out_shape.data())) {
        // A view has no numbers: its output rank is known, each call checks its dims (a Squeeze
        // of a symbolic dim that must be 1).
        if (variant >= 2 || ir.op == MoveOp::kView) continue;
        return false;
      }
      if (variant < 2 && !every_dim) out_size[variant] = Product(out_shape, 0, static_cast<size_t>(ir.out_rank));
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
