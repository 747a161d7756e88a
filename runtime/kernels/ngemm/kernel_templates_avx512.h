// The AVX-512 micro-kernels (zmm) as templates over an op, so kernel_avx512.cc (BW, vpmaddubsw)
// and kernel_avx512vnni.cc (vpdpbusd) only instantiate them with their own compile flags.
// Include only from those files.
//
// Same packed layout as every other tier (ngemm.h): per 32-column block and k-group, 4 panels of
// 8 columns x 4 k, 128 contiguous bytes. Two adjacent panels are one 64-byte zmm vector holding 16
// consecutive columns in lane order, so a whole 32-column block is two zmm loads per k-group: no
// repacking, and a weight packed once serves every tier.
// GEMM: an MR x 32 register block (2 zmm per row, C in registers for the whole K range of the
// tile); a 16-column block at a right edge. A tile may start at column 8 or 24 of a block (odd
// NUPHAR_IGEMM_TILE_N values); a zmm then straddles two blocks and is assembled from two ymm
// loads. GEMV: per block 2 zmm accumulators per set, kSets sets over consecutive k-groups.
#pragma once

#include <immintrin.h>

#include <utility>

#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm::avx512 {

template <bool kXor>
inline __m512i Broadcast(uint32_t group) {
  const __m512i v = _mm512_set1_epi32(static_cast<int>(group));
  return kXor ? _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))) : v;
}

inline uint32_t LoadGroup(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/// Base of an op without a hand-scheduled block loop (MicroTile's hook, see there).
struct NoBlock {
  template <int MR, int NP>
  static constexpr bool kHasBlock = false;
  template <int MR, int NP>
  static void Block(const uint8_t*, int64_t, const uint8_t* const*, int64_t, int32_t*, int64_t) {}
  static constexpr bool kHasGemvBlock = false;
  static void GemvBlock(const uint8_t*, const uint8_t*, int64_t, __m512i*) {}
  static void GemvFullBlocks(const uint8_t*, const uint8_t*, int64_t, int64_t, int64_t, int32_t*) {}
};

/// Stores (or adds into) the first `valid` (may be <= 0 or >= 16) columns of c.
inline void StoreColumns(int32_t* c, __m512i v, int64_t valid, bool accumulate) {
  if (valid <= 0) return;
  const __mmask16 mask = valid >= 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
  if (accumulate) v = _mm512_add_epi32(v, _mm512_maskz_loadu_epi32(mask, c));
  _mm512_mask_storeu_epi32(c, mask, v);
}

/// The 16 columns [col, col + 16) of the tile (col relative to the tile, a multiple of 8) as
/// two panel pointers at the tile's first k-group; contiguous when both lie in one block.
struct ColumnPair {
  const uint8_t* lo;
  const uint8_t* hi;
};
inline const uint8_t* PanelAt(const NgemmTileArgs& t, int64_t col) {
  const int64_t abs = t.col_in_block + col;
  return t.b + (abs / kBlockCols) * t.block_stride + ((abs % kBlockCols) / 8) * kPanelBytes;
}
/// `hi_needed` false: the upper 8 columns lie past the tile's right edge, where the next block
/// may not exist (found by ASan); lo is read twice instead and those lanes are never stored.
inline ColumnPair PairAt(const NgemmTileArgs& t, int64_t col, bool hi_needed) {
  const uint8_t* lo = PanelAt(t, col);
  return {lo, hi_needed ? PanelAt(t, col + 8) : lo};
}

template <bool kContiguous>
inline __m512i LoadPair(const ColumnPair& p, int64_t offset) {
  if constexpr (kContiguous) {
    return _mm512_loadu_si512(p.lo + offset);
  } else {
    const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(p.lo + offset));
    const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(p.hi + offset));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
}

/// MR rows x NP zmm (16 columns each) of C, starting at (row0, col0) of the tile.
template <class Op, int MR, int NP, bool kContiguous>
void MicroTile(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  const __m512i ones16 = _mm512_set1_epi16(1);
  ColumnPair pair[NP];
  #pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) pair[p] = PairAt(t, col0 + 16 * p, col0 + 16 * p + 8 < t.cols);
  const uint8_t* a = t.a + row0 * t.lda_bytes;
  const int64_t lda = t.lda_bytes;
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;

  __m512i acc[MR][NP];
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
    #pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) acc[r][p] = _mm512_setzero_si512();

  auto step = [&](int64_t offset, auto load_group) __attribute__((always_inline)) {
    __m512i b[NP];
    #pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) b[p] = LoadPair<kContiguous>(pair[p], offset);
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename Op::A ar = Op::Prepare(load_group(r));
      #pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) acc[r][p] = Op::Accumulate(acc[r][p], ar, b[p], ones16);
    }
  };
  int64_t g = 0;
  // An op may run the full k-groups of a whole MR x NP block in its own hand-scheduled loop
  // (GCC copies every zmm accumulator each iteration otherwise; see kernel_avx512vnni.cc). It
  // starts from zero and stores its sums to rows `out_stride` bytes apart: straight into C when
  // the block is all of C's values (full width, no partial k-group, C not accumulated), else
  // into `acc`, which the loop below continues.
  if constexpr (kContiguous && Op::template kHasBlock<MR, NP>) {
    if (full_groups > 0) {
      const uint8_t* b[NP];
      #pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) b[p] = pair[p].lo;
      if (!t.accumulate && row_bytes % 4 == 0 && t.cols - col0 >= 16 * NP) {
        Op::template Block<MR, NP>(a, lda, b, full_groups, t.c + row0 * t.ldc + col0, t.ldc * 4);
        return;
      }
      Op::template Block<MR, NP>(a, lda, b, full_groups, reinterpret_cast<int32_t*>(&acc[0][0]), NP * 64);
      g = full_groups;
    }
  }
  for (; g < full_groups; ++g) {
    const uint8_t* ag = a + 4 * g;
    step(g * kGroupBytes, [&](int r) { return LoadGroup(ag + r * lda); });
  }
  if (row_bytes % 4 != 0) {
    step(full_groups * kGroupBytes,
         [&](int r) { return LoadActivationGroup(a + r * lda, 4 * full_groups, row_bytes); });
  }
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    int32_t* c = t.c + (row0 + r) * t.ldc + col0;
    #pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) StoreColumns(c + 16 * p, acc[r][p], t.cols - col0 - 16 * p, t.accumulate);
  }
}

template <class Op, int MR, int NP>
void MicroTileAnyAlignment(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  // Contiguous unless a pair crosses into the next 32-column block (tile start at column 8 or 24).
  bool contiguous = true;
  for (int p = 0; p < NP; ++p) {
    const ColumnPair cp = PairAt(t, col0 + 16 * p, col0 + 16 * p + 8 < t.cols);
    contiguous = contiguous && cp.hi == cp.lo + kPanelBytes;
  }
  if (contiguous) {
    MicroTile<Op, MR, NP, true>(t, row0, col0);
  } else {
    MicroTile<Op, MR, NP, false>(t, row0, col0);
  }
}

/// Rows [row0, row0 + kMR) (fewer at the bottom edge) of one column block.
template <class Op, int kMR, int NP>
void RowBlock(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  static_assert(kMR >= 1 && kMR <= 12, "row block of 1..12 rows");
  const int64_t rows = t.rows - row0 >= kMR ? kMR : t.rows - row0;
  // Dispatch the bottom-edge height to a fixed-size block (registers, not memory).
  [&]<int... R>(std::integer_sequence<int, R...>) {
    (void)((rows == R + 1 ? (MicroTileAnyAlignment<Op, R + 1, NP>(t, row0, col0), true) : false) || ...);
  }(std::make_integer_sequence<int, kMR>{});
}

/// One GEMM tile: blocks of kMR rows x 32 columns (16 at the right edge).
template <class Op, int kMR>
void Tile(const NgemmTileArgs& t) {
  constexpr int kNR = 32;
  auto block = [&](int64_t r, int64_t c) {
    if (t.cols - c > 16) {
      RowBlock<Op, kMR, 2>(t, r, c);
    } else {
      RowBlock<Op, kMR, 1>(t, r, c);
    }
  };
  // With a hand-scheduled full block, a bottom edge of fewer than kMR rows is cheaper as a full
  // block shifted up over rows already done: it stores the same values again. Only when C is
  // stored, not accumulated.
  const bool overlap_last = Op::template kHasBlock<kMR, 2> && !t.accumulate && t.rows > kMR;
  auto next_row = [&](int64_t r) {
    r += kMR;
    return overlap_last && r < t.rows && t.rows - r < kMR ? t.rows - kMR : r;
  };
  if (t.rows_outer) {
    for (int64_t r = 0; r < t.rows; r = next_row(r))
      for (int64_t c = 0; c < t.cols; c += kNR) block(r, c);
  } else {
    for (int64_t c = 0; c < t.cols; c += kNR)
      for (int64_t r = 0; r < t.rows; r = next_row(r)) block(r, c);
  }
}

/// One row of A times all columns of B (whole K); columns start at block 0.
template <class Op, int kSets>
void GemvBlocks(const NgemmTileArgs& t) {
  const __m512i ones16 = _mm512_set1_epi16(1);
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;
  const bool has_tail = row_bytes % 4 != 0;
  const uint32_t tail = has_tail ? LoadActivationGroup(t.a, 4 * full_groups, row_bytes) : 0;

  int64_t first_col = 0;
  if constexpr (Op::kHasGemvBlock) {
    // Whole blocks of whole groups of 4 k-groups, stored not accumulated: one hand-scheduled
    // loop over all of them (the op's GemvFullBlocks); the loop below takes the rest.
    const int64_t whole_blocks = t.cols / kBlockCols;
    if (!t.accumulate && !has_tail && full_groups % 4 == 0 && full_groups > 0 && whole_blocks > 0) {
      Op::GemvFullBlocks(t.a, t.b, full_groups / 4, whole_blocks, t.block_stride, t.c);
      first_col = whole_blocks * kBlockCols;
    }
  }
  for (int64_t col0 = first_col; col0 < t.cols; col0 += kBlockCols) {
    const uint8_t* b = t.b + (col0 / kBlockCols) * t.block_stride;
    __m512i acc[kSets][2];
    #pragma GCC unroll 8
    for (int s = 0; s < kSets; ++s) acc[s][0] = acc[s][1] = _mm512_setzero_si512();
    auto step = [&](__m512i* set, uint32_t group, const uint8_t* bg) __attribute__((always_inline)) {
      const typename Op::A a = Op::Prepare(group);
      set[0] = Op::Accumulate(set[0], a, _mm512_load_si512(bg), ones16);
      set[1] = Op::Accumulate(set[1], a, _mm512_load_si512(bg + 64), ones16);
    };
    int64_t g = 0;
    if constexpr (Op::kHasGemvBlock) {
      // The op's hand-scheduled loop over whole groups of 4 k-groups (accumulators 0..7 are
      // acc[s][p] in order), then the loop below finishes the rest.
      const int64_t quads = full_groups / 4;
      if (quads > 0) {
        static_assert(kSets == 4, "the hand-scheduled GEMV block fills four sets");
        Op::GemvBlock(t.a, b, quads, &acc[0][0]);
        g = 4 * quads;
      }
    }
    for (; g + kSets <= full_groups; g += kSets)
      #pragma GCC unroll 8
      for (int s = 0; s < kSets; ++s) step(acc[s], LoadGroup(t.a + 4 * (g + s)), b + (g + s) * kGroupBytes);
    for (; g < full_groups; ++g) step(acc[0], LoadGroup(t.a + 4 * g), b + g * kGroupBytes);
    if (has_tail) step(acc[0], tail, b + full_groups * kGroupBytes);
    #pragma GCC unroll 8
    for (int s = 1; s < kSets; ++s) {
      acc[0][0] = _mm512_add_epi32(acc[0][0], acc[s][0]);
      acc[0][1] = _mm512_add_epi32(acc[0][1], acc[s][1]);
    }
    int32_t* c = t.c + col0;
    const int64_t valid = t.cols - col0;
    StoreColumns(c, acc[0][0], valid, t.accumulate);
    StoreColumns(c + 16, acc[0][1], valid - 16, t.accumulate);
  }
}

}  // namespace nuphar::ngemm::avx512
