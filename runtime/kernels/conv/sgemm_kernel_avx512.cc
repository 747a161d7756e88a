// Conv GEMM micro-kernel, AVX-512 (this file alone gets the avx512 flags, R10): C[rows, cols] =
// A_panel x B for one packed panel of kMr = 12 output channels, 32 columns per tile (24 zmm
// accumulators), a masked tile for the last < 16 columns, and rows across the lanes for <= 8
// columns. See sgemm_pack.cc for the panel layout.
#include <immintrin.h>

#include "runtime/kernels/conv/sgemm_internal.h"

namespace nuphar::conv_avx512 {
namespace {

constexpr int kMr = 12;

template <int NV, bool kMasked>
inline void Tile(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                 __mmask16 mask) {
  __m512 acc[kMr][NV];
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j)
      bv[j] = kMasked && j == NV - 1 ? _mm512_maskz_loadu_ps(mask, b[k] + n0 + 16 * j)
                                     : _mm512_loadu_ps(b[k] + n0 + 16 * j);
    const float* ak = a + k * kMr;
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const __m512 av = _mm512_set1_ps(ak[i]);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  // Fully unrolled with constant indices, so the accumulators stay in registers (a data-dependent
  // `break` here made GCC keep them in memory and store all of them on every k).
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) {
    if (i >= rows) continue;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      if (kMasked && j == NV - 1)
        _mm512_mask_storeu_ps(c + i * ldc + 16 * j, mask, acc[i][j]);
      else
        _mm512_storeu_ps(c + i * ldc + 16 * j, acc[i][j]);
    }
  }
}

// Few columns (a filter bank over a short frame: openWakeWord's melspectrogram has 5): a
// column tile would leave most lanes idle, so the panel's 12 rows go across the lanes instead
// (the [K][12] panel layout makes them one masked load per k) and each column is one broadcast.
template <int NC>
inline void FewColumns(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                       int64_t rows) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << kMr) - 1);
  // Two sets of accumulators over even and odd k: NC chains alone would wait on the FMA latency.
  __m512 acc0[NC], acc1[NC];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) acc0[n] = acc1[n] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= K; k += 2) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr), w1 = _mm512_maskz_loadu_ps(lanes, a + (k + 1) * kMr);
    const float* b0 = b[k] + n0;
    const float* b1 = b[k + 1] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) {
      acc0[n] = _mm512_fmadd_ps(w0, _mm512_set1_ps(b0[n]), acc0[n]);
      acc1[n] = _mm512_fmadd_ps(w1, _mm512_set1_ps(b1[n]), acc1[n]);
    }
  }
  if (k < K) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr);
    const float* b0 = b[k] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) acc0[n] = _mm512_fmadd_ps(w0, _mm512_set1_ps(b0[n]), acc0[n]);
  }
  alignas(64) float out[NC][16];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) _mm512_store_ps(out[n], _mm512_add_ps(acc0[n], acc1[n]));
  for (int64_t i = 0; i < rows; ++i)
    for (int n = 0; n < NC; ++n) c[i * ldc + n] = out[n][i];
}

}  // namespace

void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                int64_t cols) {
  switch (cols) {
    case 1:
      return FewColumns<1>(a, K, b, n0, c, ldc, rows);
    case 2:
      return FewColumns<2>(a, K, b, n0, c, ldc, rows);
    case 3:
      return FewColumns<3>(a, K, b, n0, c, ldc, rows);
    case 4:
      return FewColumns<4>(a, K, b, n0, c, ldc, rows);
    case 5:
      return FewColumns<5>(a, K, b, n0, c, ldc, rows);
    case 6:
      return FewColumns<6>(a, K, b, n0, c, ldc, rows);
    case 7:
      return FewColumns<7>(a, K, b, n0, c, ldc, rows);
    case 8:
      return FewColumns<8>(a, K, b, n0, c, ldc, rows);
    default:
      break;
  }
  int64_t n = 0;
  for (; n + 32 <= cols; n += 32) Tile<2, false>(a, K, b, n0 + n, c + n, ldc, rows, 0);
  if (n + 16 <= cols) {
    Tile<1, false>(a, K, b, n0 + n, c + n, ldc, rows, 0);
    n += 16;
  }
  if (n < cols) Tile<1, true>(a, K, b, n0 + n, c + n, ldc, rows, static_cast<__mmask16>((1u << (cols - n)) - 1));
}

}  // namespace nuphar::conv_avx512
