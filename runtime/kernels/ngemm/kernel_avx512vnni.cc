// GEMM and GEMV micro-kernels, AVX-512 VNNI (EVEX vpdpbusd / vpdpwssd on zmm; Intel since Cascade
// Lake, AMD Zen 4). vpdpbusd adds four u8*s8 products into int32 with no int16 intermediate, so it
// is exact for every u8 x s8 input: the fast and exact modes are one op, one uop per 64 MAC.
// Register blocks and the zmm-vs-ymm choice are in docs/ngemm.md (measured on Zen 4).
#include <immintrin.h>

#include "runtime/kernels/ngemm/kernel_templates_avx512.h"

namespace nuphar::ngemm {

namespace avx512vnni {

/// The full k-groups of an 8-row x 32-column block, uint8 A, in inline assembly: per k-group
/// two 64-byte panel loads, then per row one vpbroadcastd and two vpdpbusd into 16 accumulators
/// that stay in registers. Written with intrinsics, GCC 12 copies all 16 accumulators every
/// iteration (vpdpbusd's tied operand) and spills two: 362 instead of ~450 GMAC/s at M=100 on
/// Zen 5. Results are the same integer sums as the intrinsic path.
void Block8x32(const uint8_t* a, int64_t lda, const uint8_t* const* b, int64_t groups, int32_t* out,
               int64_t out_stride) {
  const uint8_t* a3 = a + 3 * lda;
  const uint8_t* a6 = a + 6 * lda;
  int64_t offset = 0;
  const int64_t end = groups * kGroupBytes;
  // Accumulators live in zmm0..15 (row r: zmm(2r), zmm(2r+1)), start at zero and are stored to
  // out + r * out_stride at the end (an asm statement has at most 30 operands, too few to bind
  // 16 of them as values).
  int32_t* out3 = reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(out) + 3 * out_stride);
  int32_t* out6 = reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(out) + 6 * out_stride);
#define NGEMM_VNNI_ROW(addr, c0, c1)      \
  "vpbroadcastd " addr ", %%zmm29\n\t"    \
  "vpdpbusd %%zmm30, %%zmm29, %%" c0 "\n\t" \
  "vpdpbusd %%zmm31, %%zmm29, %%" c1 "\n\t"
#define NGEMM_VNNI_ZERO(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define NGEMM_VNNI_STORE(addr, c0, c1) \
  "vmovdqu32 %%" c0 ", " addr "\n\t"     \
  "vmovdqu32 %%" c1 ", 64" addr "\n\t"
  asm volatile(
      NGEMM_VNNI_ZERO(0) NGEMM_VNNI_ZERO(1) NGEMM_VNNI_ZERO(2)
      NGEMM_VNNI_ZERO(3) NGEMM_VNNI_ZERO(4) NGEMM_VNNI_ZERO(5)
      NGEMM_VNNI_ZERO(6) NGEMM_VNNI_ZERO(7) NGEMM_VNNI_ZERO(8)
      NGEMM_VNNI_ZERO(9) NGEMM_VNNI_ZERO(10) NGEMM_VNNI_ZERO(11)
      NGEMM_VNNI_ZERO(12) NGEMM_VNNI_ZERO(13) NGEMM_VNNI_ZERO(14)
      NGEMM_VNNI_ZERO(15)
      "1:\n\t"
      "vmovdqu64 (%[b0],%[off]), %%zmm30\n\t"
      "vmovdqu64 (%[b1],%[off]), %%zmm31\n\t"
      NGEMM_VNNI_ROW("(%[a])", "zmm0", "zmm1")
      NGEMM_VNNI_ROW("(%[a],%[lda],1)", "zmm2", "zmm3")
      NGEMM_VNNI_ROW("(%[a],%[lda],2)", "zmm4", "zmm5")
      NGEMM_VNNI_ROW("(%[a3])", "zmm6", "zmm7")
      NGEMM_VNNI_ROW("(%[a3],%[lda],1)", "zmm8", "zmm9")
      NGEMM_VNNI_ROW("(%[a3],%[lda],2)", "zmm10", "zmm11")
      NGEMM_VNNI_ROW("(%[a6])", "zmm12", "zmm13")
      NGEMM_VNNI_ROW("(%[a6],%[lda],1)", "zmm14", "zmm15")
      "add $4, %[a]\n\t"
      "add $4, %[a3]\n\t"
      "add $4, %[a6]\n\t"
      "add $128, %[off]\n\t"
      "cmp %[end], %[off]\n\t"
      "jl 1b\n\t"
      NGEMM_VNNI_STORE("(%[o])", "zmm0", "zmm1")
      NGEMM_VNNI_STORE("(%[o],%[os],1)", "zmm2", "zmm3")
      NGEMM_VNNI_STORE("(%[o],%[os],2)", "zmm4", "zmm5")
      NGEMM_VNNI_STORE("(%[o3])", "zmm6", "zmm7")
      NGEMM_VNNI_STORE("(%[o3],%[os],1)", "zmm8", "zmm9")
      NGEMM_VNNI_STORE("(%[o3],%[os],2)", "zmm10", "zmm11")
      NGEMM_VNNI_STORE("(%[o6])", "zmm12", "zmm13")
      NGEMM_VNNI_STORE("(%[o6],%[os],1)", "zmm14", "zmm15")
      : [a] "+r"(a), [a3] "+r"(a3), [a6] "+r"(a6), [off] "+r"(offset)
      : [b0] "r"(b[0]), [b1] "r"(b[1]), [lda] "r"(lda), [end] "r"(end), [o] "r"(out), [o3] "r"(out3),
        [o6] "r"(out6), [os] "r"(out_stride)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm29", "xmm30", "xmm31", "cc", "memory");
#undef NGEMM_VNNI_ZERO
#undef NGEMM_VNNI_STORE
#undef NGEMM_VNNI_ROW
}

// The GEMV's inner loop, shared by Gemv4Groups and GemvFullBlocks: accumulators zmm0..7 (4 sets
// x 2 zmm) start at zero; per iteration 4 k-groups of A (%[a]) against 512 bytes of one block's
// panels (%[b]), %[n] iterations.
#define NGEMM_VNNI_GROUP(i, bc, c0, c1)                             \
  "vpbroadcastd " #i "*4(%[a]), %%" bc "\n\t"                      \
  "vpdpbusd " #i "*128(%[b]), %%" bc ", %%" c0 "\n\t"              \
  "vpdpbusd " #i "*128+64(%[b]), %%" bc ", %%" c1 "\n\t"
#define NGEMM_VNNI_GEMV_QUADS                   \
  "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"           \
  "vpxord %%zmm1, %%zmm1, %%zmm1\n\t"           \
  "vpxord %%zmm2, %%zmm2, %%zmm2\n\t"           \
  "vpxord %%zmm3, %%zmm3, %%zmm3\n\t"           \
  "vpxord %%zmm4, %%zmm4, %%zmm4\n\t"           \
  "vpxord %%zmm5, %%zmm5, %%zmm5\n\t"           \
  "vpxord %%zmm6, %%zmm6, %%zmm6\n\t"           \
  "vpxord %%zmm7, %%zmm7, %%zmm7\n\t"           \
  "1:\n\t"                                      \
  NGEMM_VNNI_GROUP(0, "zmm28", "zmm0", "zmm1") \
  NGEMM_VNNI_GROUP(1, "zmm29", "zmm2", "zmm3") \
  NGEMM_VNNI_GROUP(2, "zmm30", "zmm4", "zmm5") \
  NGEMM_VNNI_GROUP(3, "zmm31", "zmm6", "zmm7") \
  "add $16, %[a]\n\t"                          \
  "add $512, %[b]\n\t"                         \
  "dec %[n]\n\t"                               \
  "jnz 1b\n\t"

/// GEMV, one 32-column block, uint8 A: `quads` x 4 k-groups into the 8 accumulators acc[0..8)
/// (4 sets x 2 zmm, zero on entry), B read by vpdpbusd straight from memory. Same reason for
/// assembly as Block8x32.
void Gemv4Groups(const uint8_t* a, const uint8_t* b, int64_t quads, __m512i* acc) {
  asm volatile(
      NGEMM_VNNI_GEMV_QUADS
      "vmovdqu64 %%zmm0, 0*64(%[acc])\n\t"
      "vmovdqu64 %%zmm1, 1*64(%[acc])\n\t"
      "vmovdqu64 %%zmm2, 2*64(%[acc])\n\t"
      "vmovdqu64 %%zmm3, 3*64(%[acc])\n\t"
      "vmovdqu64 %%zmm4, 4*64(%[acc])\n\t"
      "vmovdqu64 %%zmm5, 5*64(%[acc])\n\t"
      "vmovdqu64 %%zmm6, 6*64(%[acc])\n\t"
      "vmovdqu64 %%zmm7, 7*64(%[acc])\n\t"
      : [a] "+r"(a), [b] "+r"(b), [n] "+r"(quads)
      : [acc] "r"(acc)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm28", "xmm29", "xmm30", "xmm31",
        "cc", "memory");
}

/// GEMV over `blocks` whole 32-column blocks (`block_stride` bytes apart), each exactly `quads`
/// x 4 k-groups deep, uint8 A: per block the loop of Gemv4Groups, then the four sets added and
/// the 32 sums stored to c (not accumulated), all in one assembly loop. It saves the per-block
/// call, the spill of the 8 accumulators and their reload, which cost 20% of a 128 x 512 GEMV
/// (~100 ns) and about half of a 32 KB one (Xeon family 6 model 167, KVM). Integer sums: the
/// same values as Gemv4Groups followed by GemvBlocks' reduction.
void GemvFullBlocks(const uint8_t* a, const uint8_t* b, int64_t quads, int64_t blocks, int64_t block_stride,
                    int32_t* c) {
  const uint8_t* a_row = a;
  const uint8_t* b_block = b;
  int64_t n;  // a, b and n are the inner loop's cursors, set per block from a_row, b_block and quads
  asm volatile(
      "2:\n\t"
      "mov %[a_row], %[a]\n\t"
      "mov %[b_block], %[b]\n\t"
      "mov %[quads], %[n]\n\t"
      NGEMM_VNNI_GEMV_QUADS
      "vpaddd %%zmm2, %%zmm0, %%zmm0\n\t"
      "vpaddd %%zmm3, %%zmm1, %%zmm1\n\t"
      "vpaddd %%zmm6, %%zmm4, %%zmm4\n\t"
      "vpaddd %%zmm7, %%zmm5, %%zmm5\n\t"
      "vpaddd %%zmm4, %%zmm0, %%zmm0\n\t"
      "vpaddd %%zmm5, %%zmm1, %%zmm1\n\t"
      "vmovdqu32 %%zmm0, (%[c])\n\t"
      "vmovdqu32 %%zmm1, 64(%[c])\n\t"
      "add $128, %[c]\n\t"
      "add %[stride], %[b_block]\n\t"
      "dec %[blocks]\n\t"
      "jnz 2b\n\t"
      : [a] "=&r"(a), [b] "=&r"(b), [n] "=&r"(n), [b_block] "+r"(b_block), [blocks] "+r"(blocks), [c] "+r"(c)
      : [a_row] "r"(a_row), [quads] "r"(quads), [stride] "r"(block_stride)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm28", "xmm29", "xmm30", "xmm31",
        "cc", "memory");
}
/// GemvFullBlocks over `pairs` pairs of adjacent blocks, the two blocks' panels streamed side by
/// side (16 accumulators: zmm0..7 the first block's 4 sets, zmm8..15 the second's). Two streams
/// keep more L2 reads in flight: the bare loop went from 140-150 to 167-174 GMAC/s with the
/// weights in L2 (reads alone reach ~185 GB/s there), measured with thread CPU time on this host.
void GemvFullBlockPairs(const uint8_t* a, const uint8_t* b, int64_t quads, int64_t pairs, int64_t block_stride,
                        int32_t* c) {
#define NGEMM_VNNI_GROUP2(i, bc, c0, c1, c2, c3)                    \
  "vpbroadcastd " #i "*4(%[a]), %%" bc "\n\t"                      \
  "vpdpbusd " #i "*128(%[b]), %%" bc ", %%" c0 "\n\t"              \
  "vpdpbusd " #i "*128+64(%[b]), %%" bc ", %%" c1 "\n\t"           \
  "vpdpbusd " #i "*128(%[b],%[stride]), %%" bc ", %%" c2 "\n\t"    \
  "vpdpbusd " #i "*128+64(%[b],%[stride]), %%" bc ", %%" c3 "\n\t"
#define NGEMM_VNNI_ZERO(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
  const uint8_t* a_row = a;
  const uint8_t* b_pair = b;
  int64_t n;  // a, b and n are the inner loop's cursors, set per pair from a_row, b_pair and quads
  asm volatile(
      "2:\n\t"
      "mov %[a_row], %[a]\n\t"
      "mov %[b_pair], %[b]\n\t"
      "mov %[quads], %[n]\n\t"
      NGEMM_VNNI_ZERO(0) NGEMM_VNNI_ZERO(1) NGEMM_VNNI_ZERO(2) NGEMM_VNNI_ZERO(3)
      NGEMM_VNNI_ZERO(4) NGEMM_VNNI_ZERO(5) NGEMM_VNNI_ZERO(6) NGEMM_VNNI_ZERO(7)
      NGEMM_VNNI_ZERO(8) NGEMM_VNNI_ZERO(9) NGEMM_VNNI_ZERO(10) NGEMM_VNNI_ZERO(11)
      NGEMM_VNNI_ZERO(12) NGEMM_VNNI_ZERO(13) NGEMM_VNNI_ZERO(14) NGEMM_VNNI_ZERO(15)
      "1:\n\t"
      NGEMM_VNNI_GROUP2(0, "zmm28", "zmm0", "zmm1", "zmm8", "zmm9")
      NGEMM_VNNI_GROUP2(1, "zmm29", "zmm2", "zmm3", "zmm10", "zmm11")
      NGEMM_VNNI_GROUP2(2, "zmm30", "zmm4", "zmm5", "zmm12", "zmm13")
      NGEMM_VNNI_GROUP2(3, "zmm31", "zmm6", "zmm7", "zmm14", "zmm15")
      "add $16, %[a]\n\t"
      "add $512, %[b]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vpaddd %%zmm2, %%zmm0, %%zmm0\n\t"
      "vpaddd %%zmm3, %%zmm1, %%zmm1\n\t"
      "vpaddd %%zmm6, %%zmm4, %%zmm4\n\t"
      "vpaddd %%zmm7, %%zmm5, %%zmm5\n\t"
      "vpaddd %%zmm4, %%zmm0, %%zmm0\n\t"
      "vpaddd %%zmm5, %%zmm1, %%zmm1\n\t"
      "vpaddd %%zmm10, %%zmm8, %%zmm8\n\t"
      "vpaddd %%zmm11, %%zmm9, %%zmm9\n\t"
      "vpaddd %%zmm14, %%zmm12, %%zmm12\n\t"
      "vpaddd %%zmm15, %%zmm13, %%zmm13\n\t"
      "vpaddd %%zmm12, %%zmm8, %%zmm8\n\t"
      "vpaddd %%zmm13, %%zmm9, %%zmm9\n\t"
      "vmovdqu32 %%zmm0, (%[c])\n\t"
      "vmovdqu32 %%zmm1, 64(%[c])\n\t"
      "vmovdqu32 %%zmm8, 128(%[c])\n\t"
      "vmovdqu32 %%zmm9, 192(%[c])\n\t"
      "add $256, %[c]\n\t"
      "add %[stride], %[b_pair]\n\t"
      "add %[stride], %[b_pair]\n\t"
      "dec %[pairs]\n\t"
      "jnz 2b\n\t"
      : [a] "=&r"(a), [b] "=&r"(b), [n] "=&r"(n), [b_pair] "+r"(b_pair), [pairs] "+r"(pairs), [c] "+r"(c)
      : [a_row] "r"(a_row), [quads] "r"(quads), [stride] "r"(block_stride)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "xmm13", "xmm14", "xmm15", "xmm28", "xmm29", "xmm30", "xmm31", "cc", "memory");
#undef NGEMM_VNNI_ZERO
#undef NGEMM_VNNI_GROUP2
}
#undef NGEMM_VNNI_GEMV_QUADS
#undef NGEMM_VNNI_GROUP

template <bool kXor>
struct U8S8 {
  static constexpr bool kHasGemvBlock = !kXor;
  static void GemvBlock(const uint8_t* a, const uint8_t* b, int64_t quads, __m512i* acc) {
    if constexpr (kHasGemvBlock) Gemv4Groups(a, b, quads, acc);
  }
  static void GemvFullBlocks(const uint8_t* a, const uint8_t* b, int64_t quads, int64_t blocks, int64_t block_stride,
                             int32_t* c) {
    if constexpr (kHasGemvBlock) {
      // Pairs of blocks side by side, then a last odd block alone.
      const int64_t pairs = blocks / 2;
      if (pairs > 0) GemvFullBlockPairs(a, b, quads, pairs, block_stride, c);
      if (blocks % 2 != 0)
        avx512vnni::GemvFullBlocks(a, b + 2 * pairs * block_stride, quads, 1, block_stride, c + 2 * pairs * kBlockCols);
    }
  }
  // uint8 A (the quantizer's case) runs whole 8 x 32 blocks in Block8x32.
  template <int MR, int NP>
  static constexpr bool kHasBlock = !kXor && MR == 8 && NP == 2;
  template <int MR, int NP>
  static void Block(const uint8_t* a, int64_t lda, const uint8_t* const* b, int64_t groups, int32_t* out,
                    int64_t out_stride) {
    if constexpr (kHasBlock<MR, NP>) Block8x32(a, lda, b, groups, out, out_stride);
  }
  struct A { __m512i v; };
  static A Prepare(uint32_t group) { return {avx512::Broadcast<kXor>(group)}; }
  static __m512i Accumulate(__m512i acc, const A& a, __m512i b, __m512i) { return _mm512_dpbusd_epi32(acc, a.v, b); }
};

/// vpdpwssd wraps modulo 2^32 exactly like vpmaddwd + vpaddd.
struct S16S16 : avx512::NoBlock {
  struct A { __m512i v; };
  static A Prepare(uint32_t group) { return {_mm512_set1_epi32(static_cast<int>(group))}; }
  static __m512i Accumulate(__m512i acc, const A& a, __m512i b, __m512i) { return _mm512_dpwssd_epi32(acc, a.v, b); }
};

}  // namespace avx512vnni

void KernelAvx512Vnni(const NgemmTileArgs& t) {
  using avx512::Tile;
  constexpr int kMR = 8;  // 16 zmm accumulators + 2 panel vectors + the broadcast row
  if (t.mode == NgemmMode::kS16S16) {
    Tile<avx512vnni::S16S16, kMR>(t);
  } else if (t.a_xor != 0) {
    Tile<avx512vnni::U8S8<true>, kMR>(t);
  } else {
    Tile<avx512vnni::U8S8<false>, kMR>(t);
  }
}

void GemvAvx512Vnni(const NgemmTileArgs& t) {
  using avx512::GemvBlocks;
  constexpr int kSets = 4;  // 8 independent vpdpbusd chains cover its latency at one zmm per cycle
  if (t.mode == NgemmMode::kS16S16) {
    GemvBlocks<avx512vnni::S16S16, kSets>(t);
  } else if (t.a_xor != 0) {
    GemvBlocks<avx512vnni::U8S8<true>, kSets>(t);
  } else {
    GemvBlocks<avx512vnni::U8S8<false>, kSets>(t);
  }
}

}  // namespace nuphar::ngemm
