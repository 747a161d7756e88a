// Fused dynamic-quantized MatMul, AVX-512 quantization row: 16 lanes of exactly the scalar chain
// of QuantizeValue, as the AVX2 row does on 8 (this file alone gets the avx512 flags, R10, and
// -ffp-contract=off). In an int8 Scan LSTM at hidden 128 the AVX2 row took 4% of the Run, much of
// it the three shuffles that narrow each 8 results to bytes; here a clamp and one vpmovdb
// (vpmovsdw for int16) narrow 16. The dequantization row stays on ymm: zmm gave no gain there
// (it waits on the product's last sums, docs/ngemm.md).
#include <immintrin.h>

#include "runtime/kernels/ngemm/dynamic_quant_internal.h"

// GCC 12's _mm512_reduce_* extract the upper half through _mm512_undefined_*, which its own
// header then reports as "used uninitialized" (the false positive of cmake/isa_flags.cmake).
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace nuphar::ngemm {

RowStats QuantizeRowAvx512(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out) {
  const bool asymm = scheme == DynQuantScheme::kAsymm8;
  const int64_t K16 = K / 16 * 16;
  float delta;
  RowStats s;
  // Row statistics (max/min are exact, so lane order does not matter).
  if (asymm) {
    float rmax = x[0], rmin = x[0];
    if (K16 > 0) {
      __m512 vmax = _mm512_loadu_ps(x), vmin = vmax;
      for (int64_t k = 16; k < K16; k += 16) {
        const __m512 v = _mm512_loadu_ps(x + k);
        vmax = _mm512_max_ps(vmax, v);
        vmin = _mm512_min_ps(vmin, v);
      }
      rmax = _mm512_reduce_max_ps(vmax);
      rmin = _mm512_reduce_min_ps(vmin);
    }
    for (int64_t k = K16; k < K; ++k) {
      rmax = x[k] > rmax ? x[k] : rmax;
      rmin = x[k] < rmin ? x[k] : rmin;
    }
    delta = rmax - rmin;
    s.bias = rmin;
  } else {
    __m512 vmax = _mm512_setzero_ps();
    for (int64_t k = 0; k < K16; k += 16) vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_loadu_ps(x + k)));
    delta = K16 > 0 ? _mm512_reduce_max_ps(vmax) : std::fabs(x[0]);
    for (int64_t k = K16; k < K; ++k) delta = std::fabs(x[k]) > delta ? std::fabs(x[k]) : delta;
    s.bias = 0.0f;
  }
  const float inv = InverseDelta(delta, c);
  s.scale = delta * c.inv_range;

  const __m512 v_bias = _mm512_set1_ps(s.bias), v_inv = _mm512_set1_ps(inv), v_range = _mm512_set1_ps(c.range);
  const __m512 v_half = _mm512_set1_ps(c.half), v_lo = _mm512_set1_ps(c.clip_min), v_hi = _mm512_set1_ps(c.clip_max);
  const __m512i v_zero = _mm512_setzero_si512(), v_255 = _mm512_set1_epi32(255);
  __m512i v_sum = _mm512_setzero_si512();
  for (int64_t k = 0; k < K16; k += 16) {
    __m512 v = _mm512_loadu_ps(x + k);
    if (asymm) v = _mm512_sub_ps(v, v_bias);
    v = _mm512_mul_ps(v, v_inv);
    v = _mm512_mul_ps(v, v_range);
    v = _mm512_add_ps(v, v_half);
    v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    // maxps/minps return the second operand when either is NaN: NaN survives the Clip ...
    v = _mm512_min_ps(v_hi, _mm512_max_ps(v_lo, v));
    // ... and Cast<int> turns it into 0.
    const __m512i q = _mm512_maskz_cvttps_epi32(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
    v_sum = _mm512_add_epi32(v_sum, q);
    if (asymm) {
      // The AVX2 row's signed-to-16-bit then unsigned-to-8-bit saturation is a clamp to [0, 255].
      const __m512i clamped = _mm512_min_epi32(_mm512_max_epi32(q, v_zero), v_255);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(q_out) + k), _mm512_cvtepi32_epi8(clamped));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<int16_t*>(q_out) + k), _mm512_cvtsepi32_epi16(q));
    }
  }
  s.qsum = _mm512_reduce_add_epi32(v_sum) + QuantizeElements(scheme, x, K16, K, s.bias, inv, c, q_out);
  return s;
}

}  // namespace nuphar::ngemm
