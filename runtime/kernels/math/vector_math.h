// Vectorized float32 Sigmoid, Tanh, Softmax and Log, chosen once per process from CPUID (STYLE R10/R11). Used
// by the RNN op kernels for every gate of every step and by the Sigmoid/Tanh op kernels, which
// run on every gate of a Scan body after model_editor's to_scan: libm's scalar tanhf/expf took
// about 40% of an int8 LSTM step there.
//
// # Accuracy (not bit-identical to libm; tests/runtime/kernels/vector_math_test.cc)
// Sigmoid: max abs error 3e-7. Tanh: max abs error 3e-7, and relative error below 1e-6 near 0
// (an odd polynomial below |x| = 1/16, where 1 - e^-2|x| would cancel).
//
// # Why ISA twins
// vector_math.inc implements them once with GCC vector extensions (no Eigen, so the two copies
// cannot collide at link time) and is compiled with baseline flags (vector_math_ref.cc) and with
// -mavx2 -mfma (vector_math_avx2.cc).
#pragma once

#include <cmath>
#include <cstdint>

namespace nuphar {

struct VectorMath {
  /// y[i] = f(x[i]) for i < n; x == y (in place) is allowed.
  void (*sigmoid_f32)(const float* x, float* y, int64_t n);
  void (*tanh_f32)(const float* x, float* y, int64_t n);
  /// y = softmax(x) over n contiguous floats: exp(x - max) / sum, exp as in Sigmoid (relative
  /// error about 2e-7); x == y is allowed. The Softmax op kernel's float rows (PaddleOCR's
  /// 6625-class output took 8% of the model with scalar expf).
  void (*softmax_f32)(const float* x, float* y, int64_t n);
  /// y[i] = log(x[i]): Cephes logf (relative error below 2e-7; log(0) = -inf, NaN for x < 0).
  /// The Log op kernel's float rows and the generated kernels' Log (STFT magnitudes in audio
  /// front ends: libm's scalar logf was half of Silero v3.1's spectrum kernel).
  void (*log_f32)(const float* x, float* y, int64_t n);
  const char* name;
};

enum class VectorMathPath { kAuto, kRef, kAvx2, kAvx512 };

/// The implementation chosen from CPUID (or forced by SetVectorMathPathForTesting).
const VectorMath& GetVectorMath();
/// Forces a path (tests); kAvx2 on a CPU without AVX2+FMA falls back to kRef.
void SetVectorMathPathForTesting(VectorMathPath path);

/// The implementations (vector_math_ref.cc, vector_math_avx2.cc); only vector_math.cc picks.
const VectorMath& VectorMathRef();
const VectorMath& VectorMathAvx2();
const VectorMath& VectorMathAvx512();

inline void SigmoidInPlace(float* x, int64_t n) { GetVectorMath().sigmoid_f32(x, x, n); }
inline void TanhInPlace(float* x, int64_t n) { GetVectorMath().tanh_f32(x, x, n); }
inline void SigmoidInPlace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0 / (1.0 + std::exp(-x[i]));
}
inline void TanhInPlace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

}  // namespace nuphar
