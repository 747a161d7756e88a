// GEMM and GEMV micro-kernels, AVX-VNNI (VEX-encoded vpdpbusd / vpdpwssd on ymm; e.g. Alder Lake,
// Sapphire Rapids, Zen 5). vpdpbusd adds four u8*s8 products into int32 without any int16
// intermediate, so it is exact for every u8 x s8 input: the fast and exact modes are the same op,
// at one multiply uop per 32 MAC instead of two. Same packed layout and blocking as AVX2
// (kernel_templates_avx2.h); the longer accumulate latency needs more independent accumulators.
#include <immintrin.h>

#include "runtime/kernels/ngemm/kernel_templates_avx2.h"

namespace nuphar::ngemm {

namespace avxvnni {

template <bool kXor>
struct U8S8 {
  struct A { __m256i v; };
  static A Prepare(uint32_t group) { return {avx2::Broadcast<kXor>(group)}; }
  static __m256i Accumulate(__m256i acc, const A& a, __m256i b, __m256i) { return _mm256_dpbusd_avx_epi32(acc, a.v, b); }
};

/// vpdpwssd wraps modulo 2^32 exactly like vpmaddwd + vpaddd.
struct S16S16 {
  struct A { __m256i v; };
  static A Prepare(uint32_t group) { return {_mm256_set1_epi32(static_cast<int>(group))}; }
  static __m256i Accumulate(__m256i acc, const A& a, __m256i b, __m256i) { return _mm256_dpwssd_avx_epi32(acc, a.v, b); }
};

}  // namespace avxvnni

void KernelAvxVnni(const NgemmTileArgs& t) {
  using avx2::Tile;
  constexpr int kMR = 6;  // 12 accumulators hide the ~5-cycle vpdpbusd latency on 2 ports
  if (t.mode == NgemmMode::kS16S16) {
    Tile<avxvnni::S16S16, kMR>(t);
  } else if (t.a_xor != 0) {
    Tile<avxvnni::U8S8<true>, kMR>(t);
  } else {
    Tile<avxvnni::U8S8<false>, kMR>(t);
  }
}

void GemvAvxVnni(const NgemmTileArgs& t) {
  using avx2::GemvBlocks;
  constexpr int kSets = 2;  // 8 independent accumulate chains; more only adds register pressure (measured)
  if (t.mode == NgemmMode::kS16S16) {
    GemvBlocks<avxvnni::S16S16, kSets>(t);
  } else if (t.a_xor != 0) {
    GemvBlocks<avxvnni::U8S8<true>, kSets>(t);
  } else {
    GemvBlocks<avxvnni::U8S8<false>, kSets>(t);
  }
}

}  // namespace nuphar::ngemm
