// RNN math primitives: C = A * B^T through the shared dual-ISA Eigen GEMM (gemm_eigen.h), and
// vectorized in-place Sigmoid/Tanh chosen once per process from CPUID (STYLE R10/R11).
//
// # Why A * B^T
// ONNX stores W [G*H, I] and R [G*H, H] row-major, so gates = x * W^T: the whole-sequence
// projection X * W^T and the per-step h * R^T (a GEMV when batch = 1) are both A * B^T.
//
// # Why the activations have their own ISA twins
// Sigmoid and Tanh run on every gate element of every step; std::exp would dominate small
// hidden sizes. rnn_math.inc implements them once with GCC vector extensions (no Eigen, so the
// two copies cannot collide at link time) and is compiled with baseline flags
// (rnn_math_ref.cc) and with -mavx2 -mfma (rnn_math_avx2.cc).
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/kernels/gemm_eigen.h"

namespace nuphar {

struct RnnMath {
  /// In place over n elements; max abs error ~2e-7 against std::exp / std::tanh.
  void (*sigmoid_f32)(float* x, int64_t n);
  void (*tanh_f32)(float* x, int64_t n);
  const char* name;
};

enum class RnnMathPath { kAuto, kRef, kAvx2 };

/// The implementation chosen from CPUID (or forced by SetRnnMathPathForTesting).
const RnnMath& GetRnnMath();
/// Forces a path for the activations (tests); kAvx2 on a CPU without AVX2+FMA falls back to kRef.
void SetRnnMathPathForTesting(RnnMathPath path);

/// The implementations (rnn_math_ref.cc, rnn_math_avx2.cc); only rnn_math.cc picks among them.
const RnnMath& RnnMathRef();
const RnnMath& RnnMathAvx2();

/// C[m*ldc+n] = (accumulate ? C : 0) + sum_k A[m*lda+k] * B[n*ldb+k], m < M, n < N.
inline void GemmABt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                    float* C, int64_t ldc, bool accumulate) {
  GemmF32(false, true, M, N, K, 1.0f, A, lda, B, ldb, accumulate ? 1.0f : 0.0f, C, ldc);
}
inline void GemmABt(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B, int64_t ldb,
                    double* C, int64_t ldc, bool accumulate) {
  GemmF64(false, true, M, N, K, 1.0, A, lda, B, ldb, accumulate ? 1.0 : 0.0, C, ldc);
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
