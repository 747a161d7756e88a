// The data-movement plan of one call: offsets, sizes and strides from the operand shapes
// (datamove_ir.h, PlanDataMove), the same arithmetic as the reference kernels.
#include <algorithm>

#include "runtime/jit/datamove_ir.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::jit {
namespace {

using tensor_kernels::DimProduct;

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
    out[0] = DimProduct(x, 0, static_cast<size_t>(axis));
    out[1] = DimProduct(x, static_cast<size_t>(axis), x.size());
    return true;
  }
  if (ir.view == ViewKind::kReshape) {
    const int64_t size = DimProduct(x, 0, x.size());
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
      } else if (__builtin_mul_overflow(known, d, &known)) {
        return false;  // a target no tensor can have (model-given numbers: fuzz_session_create)
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

// The reference Slice's arithmetic (tensor_common.h's ResolveSliceAxis, which it shares).
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
    const int64_t step = p.steps[i];
    if (step == 0) return false;
    const tensor_kernels::SliceRange range =
        tensor_kernels::ResolveSliceAxis(p.starts[i], p.ends[i], step, x[static_cast<size_t>(axis)]);
    out[axis] = range.count;
    if (range.count > 0) base += range.start * strides[axis];
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
  const int64_t outer = DimProduct(first, 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(first, static_cast<size_t>(axis) + 1, first.size());
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
  const int64_t outer = DimProduct(data, 0, static_cast<size_t>(axis));
  const int64_t dim = data[static_cast<size_t>(axis)];
  const int64_t inner = DimProduct(data, static_cast<size_t>(axis) + 1, data.size());
  const int64_t count = DimProduct(indices, 0, indices.size());
  // The strides multiply dims of two operands (each under 2^50 at the load-time probe): checked.
  int64_t data_stride = 0, out_stride = 0;
  if (__builtin_mul_overflow(dim, inner, &data_stride) || __builtin_mul_overflow(count, inner, &out_stride)) return false;
  w.Put(0);
  w.Put(0);
  w.Loop(outer, data_stride, out_stride);
  w.Loop(count, inner, inner);
  w.Put(dim);  // the index bound
  w.Loop(inner, 1, 1);
  return true;
}

// Constant padding (negative pads crop): fill the output, then copy the kept part of the input.
// Pad reflect/edge: one piece per combination of regions (interior, then before, then after,
// for the padded sides only), the first axis's region varying slowest. A region before the
// interior of size b reads positions b, b-1, ..., 1 (reflect) or 0 (edge); one after it of size e
// reads n-2, n-3, ... (reflect) or n-1 (edge). A reflection longer than the dim (the reference
// repeats it) or an empty dim is no plan: the reference runs.
bool PlanPadRegions(const DataMoveIR& ir, std::span<const int64_t> pads, std::span<const int64_t> x, const int64_t* strides,
                    const int64_t* out_strides, NumberWriter& w) {
  const size_t rank = x.size();
  struct Region {
    int64_t size, src, src_stride, dst;
  };
  Region regions[kMaxMoveRank][3];
  int count[kMaxMoveRank];
  for (size_t k = 0; k < rank; ++k) {
    const int64_t n = x[k], before = pads[k], after = pads[k + rank];
    if (before < 0 || after < 0) return false;  // computed pads: cropping is the reference's
    if ((before > 0 || after > 0) && (n < 1 || (ir.pad_reflect && (before > n - 1 || after > n - 1)))) return false;
    const int64_t back = ir.pad_reflect ? -strides[k] : 0;
    count[k] = 0;
    regions[k][count[k]++] = {n, 0, strides[k], before};
    // The IR's structure (ir.pads: its constant pads, or every side when they are computed) says
    // which regions are pieces; a computed pad of 0 is an empty one.
    if (ir.pads[k] > 0) regions[k][count[k]++] = {before, before > 0 && ir.pad_reflect ? before : 0, back, 0};
    if (ir.pads[k + rank] > 0) regions[k][count[k]++] = {after, after > 0 && ir.pad_reflect ? n - 2 : after > 0 ? n - 1 : 0, back, before + n};
  }
  const int64_t pieces = PadRegionPieces(ir.pads);
  for (int64_t p = 0; p < pieces; ++p) {
    const Region* chosen[kMaxMoveRank];
    int64_t rest = p, src = 0, dst = 0;
    bool empty = false;
    for (size_t k = rank; k-- > 0;) {
      chosen[k] = &regions[k][rest % count[k]];
      rest /= count[k];
      src += chosen[k]->src * strides[k];
      dst += chosen[k]->dst * out_strides[k];
      empty |= chosen[k]->size == 0;
    }
    w.Put(empty ? 0 : src);
    w.Put(empty ? 0 : dst);
    const size_t first = w.n;
    for (size_t k = 0; k < rank; ++k) w.Loop(empty ? 0 : chosen[k]->size, chosen[k]->src_stride, out_strides[k]);
    MergeLoops(w.out + first, static_cast<int>(rank));
  }
  return true;
}

bool PlanPad(const DataMoveIR& ir, std::span<const int64_t> pads, std::span<const int64_t> x, NumberWriter& w, int64_t* out) {
  const size_t rank = x.size();
  if (pads.size() != 2 * rank || ir.pads.size() != 2 * rank) return false;
  int64_t strides[kMaxMoveRank], out_strides[kMaxMoveRank];
  Strides(x, strides);
  // Computed pads are any int64s a Run feeds: a size no tensor can have is the reference's error.
  int64_t elements = 1;
  for (size_t k = 0; k < rank; ++k) {
    if (__builtin_add_overflow(x[k], pads[k], &out[k]) || __builtin_add_overflow(out[k], pads[k + rank], &out[k]) ||
        out[k] < 0 || __builtin_mul_overflow(elements, std::max<int64_t>(out[k], 1), &elements) ||
        elements > (int64_t{1} << 50) || pads[k] < -x[k] || pads[k + rank] < -x[k])  // a crop past the dim: the reference's
      return false;
  }
  Strides(std::span<const int64_t>(out, rank), out_strides);
  if (!ir.has_fill) return PlanPadRegions(ir, pads, x, strides, out_strides, w);
  w.Put(DimProduct(std::span<const int64_t>(out, rank), 0, rank));
  int64_t src = 0, dst = 0;
  int64_t kept[kMaxMoveRank];
  bool empty = false;
  for (size_t k = 0; k < rank; ++k) {
    const int64_t begin = pads[k], end = pads[k + rank];
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

// ScatterND (a box of constant indices, datamove_ir.h): the data copied whole, then the updates
// into the box's window. The updates must be the indices' dims followed by the data's dims past
// the tuple length, and the box within the data (else the reference runs and reports it).
bool PlanScatter(const DataMoveIR& ir, std::span<const int64_t> data, std::span<const int64_t> updates, NumberWriter& w,
                 int64_t* out) {
  const size_t rank = data.size(), k = ir.scatter_base.size(), q = ir.scatter_dims.size();
  if (k > rank || updates.size() != q + rank - k) return false;
  for (size_t t = 0; t < q; ++t)
    if (updates[t] != ir.scatter_dims[t]) return false;
  for (size_t j = k; j < rank; ++j)
    if (updates[q + j - k] != data[j]) return false;
  int64_t strides[kMaxMoveRank], update_strides[kMaxMoveRank];
  Strides(data, strides);
  Strides(updates, update_strides);
  int64_t dst = 0;
  for (size_t a = 0; a < k; ++a) {
    if (ir.scatter_base[a] >= data[a]) return false;
    dst += ir.scatter_base[a] * strides[a];
  }
  for (size_t t = 0; t < q; ++t)
    if (ir.scatter_axes[t] >= 0 && ir.scatter_base[static_cast<size_t>(ir.scatter_axes[t])] + ir.scatter_dims[t] >
                                       data[static_cast<size_t>(ir.scatter_axes[t])])
      return false;
  std::copy(data.begin(), data.end(), out);
  const int64_t size = DimProduct(data, 0, rank);
  w.Put(0);
  w.Put(0);
  w.Loop(size, 1, 1);
  const bool empty = size == 0 || DimProduct(updates, 0, updates.size()) == 0;
  w.Put(0);
  w.Put(empty ? 0 : dst);
  for (size_t t = 0; t < q; ++t)
    w.Loop(empty ? 0 : ir.scatter_dims[t], update_strides[t], ir.scatter_axes[t] >= 0 ? strides[ir.scatter_axes[t]] : 0);
  for (size_t j = k; j < rank; ++j) w.Loop(empty ? 0 : data[j], update_strides[q + j - k], strides[j]);
  // Not merged: whether the window's rows are contiguous depends on the data's dims (a window
  // spanning a whole symbolic axis merges at that size only), which a baked loop size cannot follow.
  return true;
}

}  // namespace

int64_t PadRegionPieces(std::span<const int64_t> pads) {
  const size_t rank = pads.size() / 2;
  int64_t pieces = 1;
  for (size_t k = 0; k < rank; ++k) {
    pieces *= 1 + (pads[k] > 0) + (pads[k + rank] > 0);
    if (pieces > (int64_t{1} << 60)) return int64_t{1} << 62;
  }
  return pieces;
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
    case MoveOp::kPad: ok = PlanPad(ir, ir.computed_params ? params.target : std::span<const int64_t>(ir.pads), shapes[0], w, out_shape); break;
    case MoveOp::kScatter: ok = PlanScatter(ir, shapes[0], shapes[1], w, out_shape); break;
    case MoveOp::kFill: {  // the dims are the computed values; a negative one is the reference's error
      int64_t size = 1;
      ok = params.target.size() <= kMaxMoveRank;
      for (size_t k = 0; ok && k < params.target.size(); ++k) {
        out_shape[k] = params.target[k];
        ok = out_shape[k] >= 0 && !__builtin_mul_overflow(size, out_shape[k], &size) && size < (int64_t{1} << 50);
      }
      w.Put(size);
      break;
    }
    case MoveOp::kShape: {
      const int64_t rank = static_cast<int64_t>(shapes[0].size());
      auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
      const int64_t begin = clamp(ir.shape_start), end = std::max(begin, clamp(ir.shape_end));
      out_shape[0] = end - begin;
      for (int64_t i = begin; i < end; ++i) w.Put(shapes[0][static_cast<size_t>(i)]);
      ok = end - begin == ir.num_values;
      break;
    }
    case MoveOp::kSize: w.Put(DimProduct(shapes[0], 0, shapes[0].size())); ok = true; break;
    case MoveOp::kCast:
      std::copy(shapes[0].begin(), shapes[0].end(), out_shape);
      w.Put(0);
      w.Put(0);
      w.Loop(DimProduct(shapes[0], 0, shapes[0].size()), 1, 1);
      ok = true;
      break;
  }
  return ok && w.n == ir.numbers.size();
}

}  // namespace nuphar::jit
