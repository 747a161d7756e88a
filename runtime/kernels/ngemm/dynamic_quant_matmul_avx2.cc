// Fused dynamic-quantized MatMul, AVX2 row hooks: 8 lanes of exactly the scalar chain. Every
// intrinsic is one rounded float op (-ffp-contract=off keeps GCC from fusing mul+add into FMA);
// floor uses vroundps in floor mode, never vcvtps2dq's round-to-nearest-even.
#include <immintrin.h>

#include "runtime/kernels/ngemm/dynamic_quant_internal.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

inline float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
inline float HorizontalMin(__m256 v) {
  __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_min_ps(m, _mm_movehl_ps(m, m));
  m = _mm_min_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
inline int32_t HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

RowStats QuantizeRowAvx2(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out) {
  const bool asymm = scheme == DynQuantScheme::kAsymm8;
  const int64_t K8 = K / 8 * 8;
  float delta;
  RowStats s;
  // Row statistics (max/min are exact, so lane order does not matter).
  if (asymm) {
    float rmax = x[0], rmin = x[0];
    if (K8 > 0) {
      __m256 vmax = _mm256_loadu_ps(x), vmin = vmax;
      for (int64_t k = 8; k < K8; k += 8) {
        const __m256 v = _mm256_loadu_ps(x + k);
        vmax = _mm256_max_ps(vmax, v);
        vmin = _mm256_min_ps(vmin, v);
      }
      rmax = HorizontalMax(vmax);
      rmin = HorizontalMin(vmin);
    }
    for (int64_t k = K8; k < K; ++k) {
      rmax = x[k] > rmax ? x[k] : rmax;
      rmin = x[k] < rmin ? x[k] : rmin;
    }
    delta = rmax - rmin;
    s.bias = rmin;
  } else {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 vmax = _mm256_setzero_ps();
    for (int64_t k = 0; k < K8; k += 8) vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(x + k), abs_mask));
    delta = K8 > 0 ? HorizontalMax(vmax) : std::fabs(x[0]);
    for (int64_t k = K8; k < K; ++k) delta = std::fabs(x[k]) > delta ? std::fabs(x[k]) : delta;
    s.bias = 0.0f;
  }
  const float inv = InverseDelta(delta, c);
  s.scale = delta * c.inv_range;

  const __m256 v_bias = _mm256_set1_ps(s.bias), v_inv = _mm256_set1_ps(inv), v_range = _mm256_set1_ps(c.range);
  const __m256 v_half = _mm256_set1_ps(c.half), v_lo = _mm256_set1_ps(c.clip_min), v_hi = _mm256_set1_ps(c.clip_max);
  __m256i v_sum = _mm256_setzero_si256();
  for (int64_t k = 0; k < K8; k += 8) {
    __m256 v = _mm256_loadu_ps(x + k);
    if (asymm) v = _mm256_sub_ps(v, v_bias);
    v = _mm256_mul_ps(v, v_inv);
    v = _mm256_mul_ps(v, v_range);
    v = _mm256_add_ps(v, v_half);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    // maxps/minps return the second operand when either is NaN: NaN survives the Clip ...
    v = _mm256_min_ps(v_hi, _mm256_max_ps(v_lo, v));
    // ... and Cast<int> turns it into 0.
    const __m256i q = _mm256_and_si256(_mm256_cvttps_epi32(v), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q)));
    v_sum = _mm256_add_epi32(v_sum, q);
    const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    if (asymm) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(q_out) + k), _mm_packus_epi16(q16, q16));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int16_t*>(q_out) + k), q16);
    }
  }
  s.qsum = HorizontalSum(v_sum) + QuantizeElements(scheme, x, K8, K, s.bias, inv, c, q_out);
  return s;
}

void DequantizeRowAvx2(DynQuantScheme scheme, const RowStats& s, const int32_t* q_y, int64_t N,
                       const DynQuantWeights& w, const DynQuantConstants& c, const float* bias_add, float* y) {
  const int64_t N8 = N / 8 * 8;
  const __m256 v_scale = _mm256_set1_ps(s.scale);
  if (scheme == DynQuantScheme::kSymm16) {
    for (int64_t n = 0; n < N8; n += 8) {
      const __m256 qy = _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_y + n)));
      __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(w.step + n), v_scale), qy);
      if (bias_add) v = _mm256_add_ps(v, _mm256_loadu_ps(bias_add + n));
      _mm256_storeu_ps(y + n, v);
    }
  } else {
    const __m256 v_bias = _mm256_set1_ps(s.bias);
    const __m256 v_scale_qsum = _mm256_set1_ps(s.scale * static_cast<float>(s.qsum));
    const __m256 v_bias_k = _mm256_set1_ps(s.bias * c.k_as_float);
    for (int64_t n = 0; n < N8; n += 8) {
      const __m256 step = _mm256_loadu_ps(w.step + n), base = _mm256_loadu_ps(w.base + n);
      const __m256 qy = _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_y + n)));
      const __m256 o0 = _mm256_mul_ps(_mm256_mul_ps(step, v_scale), qy);
      const __m256 o1 = _mm256_mul_ps(_mm256_mul_ps(step, v_bias), _mm256_loadu_ps(w.qparam_rowsum + n));
      const __m256 o2 = _mm256_mul_ps(base, v_scale_qsum);
      const __m256 o3 = _mm256_mul_ps(base, v_bias_k);
      __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(o3, o2), o1), o0);
      if (bias_add) v = _mm256_add_ps(v, _mm256_loadu_ps(bias_add + n));
      _mm256_storeu_ps(y + n, v);
    }
  }
  if (N8 < N) {
    DynQuantWeights tail = w;
    tail.step += N8;
    if (tail.base) tail.base += N8;
    if (tail.qparam_rowsum) tail.qparam_rowsum += N8;
    DequantizeRowRef(scheme, s, q_y + N8, N - N8, tail, c, bias_add ? bias_add + N8 : nullptr, y + N8);
  }
}

}  // namespace nuphar::ngemm
