// Conv GEMM micro-kernel, plain C++ (baseline flags): C[rows, cols] = A_panel x B for one packed
// panel of kMr = 4 output channels. The reference every ISA kernel is tested against.
#include "runtime/kernels/conv/sgemm_internal.h"

namespace nuphar::conv_ref {

void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                int64_t cols) {
  constexpr int kMr = 4;
  for (int64_t i = 0; i < rows; ++i) {
    float* ci = c + i * ldc;
    for (int64_t n = 0; n < cols; ++n) ci[n] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float av = a[k * kMr + i];
      const float* bk = b[k] + n0;
      for (int64_t n = 0; n < cols; ++n) ci[n] += av * bk[n];
    }
  }
}

}  // namespace nuphar::conv_ref
