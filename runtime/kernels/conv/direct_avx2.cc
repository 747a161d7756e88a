// Conv kernels, AVX2+FMA, 8 floats per ymm: one build of direct_impl.inc (this file alone gets
// the avx2 flags, R10).
#define NUPHAR_CONV_NS conv_avx2
#define NUPHAR_CONV_NAME "conv_avx2"
#define NUPHAR_CONV_WIDTH 8
#define NUPHAR_CONV_GEMM_MR 6
#include "runtime/kernels/conv/direct_impl.inc"

namespace nuphar {
const ConvKernels& ConvKernelsAvx2() { return conv_avx2::kConvKernels; }
}  // namespace nuphar
