// Vector math, AVX2+FMA build of vector_math.inc (this file alone gets -mavx2 -mfma, R10).
#define NUPHAR_VECTOR_MATH_NS vector_math_avx2
#define NUPHAR_VECTOR_MATH_NAME "vector_math_avx2"
#include "runtime/kernels/math/vector_math.inc"

namespace nuphar {
const VectorMath& VectorMathAvx2() { return vector_math_avx2::kVectorMath; }
}  // namespace nuphar
