// GEMM and GEMV micro-kernels, AVX-512BW without VNNI (Skylake-SP): the AVX2 op sequence
// (vpmaddubsw + vpmaddwd + vpaddd, fast and exact modes as in avx2_ops.h) on zmm, 64 MAC per
// multiply pair. The same zmm blocking as the VNNI tier (kernel_templates_avx512.h).
#include <immintrin.h>

#include "runtime/kernels/ngemm/kernel_templates_avx512.h"

namespace nuphar::ngemm {

namespace avx512bw {

/// u8 x s8 with A or B 7-bit: vpmaddubsw cannot saturate (ngemm.h, "reserved bits").
template <bool kXor>
struct FastU8S8 : avx512::NoBlock {
  struct A { __m512i v; };
  static A Prepare(uint32_t group) { return {avx512::Broadcast<kXor>(group)}; }
  static __m512i Accumulate(__m512i acc, const A& a, __m512i b, __m512i ones16) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a.v, b), ones16));
  }
};

/// u8 x s8, any values: A = (A & 0x7f) + (A & 0x80), two exact vpmaddubsw widened separately.
template <bool kXor>
struct ExactU8S8 : avx512::NoBlock {
  struct A { __m512i lo, hi; };
  static A Prepare(uint32_t group) {
    const __m512i v = avx512::Broadcast<kXor>(group);
    const __m512i high_bits = _mm512_set1_epi8(static_cast<char>(0x80));
    return {_mm512_andnot_si512(high_bits, v), _mm512_and_si512(high_bits, v)};
  }
  static __m512i Accumulate(__m512i acc, const A& a, __m512i b, __m512i ones16) {
    return _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(_mm512_maddubs_epi16(a.lo, b), ones16),
                                                  _mm512_madd_epi16(_mm512_maddubs_epi16(a.hi, b), ones16)));
  }
};

struct S16S16 : avx512::NoBlock {
  struct A { __m512i v; };
  static A Prepare(uint32_t group) { return {_mm512_set1_epi32(static_cast<int>(group))}; }
  static __m512i Accumulate(__m512i acc, const A& a, __m512i b, __m512i) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a.v, b));
  }
};

}  // namespace avx512bw

void KernelAvx512(const NgemmTileArgs& t) {
  using avx512::Tile;
  constexpr int kMR = 6;  // 12 accumulators; the exact mode needs two more for the split row
  const bool x = t.a_xor != 0;
  switch (t.mode) {
    case NgemmMode::kU8S8Fast: x ? Tile<avx512bw::FastU8S8<true>, kMR>(t) : Tile<avx512bw::FastU8S8<false>, kMR>(t); break;
    case NgemmMode::kU8S8Exact: x ? Tile<avx512bw::ExactU8S8<true>, kMR>(t) : Tile<avx512bw::ExactU8S8<false>, kMR>(t); break;
    case NgemmMode::kS16S16: Tile<avx512bw::S16S16, kMR>(t); break;
  }
}

void GemvAvx512(const NgemmTileArgs& t) {
  using avx512::GemvBlocks;
  constexpr int kSets = 2;
  const bool x = t.a_xor != 0;
  switch (t.mode) {
    case NgemmMode::kU8S8Fast: x ? GemvBlocks<avx512bw::FastU8S8<true>, kSets>(t) : GemvBlocks<avx512bw::FastU8S8<false>, kSets>(t); break;
    case NgemmMode::kU8S8Exact: x ? GemvBlocks<avx512bw::ExactU8S8<true>, kSets>(t) : GemvBlocks<avx512bw::ExactU8S8<false>, kSets>(t); break;
    case NgemmMode::kS16S16: GemvBlocks<avx512bw::S16S16, kSets>(t); break;
  }
}

}  // namespace nuphar::ngemm
