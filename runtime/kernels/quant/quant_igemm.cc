// Reference integer GEMM with zero points (see quant_igemm.h): B is re-centred into int32 once,
// then each row of A accumulates scaled rows of B (a vectorizable axpy per k).
#include "runtime/kernels/quant/quant_igemm.h"

#include <algorithm>
#include <type_traits>

#include "runtime/kernels/nn/nn_scratch.h"

namespace nuphar {

template <class TA, class TB>
void IntegerGemm(int64_t M, int64_t N, int64_t K, const TA* A, int64_t lda, const TB* B, int64_t ldb,
                 const IntegerZeroPoints& zp, int32_t* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  const int32_t* b_centered = nullptr;
  int64_t ldbc = ldb;
  if constexpr (std::is_same_v<TB, int32_t>) {
    if (!zp.b) b_centered = B;
  }
  if (!b_centered) {
    int32_t* buf = ScratchBuffer<int32_t>(static_cast<size_t>(K * N), 3);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        buf[k * N + n] = static_cast<int32_t>(B[k * ldb + n]) - (zp.b ? zp.b[zp.b_per_col ? n : 0] : 0);
    b_centered = buf;
    ldbc = N;
  }
  // Accumulate in uint32 so overflow wraps (defined) like the int32 arithmetic ONNX describes.
  for (int64_t m = 0; m < M; ++m) {
    uint32_t* c = reinterpret_cast<uint32_t*>(C + m * ldc);
    std::fill(c, c + N, 0u);
    const int32_t za = zp.a ? zp.a[zp.a_per_row ? m : 0] : 0;
    for (int64_t k = 0; k < K; ++k) {
      const uint32_t a = static_cast<uint32_t>(static_cast<int32_t>(A[m * lda + k]) - za);
      if (a == 0) continue;
      const uint32_t* b = reinterpret_cast<const uint32_t*>(b_centered + k * ldbc);
      for (int64_t n = 0; n < N; ++n) c[n] += a * b[n];
    }
  }
}

#define NUPHAR_INSTANTIATE_IGEMM(TA, TB)                                                                       \
  template void IntegerGemm<TA, TB>(int64_t, int64_t, int64_t, const TA*, int64_t, const TB*, int64_t, \
                                    const IntegerZeroPoints&, int32_t*, int64_t);
NUPHAR_INSTANTIATE_IGEMM(uint8_t, uint8_t)
NUPHAR_INSTANTIATE_IGEMM(uint8_t, int8_t)
NUPHAR_INSTANTIATE_IGEMM(int8_t, uint8_t)
NUPHAR_INSTANTIATE_IGEMM(int8_t, int8_t)
NUPHAR_INSTANTIATE_IGEMM(uint8_t, int32_t)
NUPHAR_INSTANTIATE_IGEMM(int8_t, int32_t)
NUPHAR_INSTANTIATE_IGEMM(int16_t, int16_t)
NUPHAR_INSTANTIATE_IGEMM(int16_t, uint16_t)
NUPHAR_INSTANTIATE_IGEMM(uint16_t, int16_t)
NUPHAR_INSTANTIATE_IGEMM(uint16_t, uint16_t)
#undef NUPHAR_INSTANTIATE_IGEMM

}  // namespace nuphar
