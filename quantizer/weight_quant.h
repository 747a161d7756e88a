// Static per-column weight quantization (spec §3.4, Q1): one (step, base) pair per output
// column n of W[K, N], reducing over axis 0.
//
// # Why every operation is spelled out in float32
// The original computes in numpy float32 and its outputs are the golden data. To get the same
// bytes we do each operation in float32 in the same order, with no FMA contraction (the
// library builds with -ffp-contract=off), a true division for the normalisation, and
// round-half-to-even for the rounding:
//   symmetric:  fscale = max|W[:,n]|,  step = fscale / R,  base = 0
//   asymmetric: fscale = (fmax - fmin) / (signed ? 2 : 1),  step = fscale / R,
//               base = signed ? ((fmax + fmin) + step) * 0.5 : fmin
//   norm = fscale != 0 ? (W - base) / fscale : 0;  q = clamp(rint_even(norm * R), q_min, q_max)
//   rowsum[n] = sum_k q[k, n]   (exact in float32 while |sum| < 2^24)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"
#include "quantizer/quantizer.h"

namespace nuphar::quant {

struct QuantizedWeight {
  int64_t k = 0, n = 0;
  std::vector<float> step;    ///< [N]
  std::vector<float> base;    ///< [N]; all zero when symmetric
  std::vector<float> rowsum;  ///< [N]; column sums of q
  /// q in the config's storage type (int8/uint8/int16/uint16), row-major [K, N].
  std::string q_bytes;
};

/// Quantizes W (row-major [k, n]). Fails for non-finite values in W or in a column's scale
/// (the original would cast NaN to an integer, which is undefined).
Expected<QuantizedWeight> QuantizeWeightPerColumn(const float* w, int64_t k, int64_t n,
                                                  const QuantizeConfig& cfg, bool symmetric);

/// Element q[i] as a double, whatever the storage type.
double QuantizedValue(const QuantizedWeight& qw, const QuantizeConfig& cfg, int64_t i);

struct WeightError {
  double max_abs_error = 0;  ///< max |W - (base + step * q)|
  double max_abs = 0;        ///< max |W|
  double rel_l2_error = 0;   ///< ||W - Wq||_2 / ||W||_2, 0 when W is all zero
};
WeightError MeasureWeightError(const float* w, const QuantizedWeight& qw, const QuantizeConfig& cfg);

/// Round half to even for |x| <= 2^22, bit-identical to nearbyintf in the default rounding
/// mode. Adding and subtracting 1.5 * 2^23 leaves the fraction to the FPU's round-to-nearest-even;
/// it avoids a libm call per element on baseline x86-64 (no SSE4.1 roundps).
inline float RoundHalfEvenSmall(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (x + kMagic) - kMagic;
}

}  // namespace nuphar::quant
