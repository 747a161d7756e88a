// Vector math, baseline x86-64 build of vector_math.inc (always built; the reference path, R11).
#define NUPHAR_VECTOR_MATH_NS vector_math_ref
#define NUPHAR_VECTOR_MATH_NAME "vector_math_ref"
#include "runtime/kernels/math/vector_math.inc"

namespace nuphar {
const VectorMath& VectorMathRef() { return vector_math_ref::kVectorMath; }
}  // namespace nuphar
