// Vector math, AVX-512 build of vector_math.inc: 16 floats per zmm (this file alone gets the
// avx512 flags, R10). Same op sequence per lane as the AVX2 build, so the same results.
#define NUPHAR_VECTOR_MATH_NS vector_math_avx512
#define NUPHAR_VECTOR_MATH_NAME "vector_math_avx512"
#define NUPHAR_VECTOR_MATH_WIDTH 16
#include "runtime/kernels/math/vector_math.inc"

namespace nuphar {
const VectorMath& VectorMathAvx512() { return vector_math_avx512::kVectorMath; }
}  // namespace nuphar
