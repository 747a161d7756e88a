// Conv kernels, AVX-512, 16 floats per zmm: one build of direct_impl.inc (this file alone gets
// the avx512 flags, R10).
#define NUPHAR_CONV_NS conv_avx512
#define NUPHAR_CONV_NAME "conv_avx512"
#define NUPHAR_CONV_WIDTH 16
#define NUPHAR_CONV_GEMM_MR 12
#define NUPHAR_CONV_PANEL_PAIR SgemmPanelPair
#define NUPHAR_CONV_PANEL_PAIR_MAX_COLS 6
#include "runtime/kernels/conv/direct_impl.inc"

namespace nuphar {
const ConvKernels& ConvKernelsAvx512() { return conv_avx512::kConvKernels; }
}  // namespace nuphar
