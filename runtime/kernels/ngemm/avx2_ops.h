// The AVX2 multiply-accumulate forms ("ops") and helpers shared by the AVX2-family kernels
// (include only from *_avx2.cc / *_avxvnni.cc files: it needs -mavx2). An op turns one 4-byte
// activation group, broadcast to all lanes, times one 32-byte panel vector into 8 int32 partial
// sums (one per column) added to an accumulator: Prepare(group) once per row and group, then
// Accumulate(acc, prepared, panel, ones16) per panel.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm::avx2 {

/// Broadcast of one activation group; int8 A is re-centred by XOR 0x80 (a compile-time choice,
/// so the common uint8 case spends no register or uop on it).
template <bool kXor>
inline __m256i Broadcast(uint32_t group) {
  const __m256i v = _mm256_set1_epi32(static_cast<int>(group));
  return kXor ? _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))) : v;
}

/// u8 x s8, A or B 7-bit: vpmaddubsw cannot saturate (ngemm.h, "reserved bits").
template <bool kXor>
struct FastU8S8 {
  struct A { __m256i v; };
  static A Prepare(uint32_t group) { return {Broadcast<kXor>(group)}; }
  static __m256i Accumulate(__m256i acc, const A& a, __m256i b, __m256i ones16) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a.v, b), ones16));
  }
};

/// u8 x s8, any values: A = (A & 0x7f) + (A & 0x80); both vpmaddubsw are exact (pair sums in
/// [-32768, 32512]) and are widened separately.
template <bool kXor>
struct ExactU8S8 {
  struct A { __m256i lo, hi; };
  static A Prepare(uint32_t group) {
    const __m256i v = Broadcast<kXor>(group);
    const __m256i high_bits = _mm256_set1_epi8(static_cast<char>(0x80));
    return {_mm256_andnot_si256(high_bits, v), _mm256_and_si256(high_bits, v)};
  }
  static __m256i Accumulate(__m256i acc, const A& a, __m256i b, __m256i ones16) {
    return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(a.lo, b), ones16),
                                                  _mm256_madd_epi16(_mm256_maddubs_epi16(a.hi, b), ones16)));
  }
};

/// s16 x s16: vpmaddwd directly (2 k per group).
struct S16S16 {
  struct A { __m256i v; };
  static A Prepare(uint32_t group) { return {_mm256_set1_epi32(static_cast<int>(group))}; }
  static __m256i Accumulate(__m256i acc, const A& a, __m256i b, __m256i) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a.v, b));
  }
};


inline uint32_t LoadGroup(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/// Lane mask with the first `n` (0..8) int32 lanes enabled.
inline __m256i FirstLanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Stores (or adds into) the first `valid` columns of c.
inline void StoreColumns(int32_t* c, __m256i v, int64_t valid, bool accumulate) {
  if (valid >= 8) {
    auto* p = reinterpret_cast<__m256i*>(c);
    if (accumulate) v = _mm256_add_epi32(v, _mm256_loadu_si256(p));
    _mm256_storeu_si256(p, v);
  } else if (valid > 0) {
    const __m256i mask = FirstLanes(valid);
    if (accumulate) v = _mm256_add_epi32(v, _mm256_maskload_epi32(c, mask));
    _mm256_maskstore_epi32(c, mask, v);
  }
}

}  // namespace nuphar::ngemm::avx2
