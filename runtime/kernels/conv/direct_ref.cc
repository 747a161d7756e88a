// Conv kernels, baseline x86-64 (SSE2), 4 floats per vector: one build of direct_impl.inc.
#define NUPHAR_CONV_NS conv_ref
#define NUPHAR_CONV_NAME "conv_ref"
#define NUPHAR_CONV_WIDTH 4
#define NUPHAR_CONV_GEMM_MR 4
#include "runtime/kernels/conv/direct_impl.inc"

namespace nuphar {
const ConvKernels& ConvKernelsRef() { return conv_ref::kConvKernels; }
}  // namespace nuphar
