// The fused int8 LSTM step on AVX-VNNI: ymm, chunks of 16 units, VEX vpdpbusd for the dot
// products (dq_lstm_cell_step.inc has the loop; dq_lstm_cell.h the layout).
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
    return _mm256_dpbusd_avx_epi32(acc, a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  }
};

#include "runtime/kernels/quant/dq_lstm_cell_step.inc"

}  // namespace

void LstmCellStepAvxVnni(const LstmCellStep& s) { LstmCellStepImpl(s); }

}  // namespace nuphar::quant
