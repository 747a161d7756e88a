// fp32/fp64 GEMM of the reference executor: one Eigen implementation compiled twice (baseline
// SSE2 in gemm_eigen_ref.cc, AVX2+FMA in gemm_eigen_avx2.cc), chosen once from CPUID.
//
// # Why two copies
// The project builds without -march flags, so Eigen would only use SSE2. The same source is
// compiled a second time with -mavx2 -mfma (file-name rule, cmake/isa_flags.cmake). Each copy
// renames Eigen's namespace (gemm_eigen_impl.inc), so the linker cannot merge an AVX2
// instantiation into the baseline path or the other way round.
// Eigen runs single-threaded here (no OpenMP): the runtime owns threading (spec R14).
//
// All matrices are row-major with explicit leading dimensions (elements between rows).
#pragma once

#include <cstdint>
#include <type_traits>

namespace nuphar {

/// C[M,N] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T. op(A) is [M,K], op(B) is [K,N].
/// When beta == 0, C is not read (it may hold garbage or NaN). M, N or K may be 0.
void GemmF32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
             int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
void GemmF64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
             int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

enum class GemmPath { kAuto, kRef, kAvx2 };
/// "avx2" or "ref": the implementation GemmF32/GemmF64 use.
const char* GemmPathName();
/// Forces a path (tests). kAvx2 on a machine without AVX2+FMA falls back to kRef.
void SetGemmPathForTesting(GemmPath path);

/// GEMM for any element type: float/double go through Eigen, integer types use a plain loop
/// (they are not on a hot path; the int8 kernels live in kernels/ngemm). Wraps modulo 2^n for
/// integers, as ONNX MatMul on int32/int64 does.
template <class T>
void GemmAny(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
             const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    GemmF32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    GemmF64(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else {
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    for (int64_t m = 0; m < M; ++m) {
      T* c = C + m * ldc;
      for (int64_t n = 0; n < N; ++n) c[n] = beta == T(0) ? T(0) : static_cast<T>(static_cast<Wide>(c[n]) * beta);
      for (int64_t k = 0; k < K; ++k) {
        const Wide a = static_cast<Wide>(trans_a ? A[k * lda + m] : A[m * lda + k]) * static_cast<Wide>(alpha);
        if (a == 0) continue;
        if (!trans_b) {
          const T* b = B + k * ldb;
          for (int64_t n = 0; n < N; ++n) c[n] = static_cast<T>(static_cast<Wide>(c[n]) + a * static_cast<Wide>(b[n]));
        } else {
          for (int64_t n = 0; n < N; ++n)
            c[n] = static_cast<T>(static_cast<Wide>(c[n]) + a * static_cast<Wide>(B[n * ldb + k]));
        }
      }
    }
  }
}

}  // namespace nuphar
