// fp32 GEMM on packed constant weights (gemv_f32.h GemmF32Packed), AVX-512 (this file alone gets
// the avx512 flags): the hoisted input projection of a converted RNN, X[seq, input] x W.
//
// # Why not Eigen
// For these shapes (M = 100 rows, K = 80, N = 4H) Eigen repacks W and zeroes C on every call
// and reached ~72 GMAC/s on the project's AVX-512 Xeon, 60% of the 119 GMAC/s of two zmm FMAs
// per cycle; W is constant, so it is packed once (PackedGemvF32: [N/32][K][32]) and C is written
// once from registers.
//
// # Register block and numerics
// 8 rows x one 32-column block: 16 zmm accumulators, per k two panel loads and one broadcast per
// row. Each C element is one FMA chain over k in order, from zero: the same value for every row
// count, thread split and tile position (not Eigen's order; MatMul's packed paths never were).
// A bias is added to the finished sum, one rounding, as a separate Add node after the MatMul
// would: fusing it saves the pass over C, not a rounding.
#include <immintrin.h>

#include <algorithm>

#include "runtime/kernels/math/gemv_f32_internal.h"

namespace nuphar::gemv_avx512 {
namespace {

constexpr int64_t kCols = PackedGemvF32::kBlockCols;

template <int MR>
void Tile(const float* a, int64_t lda, const float* panel, int64_t K, int64_t cols, const float* bias, float* c,
          int64_t ldc) {
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, panel += kCols) {
    const __m512 b0 = _mm512_load_ps(panel), b1 = _mm512_load_ps(panel + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + k]);
      acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
    }
  }
  const __mmask16 lo = cols >= 16 ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
  const __mmask16 hi = cols >= 32 ? __mmask16(0xffff) : cols <= 16 ? __mmask16(0) : __mmask16((1u << (cols - 16)) - 1);
  if (bias != nullptr) {
    const __m512 b0 = _mm512_maskz_loadu_ps(lo, bias), b1 = _mm512_maskz_loadu_ps(hi, bias + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = _mm512_add_ps(acc[r][0], b0);
      acc[r][1] = _mm512_add_ps(acc[r][1], b1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, lo, acc[r][0]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, hi, acc[r][1]);
  }
}

}  // namespace

void GemmF32PackedBlocks(const float* a, int64_t M, int64_t lda, const PackedGemvF32& b, int64_t first, int64_t end,
                         const float* bias, float* c, int64_t ldc) {
  constexpr int kMR = 8;
  const int64_t K = b.K(), N = b.N();
  // Column block outer, rows inner: the block's panel (K x 128 bytes) stays in L1 for all rows.
  for (int64_t blk = first; blk < end; ++blk) {
    const float* panel = b.block(blk);
    const int64_t n0 = blk * kCols, cols = std::min(kCols, N - n0);
    const float* bias_n0 = bias != nullptr ? bias + n0 : nullptr;
    int64_t m = 0;
    for (; m + kMR <= M; m += kMR) Tile<kMR>(a + m * lda, lda, panel, K, cols, bias_n0, c + m * ldc + n0, ldc);
    const float* ar = a + m * lda;
    float* cr = c + m * ldc + n0;
    switch (M - m) {
      case 7: Tile<7>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 6: Tile<6>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 5: Tile<5>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 4: Tile<4>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 3: Tile<3>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 2: Tile<2>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      case 1: Tile<1>(ar, lda, panel, K, cols, bias_n0, cr, ldc); break;
      default: break;
    }
  }
}

}  // namespace nuphar::gemv_avx512
