// GEMM micro-kernels, AVX2 (no VNNI).
//
// The quantizer's case (uint8 A within [0, 127], fast mode, K a multiple of 4) runs a 6 x 16
// register block written in inline assembly: 12 accumulators + the broadcast row + a product
// temporary + the vector of ones are exactly the 16 ymm registers, and B is read straight from
// memory by vpmaddubsw. GCC spills that block when it is written with intrinsics (it keeps two of
// the accumulators on the stack, about 25% slower), and even the 4 x 16 intrinsic block carries
// a register-to-register move per accumulator each k-group; the assembly has neither, so the
// inner loop is 6 x (vpbroadcastd + 2 x (vpmaddubsw, vpmaddwd, vpaddd)) + 4 loop instructions per
// 384 MAC, bound by the two vector-multiply pipes.
// Everything else (the block's bottom rows, a right edge narrower than 16 columns, a partial last
// k-group, int8 A, the exact and int16 modes) uses the 4 x 16 intrinsic blocks of
// kernel_templates_avx2.h. Both give identical results: integer sums in the same lanes.
#include "runtime/kernels/ngemm/kernel_templates_avx2.h"

namespace nuphar::ngemm {

namespace {

using avx2::FastU8S8;

/// out[r][0..16) = sum over `groups` k-groups of A row r (rows `lda` bytes apart, 4 bytes per
/// group) times the panels b0 (columns 0..7) and b1 (8..15), each advancing kGroupBytes per group.
/// out rows are `ldo_bytes` apart. Requires groups >= 1.
void Block6x16FastAsm(const uint8_t* a, int64_t lda, const uint8_t* b0, const uint8_t* b1, int64_t groups,
                      int32_t* out, int64_t ldo_bytes) {
  const uint8_t* a3 = a + 3 * lda;
  int32_t* out3 = reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(out) + 3 * ldo_bytes);
  int64_t offset = 0;
  // One row: broadcast its 4-byte group, multiply with both panels, widen pairs, accumulate.
#define NGEMM_ROW(addr, acc0, acc1)                        \
  "vpbroadcastd " addr ", %%ymm13\n\t"                     \
  "vpmaddubsw (%[b0],%[off]), %%ymm13, %%ymm14\n\t"        \
  "vpmaddubsw (%[b1],%[off]), %%ymm13, %%ymm13\n\t"        \
  "vpmaddwd %%ymm15, %%ymm14, %%ymm14\n\t"                 \
  "vpmaddwd %%ymm15, %%ymm13, %%ymm13\n\t"                 \
  "vpaddd %%ymm14, %%" acc0 ", %%" acc0 "\n\t"             \
  "vpaddd %%ymm13, %%" acc1 ", %%" acc1 "\n\t"
#define NGEMM_STORE(addr, acc0, acc1) \
  "vmovdqu %%" acc0 ", (" addr ")\n\t" \
  "vmovdqu %%" acc1 ", 32(" addr ")\n\t"
  asm volatile(
      "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"
      "vpxor %%xmm2, %%xmm2, %%xmm2\n\t"
      "vpxor %%xmm3, %%xmm3, %%xmm3\n\t"
      "vpxor %%xmm4, %%xmm4, %%xmm4\n\t"
      "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"
      "vpxor %%xmm6, %%xmm6, %%xmm6\n\t"
      "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"
      "vpxor %%xmm8, %%xmm8, %%xmm8\n\t"
      "vpxor %%xmm9, %%xmm9, %%xmm9\n\t"
      "vpxor %%xmm10, %%xmm10, %%xmm10\n\t"
      "vpxor %%xmm11, %%xmm11, %%xmm11\n\t"
      "vpcmpeqw %%ymm15, %%ymm15, %%ymm15\n\t"
      "vpsrlw $15, %%ymm15, %%ymm15\n\t"  // ones16
      "1:\n\t"
      NGEMM_ROW("(%[a])", "ymm0", "ymm1")
      NGEMM_ROW("(%[a],%[lda],1)", "ymm2", "ymm3")
      NGEMM_ROW("(%[a],%[lda],2)", "ymm4", "ymm5")
      NGEMM_ROW("(%[a3])", "ymm6", "ymm7")
      NGEMM_ROW("(%[a],%[lda],4)", "ymm8", "ymm9")
      NGEMM_ROW("(%[a3],%[lda],2)", "ymm10", "ymm11")
      "add $4, %[a]\n\t"
      "add $4, %[a3]\n\t"
      "add $128, %[off]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      NGEMM_STORE("%[o]", "ymm0", "ymm1")
      NGEMM_STORE("%[o],%[ldo],1", "ymm2", "ymm3")
      NGEMM_STORE("%[o],%[ldo],2", "ymm4", "ymm5")
      NGEMM_STORE("%[o3]", "ymm6", "ymm7")
      NGEMM_STORE("%[o],%[ldo],4", "ymm8", "ymm9")
      NGEMM_STORE("%[o3],%[ldo],2", "ymm10", "ymm11")
      : [a] "+r"(a), [a3] "+r"(a3), [off] "+r"(offset), [n] "+r"(groups)
      : [lda] "r"(lda), [b0] "r"(b0), [b1] "r"(b1), [o] "r"(out), [o3] "r"(out3), [ldo] "r"(ldo_bytes)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm13",
        "xmm14", "xmm15", "cc", "memory");
#undef NGEMM_ROW
#undef NGEMM_STORE
  static_assert(kGroupBytes == 128, "the assembly advances the panels by 128 bytes per k-group");
}

/// Rows [row0, row0 + 6) x columns [col0, col0 + 16) of a tile through the assembly block.
void Block6x16Fast(const NgemmTileArgs& t, int64_t row0, int64_t col0) {
  const uint8_t* a = t.a + row0 * t.lda_bytes;
  const uint8_t* b0 = avx2::PanelAt(t, col0);
  const uint8_t* b1 = avx2::PanelAt(t, col0 + 8);
  int32_t* c = t.c + row0 * t.ldc + col0;
  const int64_t groups = t.k_elems / 4;
  if (!t.accumulate) {
    Block6x16FastAsm(a, t.lda_bytes, b0, b1, groups, c, t.ldc * 4);
    return;
  }
  alignas(32) int32_t partial[6][16];
  Block6x16FastAsm(a, t.lda_bytes, b0, b1, groups, &partial[0][0], sizeof(partial[0]));
  for (int r = 0; r < 6; ++r)
    for (int p = 0; p < 2; ++p)
      avx2::StoreColumns(c + r * t.ldc + 8 * p, _mm256_load_si256(reinterpret_cast<const __m256i*>(&partial[r][8 * p])),
                         8, true);
}

/// Rows [row0, row0 + rows) x the 8 (NP = 1) or 16 (NP = 2) columns at col0, in 4-row
/// intrinsic blocks that never reach past row0 + rows.
template <int NP>
void IntrinsicRows(const NgemmTileArgs& t, int64_t row0, int64_t rows, int64_t col0) {
  for (int64_t r = row0; r < row0 + rows; r += 4) {
    switch (row0 + rows - r >= 4 ? 4 : row0 + rows - r) {
      case 4: avx2::MicroTile<FastU8S8<false>, 4, NP>(t, r, col0); break;
      case 3: avx2::MicroTile<FastU8S8<false>, 3, NP>(t, r, col0); break;
      case 2: avx2::MicroTile<FastU8S8<false>, 2, NP>(t, r, col0); break;
      default: avx2::MicroTile<FastU8S8<false>, 1, NP>(t, r, col0); break;
    }
  }
}

/// The fast uint8 mode: 6 x 16 assembly blocks where they fit, 4 x 16 intrinsic blocks elsewhere.
void TileFastU8(const NgemmTileArgs& t) {
  constexpr int kAsmRows = 6, kNR = 16;
  const bool asm_k = t.k_elems % 4 == 0 && t.k_elems >= 4;
  auto block = [&](int64_t r, int64_t c, int64_t rows) {
    if (t.cols - c <= 8) {
      IntrinsicRows<1>(t, r, rows, c);
    } else if (t.cols - c < kNR || rows < kAsmRows || !asm_k) {
      IntrinsicRows<2>(t, r, rows, c);
    } else {
      Block6x16Fast(t, r, c);
    }
  };
  // Whole 6-row blocks first, then the bottom rows (fewer than 6) in 4-row blocks.
  const int64_t full_rows = t.rows / kAsmRows * kAsmRows;
  auto rows_at = [&](int64_t r) { return r < full_rows ? int64_t{kAsmRows} : t.rows - full_rows; };
  const int64_t row_steps = full_rows / kAsmRows + (full_rows < t.rows ? 1 : 0);
  if (t.rows_outer) {
    for (int64_t i = 0; i < row_steps; ++i)
      for (int64_t c = 0; c < t.cols; c += kNR) block(i * kAsmRows, c, rows_at(i * kAsmRows));
  } else {
    for (int64_t c = 0; c < t.cols; c += kNR)
      for (int64_t i = 0; i < row_steps; ++i) block(i * kAsmRows, c, rows_at(i * kAsmRows));
  }
}

}  // namespace

void KernelAvx2(const NgemmTileArgs& t) {
  using namespace avx2;
  constexpr int kMR = 4;  // 8 accumulators + 2 panels + broadcast + ones fit in 16 ymm
  const bool x = t.a_xor != 0;
  switch (t.mode) {
    case NgemmMode::kU8S8Fast: x ? Tile<FastU8S8<true>, kMR>(t) : TileFastU8(t); break;
    case NgemmMode::kU8S8Exact: x ? Tile<ExactU8S8<true>, kMR>(t) : Tile<ExactU8S8<false>, kMR>(t); break;
    case NgemmMode::kS16S16: Tile<S16S16, kMR>(t); break;
  }
}

}  // namespace nuphar::ngemm
