// The fused int8 LSTM step on AVX-512 VNNI: zmm, chunks of 32 units, vpdpbusd
// (dq_lstm_cell_step.inc has the loop; runtime/kernels/quant/dq_lstm_cell.h the layout).
#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/quant/dq_lstm_cell.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace nuphar::quant {
namespace {

#define NUPHAR_VECTOR_MATH_WIDTH 16
#include "runtime/kernels/math/vector_math_lanes.inc"
#undef NUPHAR_VECTOR_MATH_WIDTH

struct Isa {
  using F = __m512;
  using I = __m512i;
  static constexpr int kWidth = 16;
  static F LoadF(const float* p) { return _mm512_loadu_ps(p); }
  static void StoreF(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Set1(float x) { return _mm512_set1_ps(x); }
  static F ToFloat(I v) { return _mm512_cvtepi32_ps(v); }
  static I LoadI(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void StoreI(int32_t* p, I v) { _mm512_storeu_si512(p, v); }
  static I Zero() { return _mm512_setzero_si512(); }
  static I Broadcast4(const uint8_t* p) {
    int32_t a;
    std::memcpy(&a, p, 4);
    return _mm512_set1_epi32(a);
  }
  static I Dot(I acc, I a, const uint8_t* w) { return _mm512_dpbusd_epi32(acc, a, _mm512_loadu_si512(w)); }
};

#include "runtime/kernels/quant/dq_lstm_cell_step.inc"

}  // namespace

void LstmCellStepAvx512Vnni(const LstmCellStep& s) { LstmCellStepImpl(s); }

}  // namespace nuphar::quant
