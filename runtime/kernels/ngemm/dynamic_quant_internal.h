// Row hooks of the fused dynamic-quantized MatMul, per ISA (dynamic_quant_matmul.cc = portable,
// dynamic_quant_matmul_avx2.cc = AVX2). Both round every float op exactly like the graph.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"

namespace nuphar::ngemm {

struct RowStats {
  float scale = 0.0f;  ///< scale_X = delta * inv_range
  float bias = 0.0f;   ///< bias_X = row min (asymm8), 0 (symm16)
  int32_t qsum = 0;    ///< ReduceSum(Cast<i32>(Q_X))
  int32_t pad = 0;
};

using QuantizeRowFn = RowStats (*)(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out);
using DequantizeRowFn = void (*)(DynQuantScheme scheme, const RowStats& s, const int32_t* q_y, int64_t N,
                                 const DynQuantWeights& w, const DynQuantConstants& c, const float* bias_add, float* y);

RowStats QuantizeRowRef(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out);
void DequantizeRowRef(DynQuantScheme scheme, const RowStats& s, const int32_t* q_y, int64_t N,
                      const DynQuantWeights& w, const DynQuantConstants& c, const float* bias_add, float* y);
RowStats QuantizeRowAvx2(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out);
RowStats QuantizeRowAvx512(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out);
void DequantizeRowAvx2(DynQuantScheme scheme, const RowStats& s, const int32_t* q_y, int64_t N,
                       const DynQuantWeights& w, const DynQuantConstants& c, const float* bias_add, float* y);

/// One element of the quantization chain: Sub (asymm8 only), Mul(inv), Mul(range), Add(half),
/// Floor, Clip (NaN stays NaN), Cast<int> (NaN -> 0). Shared by every ISA's tail handling.
inline int32_t QuantizeValue(DynQuantScheme scheme, float x, float bias, float inv, const DynQuantConstants& c) {
  const float norm = scheme == DynQuantScheme::kAsymm8 ? (x - bias) * inv : x * inv;
  const float scaled = norm * c.range;
  const float shifted = scaled + c.half;
  const float f = std::floor(shifted);
  const float clipped = f < c.clip_min ? c.clip_min : (f > c.clip_max ? c.clip_max : f);
  return std::isnan(clipped) ? 0 : static_cast<int32_t>(clipped);
}

/// Quantizes x[from, K) element by element (QuantizeValue) into q_out, uint8 for asymm8 and int16
/// for symm16; returns the sum of the quantized values. The portable row, and every ISA's tail.
inline int32_t QuantizeElements(DynQuantScheme scheme, const float* x, int64_t from, int64_t K, float bias, float inv,
                                const DynQuantConstants& c, void* q_out) {
  int32_t qsum = 0;
  for (int64_t k = from; k < K; ++k) {
    const int32_t q = QuantizeValue(scheme, x[k], bias, inv, c);
    if (scheme == DynQuantScheme::kAsymm8) {
      static_cast<uint8_t*>(q_out)[k] = static_cast<uint8_t>(q);
    } else {
      static_cast<int16_t*>(q_out)[k] = static_cast<int16_t>(q);
    }
    qsum += q;
  }
  return qsum;
}

/// Reciprocal(delta) or Reciprocal(Max(delta, guard_value)).
inline float InverseDelta(float delta, const DynQuantConstants& c) {
  const float guarded = c.guard_zero_delta ? (delta > c.guard_value ? delta : c.guard_value) : delta;
  return 1.0f / guarded;
}

struct DynQuantRowFns {
  QuantizeRowFn quantize;
  DequantizeRowFn dequantize;
};
/// Chosen with the same tier as GetNgemmDispatch(session_tier) (dispatch.cc).
const DynQuantRowFns& GetDynQuantRowFns(std::optional<IsaTier> session_tier = std::nullopt);

}  // namespace nuphar::ngemm
