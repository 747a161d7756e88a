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
// 6 rows x two adjacent 32-column blocks: 24 zmm accumulators, per k four panel loads and one
// broadcast per row (a lone last block, or K > 128: 8 rows x 32 columns). 6 x 64 ran the hoisted projection
// (100 x 80 x 1024) at ~105 GMAC/s against ~95 for 8 x 32: twice the FMAs per broadcast.
// Each C element is one FMA chain over k in order, from zero: the same value for every row
// count, thread split and tile position (not Eigen's order; MatMul's packed paths never were).
// A bias is added to the finished sum, one rounding, as a separate Add node after the MatMul
// would: fusing it saves the pass over C, not a rounding.
#include <immintrin.h>

#include <algorithm>

#include "runtime/kernels/math/gemv_f32_internal.h"

namespace nuphar::gemv_avx512 {
namespace {

constexpr int64_t kCols = PackedGemvF32::kBlockCols;

/// C[0, MR) x [0, cols) of the NB adjacent 32-column blocks starting at `panel` (block j's panel
/// is K x 32 floats after block j-1's), cols in [1, 32 * NB].
template <int MR, int NB>
void Tile(const float* a, int64_t lda, const float* panel, int64_t K, int64_t cols, const float* bias, float* c,
          int64_t ldc) {
  constexpr int kVecs = 2 * NB;
  const int64_t block_floats = K * kCols;
  __m512 acc[MR][kVecs];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, panel += kCols) {
    __m512 b[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) b[v] = _mm512_load_ps(panel + (v / 2) * block_floats + (v % 2) * 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
    }
  }
  __mmask16 mask[kVecs];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const int64_t left = cols - 16 * v;
    mask[v] = left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
  }
  if (bias != nullptr) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      const __m512 bv = _mm512_maskz_loadu_ps(mask[v], bias + 16 * v);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) acc[r][v] = _mm512_add_ps(acc[r][v], bv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

/// Rows of the largest tile of NB blocks: 6 x 4 accumulators + 4 panel vectors + 1 broadcast fit
/// the 32 zmm registers (and 8 x 2 + 2 + 1 for one block).
template <int NB>
constexpr int kMaxRows = NB == 1 ? 8 : 6;

/// One tile of `rows` rows (1 to kMaxRows<NB>) of the NB blocks at `panel`.
template <int NB>
void TileOfRows(int rows, const float* a, int64_t lda, const float* panel, int64_t K, int64_t cols,
                const float* bias, float* c, int64_t ldc) {
  switch (rows) {
    case 8: if constexpr (kMaxRows<NB> >= 8) Tile<8, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 7: if constexpr (kMaxRows<NB> >= 7) Tile<7, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 6: Tile<6, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 5: Tile<5, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 4: Tile<4, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 3: Tile<3, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 2: Tile<2, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    case 1: Tile<1, NB>(a, lda, panel, K, cols, bias, c, ldc); break;
    default: break;
  }
}

/// All M rows of the NB blocks at `panel`: full tiles of kMaxRows<NB> rows. A remainder of less
/// than half a tile is merged with the last full tile and the two split evenly (25 rows: 6, 6, 6,
/// 4, 3 with block pairs; 8, 8, 5, 4 with single blocks): a 1-row tile has too few independent FMA chains to cover their latency (Silero v3.1's
/// filter bank, 25 windows, spent 11% of its product in its last row).
template <int NB>
void Rows(const float* a, int64_t M, int64_t lda, const float* panel, int64_t K, int64_t cols, const float* bias,
          float* c, int64_t ldc) {
  constexpr int kRows = kMaxRows<NB>;
  int64_t full = M / kRows;
  int rest = static_cast<int>(M % kRows);
  int last_pair = 0;  // rows of the last full tile and the remainder, split in two tiles
  if (rest > 0 && rest < kRows / 2 && full > 0) {
    --full;
    last_pair = kRows + rest;
    rest = 0;
  }
  int64_t m = 0;
  for (int64_t t = 0; t < full; ++t, m += kRows) Tile<kRows, NB>(a + m * lda, lda, panel, K, cols, bias, c + m * ldc, ldc);
  if (last_pair > 0) {
    const int first = (last_pair + 1) / 2;
    TileOfRows<NB>(first, a + m * lda, lda, panel, K, cols, bias, c + m * ldc, ldc);
    m += first;
    TileOfRows<NB>(last_pair - first, a + m * lda, lda, panel, K, cols, bias, c + m * ldc, ldc);
  } else if (rest > 0) {
    TileOfRows<NB>(rest, a + m * lda, lda, panel, K, cols, bias, c + m * ldc, ldc);
  }
}

}  // namespace

void GemmF32PackedBlocks(const float* a, int64_t M, int64_t lda, const PackedGemvF32& b, int64_t first, int64_t end,
                         const float* bias, float* c, int64_t ldc) {
  const int64_t K = b.K(), N = b.N();
  // Column blocks outer, rows inner: the blocks' panels stay in L1 for all rows. Two blocks at a
  // time while their panels (2 x K x 128 bytes) take at most 32 KB of the 48 KB L1; past that (the
  // filter bank of an STFT front end: K = 256 taps) each row tile would stream them from L2 again.
  const bool pairs = 2 * K * kCols * static_cast<int64_t>(sizeof(float)) <= 32 * 1024;
  for (int64_t blk = first; blk < end;) {
    const int64_t n0 = blk * kCols;
    const float* bias_n0 = bias != nullptr ? bias + n0 : nullptr;
    if (pairs && blk + 1 < end) {
      Rows<2>(a, M, lda, b.block(blk), K, std::min(2 * kCols, N - n0), bias_n0, c + n0, ldc);
      blk += 2;
    } else {
      Rows<1>(a, M, lda, b.block(blk), K, std::min(kCols, N - n0), bias_n0, c + n0, ldc);
      blk += 1;
    }
  }
}

}  // namespace nuphar::gemv_avx512
