// RNN math, AVX2+FMA build of rnn_math.inc (this file alone gets -mavx2 -mfma, R10).
#define NUPHAR_RNN_MATH_NS rnn_math_avx2
#define NUPHAR_RNN_MATH_NAME "rnn_math_avx2"
#include "runtime/kernels/rnn_math.inc"

namespace nuphar {
const RnnMath& RnnMathAvx2() { return rnn_math_avx2::kRnnMath; }
}  // namespace nuphar
