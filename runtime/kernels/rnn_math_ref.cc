// RNN math, baseline x86-64 build of rnn_math.inc (always built; the reference path, R11).
#define NUPHAR_RNN_MATH_NS rnn_math_ref
#define NUPHAR_RNN_MATH_NAME "rnn_math_ref"
#include "runtime/kernels/rnn_math.inc"

namespace nuphar {
const RnnMath& RnnMathRef() { return rnn_math_ref::kRnnMath; }
}  // namespace nuphar
