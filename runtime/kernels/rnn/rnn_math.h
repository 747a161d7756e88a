// RNN math primitives: C = A * B^T through the shared dual-ISA Eigen GEMM (gemm_eigen.h), and
// the vectorized in-place Sigmoid/Tanh of vector_math.h.
//
// # Why A * B^T
// ONNX stores W [G*H, I] and R [G*H, H] row-major, so gates = x * W^T: the whole-sequence
// projection X * W^T and the per-step h * R^T (a GEMV when batch = 1) are both A * B^T.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/kernels/math/gemm_eigen.h"
#include "runtime/kernels/math/vector_math.h"

namespace nuphar {

/// C[m*ldc+n] = (accumulate ? C : 0) + sum_k A[m*lda+k] * B[n*ldb+k], m < M, n < N.
inline void GemmABt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                    float* C, int64_t ldc, bool accumulate) {
  GemmF32(false, true, M, N, K, 1.0f, A, lda, B, ldb, accumulate ? 1.0f : 0.0f, C, ldc);
}
inline void GemmABt(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B, int64_t ldb,
                    double* C, int64_t ldc, bool accumulate) {
  GemmF64(false, true, M, N, K, 1.0, A, lda, B, ldb, accumulate ? 1.0 : 0.0, C, ldc);
}

}  // namespace nuphar
