// The AVX2-family micro-kernels as templates over an op (avx2_ops.h; the AVX-VNNI ops are in
// kernel_avxvnni.cc), so each ISA file (kernel_avx2.cc, gemv_avx2.cc, kernel_avxvnni.cc) only
// instantiates them with its own compile flags. Include only from those files.
//
// GEMM: an MR x NR register block (NR = 16 columns = 2 panels), C in registers for the whole K
// range of the tile; the tile loop walks blocks in the order chosen by NUPHAR_IGEMM_PERMUTE.
// GEMV: per 32-column block, 4 accumulators per set (one per panel), kSets sets over
// consecutive k-groups to hide the accumulate latency; one vpbroadcastd per group, no
// horizontal sums, one sequential 128-byte-per-group stream.
// The register blocks are small fixed-size arrays: every loop over them carries
// `#pragma GCC unroll` so the arrays live in registers at -O2 too (without it, -O2 keeps them
// in memory and the kernels run at half speed).
#pragma once

#include <immintrin.h>

#include "runtime/kernels/ngemm/avx2_ops.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm::avx2 {

/// Pointer to the panel holding tile column `col` (a multiple of 8), at the tile's first k-group.
inline const uint8_t* PanelAt(const NgemmTileArgs& t, int64_t col) {
  const int64_t abs = t.col_in_block + col;
  return t.b + (abs / kBlockCols) * t.block_stride + ((abs % kBlockCols) / 8) * kPanelBytes;
}

template <class Op, int MR, int NP>
void MicroTile(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  const uint8_t* panel[NP];
  #pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) panel[p] = PanelAt(t, col0 + 8 * p);
  const uint8_t* a = t.a + row0 * t.lda_bytes;
  const int64_t lda = t.lda_bytes;
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;

  __m256i acc[MR][NP];
  #pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    #pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) acc[r][p] = _mm256_setzero_si256();

  // One k-group: MR broadcast rows times NP panel vectors.
  auto step = [&](int64_t offset, auto load_group) __attribute__((always_inline)) {
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const typename Op::A ar = Op::Prepare(load_group(r));
      #pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel[p] + offset));
        acc[r][p] = Op::Accumulate(acc[r][p], ar, v, ones16);
      }
    }
  };
  for (int64_t g = 0; g < full_groups; ++g) {
    const uint8_t* ag = a + 4 * g;
    step(g * kGroupBytes, [&](int r) { return LoadGroup(ag + r * lda); });
  }
  if (row_bytes % 4 != 0) {
    step(full_groups * kGroupBytes, [&](int r) { return LoadActivationGroup(a + r * lda, 4 * full_groups, row_bytes); });
  }
  #pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    int32_t* c = t.c + (row0 + r) * t.ldc + col0;
    #pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) StoreColumns(c + 8 * p, acc[r][p], t.cols - col0 - 8 * p, t.accumulate);
  }
}

/// Rows [row0, row0 + kMR) (fewer at the bottom edge) of one column block.
template <class Op, int kMR, int NP>
void RowBlock(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  static_assert(kMR >= 1 && kMR <= 6, "row block of 1..6 rows");
  const int64_t rows = t.rows - row0 >= kMR ? kMR : t.rows - row0;
  switch (rows) {
    case 6: if constexpr (kMR >= 6) MicroTile<Op, 6, NP>(t, row0, col0); break;
    case 5: if constexpr (kMR >= 5) MicroTile<Op, 5, NP>(t, row0, col0); break;
    case 4: if constexpr (kMR >= 4) MicroTile<Op, 4, NP>(t, row0, col0); break;
    case 3: if constexpr (kMR >= 3) MicroTile<Op, 3, NP>(t, row0, col0); break;
    case 2: if constexpr (kMR >= 2) MicroTile<Op, 2, NP>(t, row0, col0); break;
    default: MicroTile<Op, 1, NP>(t, row0, col0); break;
  }
}

/// One GEMM tile: blocks of kMR rows x 16 columns (8 at the right edge).
template <class Op, int kMR>
void Tile(const NgemmTileArgs& t) {
  constexpr int kNR = 16;
  auto block = [&](int64_t r, int64_t c) {
    if (t.cols - c > 8) {
      RowBlock<Op, kMR, 2>(t, r, c);
    } else {
      RowBlock<Op, kMR, 1>(t, r, c);
    }
  };
  if (t.rows_outer) {
    for (int64_t r = 0; r < t.rows; r += kMR)
      for (int64_t c = 0; c < t.cols; c += kNR) block(r, c);
  } else {
    for (int64_t c = 0; c < t.cols; c += kNR)
      for (int64_t r = 0; r < t.rows; r += kMR) block(r, c);
  }
}

/// One row of A times all columns of B (whole K).
template <class Op, int kSets>
void GemvBlocks(const NgemmTileArgs& t) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;
  const bool has_tail = row_bytes % 4 != 0;
  const uint32_t tail = has_tail ? LoadActivationGroup(t.a, 4 * full_groups, row_bytes) : 0;

  for (int64_t col0 = 0; col0 < t.cols; col0 += kBlockCols) {
    const uint8_t* b = t.b + (col0 / kBlockCols) * t.block_stride;
    __m256i acc[kSets][4];
    #pragma GCC unroll 8
    for (int s = 0; s < kSets; ++s)
      #pragma GCC unroll 8
      for (int p = 0; p < 4; ++p) acc[s][p] = _mm256_setzero_si256();
    auto step = [&](__m256i* set, uint32_t group, const uint8_t* bg) __attribute__((always_inline)) {
      const typename Op::A a = Op::Prepare(group);
      const auto* v = reinterpret_cast<const __m256i*>(bg);
      #pragma GCC unroll 8
      for (int p = 0; p < 4; ++p) set[p] = Op::Accumulate(set[p], a, _mm256_load_si256(v + p), ones16);
    };
    int64_t g = 0;
    for (; g + kSets <= full_groups; g += kSets)
      #pragma GCC unroll 8
      for (int s = 0; s < kSets; ++s) step(acc[s], LoadGroup(t.a + 4 * (g + s)), b + (g + s) * kGroupBytes);
    for (; g < full_groups; ++g) step(acc[0], LoadGroup(t.a + 4 * g), b + g * kGroupBytes);
    if (has_tail) step(acc[0], tail, b + full_groups * kGroupBytes);
    #pragma GCC unroll 8
    for (int s = 1; s < kSets; ++s)
      #pragma GCC unroll 8
      for (int p = 0; p < 4; ++p) acc[0][p] = _mm256_add_epi32(acc[0][p], acc[s][p]);

    int32_t* c = t.c + col0;
    const int64_t valid = t.cols - col0;
    #pragma GCC unroll 8
    for (int p = 0; p < 4; ++p) StoreColumns(c + 8 * p, acc[0][p], valid - 8 * p, t.accumulate);
  }
}

}  // namespace nuphar::ngemm::avx2
