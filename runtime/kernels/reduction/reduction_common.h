// Shared helpers of the reduction kernel family (Reduce*, ArgMax/ArgMin, Softmax family,
// CumSum, TopK): axis normalization and the [outer, axis, inner] view of a tensor.
//
// # The [outer, axis, inner] view
// An op that works along one axis of a dense row-major tensor sees it as a 3-D array:
// outer = product of the dims before the axis, n = the axis dim, inner = product of the dims
// after it. Element (o, r, i) is at o * n * inner + r * inner + i. Opset < 13 Softmax's 2-D
// coercion is the same view with inner = 1 and n = product of the dims from the axis on.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::red {

using ew::TypeSet;

/// `axis` in [-rank, rank) as [0, rank), or an error naming the rank.
inline Expected<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return Diag::Msg("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

/// The view of `shape` around dim `axis` (already normalized).
inline AxisView ViewAround(std::span<const int64_t> shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[d];
    else if (d == axis) v.n = shape[d];
    else v.inner *= shape[d];
  }
  return v;
}

/// Registration of each file of the family (called from reduction_register.cc).
void RegisterReduceKernels(KernelRegistry& r);   // reduction_reduce.cc
void RegisterArgKernels(KernelRegistry& r);      // reduction_arg.cc
void RegisterSoftmaxKernels(KernelRegistry& r);  // reduction_softmax.cc
void RegisterCumSumKernel(KernelRegistry& r);    // reduction_cumsum.cc
void RegisterTopKKernel(KernelRegistry& r);      // reduction_topk.cc

}  // namespace nuphar::red
