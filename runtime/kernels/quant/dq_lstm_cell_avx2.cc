// The fused int8 LSTM step on AVX2: ymm, chunks of 16 units, vpmaddubsw + vpmaddwd + vpaddd for
// the dot products. Exact only for 7-bit A (the quantizer's Clip(0, 127)): the pair sums of
// u7 x s8 products fit int16, so vpmaddubsw never saturates; the kernel checks the constants.
// (dq_lstm_cell_step.inc has the loop; dq_lstm_cell.h the layout.)
#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/quant/dq_lstm_cell.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace nuphar::quant {
namespace {

#define NUPHAR_VECTOR_MATH_WIDTH 8
#include "runtime/kernels/math/vector_math_lanes.inc"
#undef NUPHAR_VECTOR_MATH_WIDTH
#include "runtime/kernels/quant/dq_lstm_cell_ymm.inc"

struct Isa : YmmIsa {
  static I Dot(I acc, I a, const uint8_t* w) {
    const I pairs = _mm256_maddubs_epi16(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

#include "runtime/kernels/quant/dq_lstm_cell_step.inc"

}  // namespace

void LstmCellStepAvx2(const LstmCellStep& s) { LstmCellStepImpl(s); }

}  // namespace nuphar::quant
