// RNN math primitives: C = A * B^T (row-major, strided) and in-place Sigmoid/Tanh, chosen once
// per process from CPUID (STYLE R10/R11).
//
// # Why A * B^T
// ONNX stores W [G*H, I] and R [G*H, H] row-major, so gate = x * W^T is a dot product of two
// contiguous rows. The kernel blocks 2 rows of A x 4 rows of B (8 vector accumulators: enough
// independent FMAs to cover their latency) and walks B in panels that stay in L2, so the
// whole-sequence projection X * W^T and the per-step h * R^T (a GEMV when batch = 1) share one
// kernel.
//
// # Why not Eigen here
// The kernel is compiled twice from rnn_math.inc (baseline flags and -mavx2 -mfma). Eigen's
// templates would be instantiated in both objects under the same mangled names, and the linker
// would keep one of them for both paths (an ODR violation that can run AVX2 code on a baseline
// CPU). The .inc uses only GCC vector extensions inside an ISA-named namespace, so the two
// copies never collide.
#pragma once

#include <cmath>
#include <cstdint>

namespace nuphar {

struct RnnMath {
  /// C[m*ldc+n] = (accumulate ? C : 0) + sum_k A[m*lda+k] * B[n*ldb+k], m < M, n < N.
  void (*gemm_abt_f32)(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                       float* C, int64_t ldc, bool accumulate);
  void (*gemm_abt_f64)(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
                       int64_t ldb, double* C, int64_t ldc, bool accumulate);
  /// In place over n elements; max abs error ~2e-7 against std::exp / std::tanh.
  void (*sigmoid_f32)(float* x, int64_t n);
  void (*tanh_f32)(float* x, int64_t n);
  const char* name;
};

enum class RnnMathPath { kAuto, kRef, kAvx2 };

/// The implementation chosen from CPUID (or forced by SetRnnMathPathForTesting).
const RnnMath& GetRnnMath();
/// Forces a path for tests; kAvx2 on a CPU without AVX2+FMA falls back to kRef.
void SetRnnMathPathForTesting(RnnMathPath path);

/// The implementations (rnn_math_ref.cc, rnn_math_avx2.cc); only rnn_math.cc picks among them.
const RnnMath& RnnMathRef();
const RnnMath& RnnMathAvx2();

inline void GemmABt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                    float* C, int64_t ldc, bool accumulate) {
  GetRnnMath().gemm_abt_f32(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}
inline void GemmABt(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B, int64_t ldb,
                    double* C, int64_t ldc, bool accumulate) {
  GetRnnMath().gemm_abt_f64(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}
inline void SigmoidInPlace(float* x, int64_t n) { GetRnnMath().sigmoid_f32(x, n); }
inline void TanhInPlace(float* x, int64_t n) { GetRnnMath().tanh_f32(x, n); }
inline void SigmoidInPlace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0 / (1.0 + std::exp(-x[i]));
}
inline void TanhInPlace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

}  // namespace nuphar
