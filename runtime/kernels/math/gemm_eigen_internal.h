// Internal: the compiled copies (ref, avx2, avx512) of the Eigen GEMM (gemm_eigen_impl.inc) and their dispatch.
#pragma once

#include <cstdint>

#define NUPHAR_GEMM_EIGEN_DECLARE(ns)                                                                       \
  namespace ns {                                                                                           \
  void GemmF32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,   \
               int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);               \
  void GemmF64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, \
               int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc);            \
  }

namespace nuphar {
NUPHAR_GEMM_EIGEN_DECLARE(gemm_ref)
NUPHAR_GEMM_EIGEN_DECLARE(gemm_avx2)
NUPHAR_GEMM_EIGEN_DECLARE(gemm_avx512)
}  // namespace nuphar
