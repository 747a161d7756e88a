// Helpers shared by the quant kernels: rounding/saturation as ONNX defines it, and reading
// per-tensor or per-axis scale/zero-point inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace nuphar {

/// round-half-to-even(v) saturated to Q's range (ONNX QuantizeLinear's rounding).
template <class Q>
Q SaturateRound(float v) {
  const float r = std::nearbyint(v);  // default rounding mode: to nearest, ties to even
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (!(r >= lo)) return std::isnan(r) ? Q(0) : std::numeric_limits<Q>::lowest();
  if (r > hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(r);
}

/// A scale or zero-point input that is either one value or one value per index along an axis.
/// `count` = 1 (per tensor) or the axis extent (per axis).
struct PerAxisParam {
  const Tensor* tensor = nullptr;
  int64_t count = 1;
};

/// Validates `param` (may be null = absent) as per-tensor or per-axis for an axis of `extent`.
inline Expected<PerAxisParam> ReadPerAxisParam(const Tensor* param, int64_t extent, const char* what) {
  PerAxisParam p;
  p.tensor = param;
  if (!param) return p;
  if (param->size() == 1 && param->rank() <= 1) return p;
  if (param->rank() == 1 && param->size() == extent) {
    p.count = extent;
    return p;
  }
  return Diag::Msg(std::string(what) + " must be a scalar or a 1-D tensor of " + std::to_string(extent) +
                   " elements, got " + ShapeToString(param->shape()));
}

/// Splits `shape` around `axis` (negative allowed): outer * extent * inner elements.
inline Status SplitAroundAxis(const std::vector<int64_t>& shape, int64_t axis, int64_t* outer, int64_t* extent,
                              int64_t* inner) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  *outer = *extent = *inner = 1;
  if (rank == 0) return Status::OK();
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return Diag::Msg("axis " + std::to_string(axis) + " is out of range for " + ShapeToString(shape));
  for (int64_t i = 0; i < rank; ++i) (i < a ? *outer : i == a ? *extent : *inner) *= shape[static_cast<size_t>(i)];
  return Status::OK();
}

}  // namespace nuphar
