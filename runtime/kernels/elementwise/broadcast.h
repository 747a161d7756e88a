// Multidirectional (numpy-style) broadcasting for kernels: the output shape, and a collapsed
// loop nest that walks N broadcast inputs row by row with no per-element index math.
//
// # How to use it
//
//   // 1. The output shape (a run-time error names both shapes when they do not broadcast).
//   std::vector<int64_t> out_shape;
//   NUPHAR_RETURN_IF_ERROR(BroadcastShape(a.shape(), b.shape(), out_shape));
//   Tensor* y = ctx.Output(0, a.dtype(), out_shape);
//   // 2. A plan for the inputs against that shape (fixed-size arrays: no allocation).
//   BroadcastPlan<2> plan;
//   NUPHAR_RETURN_IF_ERROR(plan.Init({a.shape(), b.shape()}, out_shape));
//   // 3. Rows: each call covers `n` contiguous output elements starting at `out`; input k starts
//   //    at `in[k]` and advances by plan.inner_stride(k) per element (1, or 0 = repeated).
//   const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
//   ForEachBroadcastRow(plan, [&](int64_t out, const int64_t* in, int64_t n) {
//     if (sa && sb)  for (i < n) y[out + i] = A[in[0] + i] + B[in[1] + i];   // vectorizes
//     else if (sb == 0) ...                                                   // b is a scalar here
//   });
//
// # Why rows are long
// Init drops output dims of size 1 and merges adjacent dims in which every input is either
// present in both or broadcast in both (so its elements stay contiguous or stay repeated).
// Same shapes collapse to one row of `size` elements; a scalar operand becomes stride 0 on a
// single row; [B, H] + [H] becomes B rows of H with both strides 1; [B, H] + [B, 1] becomes
// B rows with the second stride 0. Hot binary kernels therefore run one branch-free inner loop
// per row, and the odometer over the outer dims costs one step per row, not per element.
//
// Rank: inputs and output may have any rank; after collapsing at most kMaxBroadcastRank dims
// may remain (alternating broadcast patterns), else Init returns an error.
// Thread-safety: a plan is a value; ForEachBroadcastRow only reads it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/error.h"

namespace nuphar {

constexpr int kMaxBroadcastRank = 8;

/// A shape stored inline, so hot kernels compute output shapes without allocating.
struct InlineShape {
  static constexpr size_t kCapacity = 16;
  int64_t dims[kCapacity];
  size_t rank = 0;
  std::span<const int64_t> span() const { return {dims, rank}; }
  operator std::span<const int64_t>() const { return span(); }  // NOLINT: used where shapes are spans
};

/// out = numpy broadcast of a and b. Error: "cannot broadcast [2,3] with [4]".
Status BroadcastShape(std::span<const int64_t> a, std::span<const int64_t> b, std::vector<int64_t>& out);
/// The same into an InlineShape. Both forms fail for ranks above InlineShape::kCapacity.
Status BroadcastShape(std::span<const int64_t> a, std::span<const int64_t> b, InlineShape& out);
/// out = broadcast of every shape in `shapes` (at least one).
Status BroadcastShapes(std::span<const std::span<const int64_t>> shapes, std::vector<int64_t>& out);

/// A collapsed loop nest over `out_shape` for N inputs (see the file comment).
template <int N>
struct BroadcastPlan {
  int rank = 1;                                  ///< collapsed rank, >= 1
  int64_t size = 0;                              ///< output element count
  int64_t dims[kMaxBroadcastRank] = {1};         ///< collapsed output dims, innermost last
  int64_t strides[N][kMaxBroadcastRank] = {};    ///< element strides per input; 0 = repeated

  /// Builds the plan. Each input shape must broadcast to `out_shape` exactly (it may have
  /// lower rank; missing leading dims are 1).
  Status Init(const std::array<std::span<const int64_t>, N>& in_shapes, std::span<const int64_t> out_shape);

  int64_t inner() const { return dims[rank - 1]; }
  int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
  /// True when input k is a single repeated value over the whole output.
  bool is_scalar(int k) const {
    for (int d = 0; d < rank; ++d)
      if (strides[k][d] != 0) return false;
    return true;
  }
};

/// Calls fn(out_offset, in_offsets /* int64_t[N] */, n) once per output row, in output order.
template <int N, class RowFn>
inline void ForEachBroadcastRow(const BroadcastPlan<N>& p, RowFn&& fn) {
  if (p.size == 0) return;
  const int outer_rank = p.rank - 1;
  const int64_t n = p.dims[p.rank - 1];
  int64_t in[N] = {};
  if (outer_rank == 0) {
    fn(int64_t{0}, static_cast<const int64_t*>(in), n);
    return;
  }
  int64_t idx[kMaxBroadcastRank] = {};
  const int64_t rows = p.size / n;
  for (int64_t row = 0, out = 0; row < rows; ++row, out += n) {
    fn(out, static_cast<const int64_t*>(in), n);
    // Odometer over the outer dims: advance the innermost outer dim, carry outwards.
    for (int d = outer_rank - 1; d >= 0; --d) {
      if (++idx[d] < p.dims[d]) {
        for (int k = 0; k < N; ++k) in[k] += p.strides[k][d];
        break;
      }
      idx[d] = 0;
      for (int k = 0; k < N; ++k) in[k] -= p.strides[k][d] * (p.dims[d] - 1);
    }
  }
}

/// Non-template core of BroadcastPlan::Init (broadcast.cc): fills dims and strides for
/// `num_inputs` inputs with strides laid out [k * kMaxBroadcastRank + d].
Status InitBroadcastPlan(std::span<const std::span<const int64_t>> in_shapes, std::span<const int64_t> out_shape,
                         int& rank, int64_t& size, int64_t* dims, int64_t* strides);

template <int N>
Status BroadcastPlan<N>::Init(const std::array<std::span<const int64_t>, N>& in_shapes,
                              std::span<const int64_t> out_shape) {
  return InitBroadcastPlan(std::span<const std::span<const int64_t>>(in_shapes.data(), N), out_shape, rank, size,
                           dims, &strides[0][0]);
}

}  // namespace nuphar
