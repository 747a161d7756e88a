// Micro-kernel, AVX2: an MR x NR register block (MR <= 4 rows, NR = 16 columns = 2 panels),
// C kept in registers for the whole K range of the tile; the tile loop walks the blocks in the
// order chosen by NUPHAR_IGEMM_PERMUTE.
#include <immintrin.h>

#include "runtime/kernels/ngemm/avx2_ops.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

using avx2::LoadGroup;
using avx2::StoreColumns;

/// Pointer to the panel holding tile column `col` (a multiple of 8), at the tile's first k-group.
inline const uint8_t* PanelAt(const NgemmTileArgs& t, int64_t col) {
  const int64_t abs = t.col_in_block + col;
  return t.b + (abs / kBlockCols) * t.block_stride + ((abs % kBlockCols) / 8) * kPanelBytes;
}

template <class Op, int MR, int NP>
void MicroTile(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  const uint8_t* panel[NP];
  for (int p = 0; p < NP; ++p) panel[p] = PanelAt(t, col0 + 8 * p);
  const uint8_t* a = t.a + row0 * t.lda_bytes;
  const int64_t lda = t.lda_bytes;
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;

  __m256i acc[MR][NP];
  for (int r = 0; r < MR; ++r)
    for (int p = 0; p < NP; ++p) acc[r][p] = _mm256_setzero_si256();

  // One k-group: MR broadcast rows times NP panel vectors.
  auto step = [&](int64_t offset, auto load_group) __attribute__((always_inline)) {
    for (int r = 0; r < MR; ++r) {
      const typename Op::A ar = Op::Prepare(load_group(r));
      for (int p = 0; p < NP; ++p) {
        const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel[p] + offset));
        acc[r][p] = _mm256_add_epi32(acc[r][p], Op::Dot(ar, v, ones16));
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
  for (int r = 0; r < MR; ++r) {
    int32_t* c = t.c + (row0 + r) * t.ldc + col0;
    for (int p = 0; p < NP; ++p) StoreColumns(c + 8 * p, acc[r][p], t.cols - col0 - 8 * p, t.accumulate);
  }
}

template <class Op, int NP>
void RowBlock(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  switch (t.rows - row0 >= 4 ? 4 : t.rows - row0) {
    case 4: MicroTile<Op, 4, NP>(t, row0, col0); break;
    case 3: MicroTile<Op, 3, NP>(t, row0, col0); break;
    case 2: MicroTile<Op, 2, NP>(t, row0, col0); break;
    default: MicroTile<Op, 1, NP>(t, row0, col0); break;
  }
}

template <class Op>
void Block(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  if (t.cols - col0 > 8) {
    RowBlock<Op, 2>(t, row0, col0);
  } else {
    RowBlock<Op, 1>(t, row0, col0);
  }
}

template <class Op>
void Tile(const NgemmTileArgs& t) {
  constexpr int kMR = 4, kNR = 16;
  if (t.rows_outer) {
    for (int64_t r = 0; r < t.rows; r += kMR)
      for (int64_t c = 0; c < t.cols; c += kNR) Block<Op>(t, r, c);
  } else {
    for (int64_t c = 0; c < t.cols; c += kNR)
      for (int64_t r = 0; r < t.rows; r += kMR) Block<Op>(t, r, c);
  }
}

}  // namespace

void KernelAvx2(const NgemmTileArgs& t) {
  avx2::WithOp(t, [&]<class Op>() { Tile<Op>(t); });
}

}  // namespace nuphar::ngemm
