// Conv GEMM micro-kernel, AVX2+FMA (this file alone gets the avx2 flags, R10): C[rows, cols] =
// A_panel x B for one packed panel of kMr = 6 output channels, 16 columns per tile (12 ymm
// accumulators), a masked tile for the last < 8 columns. See sgemm_pack.cc for the panel layout.
#include <immintrin.h>

#include "runtime/kernels/conv/sgemm_internal.h"

namespace nuphar::conv_avx2 {
namespace {

constexpr int kMr = 6;

template <int NV, bool kMasked>
inline void Tile(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                 __m256i mask) {
  __m256 acc[kMr][NV];
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j)
      bv[j] = kMasked && j == NV - 1 ? _mm256_maskload_ps(b[k] + n0 + 8 * j, mask) : _mm256_loadu_ps(b[k] + n0 + 8 * j);
    const float* ak = a + k * kMr;
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const __m256 av = _mm256_broadcast_ss(ak + i);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
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
        _mm256_maskstore_ps(c + i * ldc + 8 * j, mask, acc[i][j]);
      else
        _mm256_storeu_ps(c + i * ldc + 8 * j, acc[i][j]);
    }
  }
}

}  // namespace

void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                int64_t cols) {
  int64_t n = 0;
  for (; n + 16 <= cols; n += 16) Tile<2, false>(a, K, b, n0 + n, c + n, ldc, rows, __m256i{});
  if (n + 8 <= cols) {
    Tile<1, false>(a, K, b, n0 + n, c + n, ldc, rows, __m256i{});
    n += 8;
  }
  if (n < cols) {
    const int left = static_cast<int>(cols - n);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    Tile<1, true>(a, K, b, n0 + n, c + n, ldc, rows, _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lanes));
  }
}

}  // namespace nuphar::conv_avx2
