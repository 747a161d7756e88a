// Packed fp32 GEMV for constant weights: y[N] = a[K] x B[K, N] with B packed once at load.
//
// # Where it runs
// One row of activations against a constant matrix is the recurrence of every RNN step: the
// LSTM/GRU/RNN op kernels' h x R^T (batch 1) and, after model_editor's to_scan, the Scan body's
// MatMul(h, R^T). Eigen's GEMV streams the weights row by row (or column by column) and reached
// 8.5-19 GMAC/s on H = 128..1024 LSTM shapes; the packed form streams one sequential block per
// 32 columns and reached 13-24 (1.3-1.5x), measured on the Zen 4 dev VM.
//
// # Layout
// [ceil(N/32)][K][32] floats, 64-byte aligned, columns past N zero. Packing copies the weights
// (the session keeps both the constant and its packed form).
//
// # Numerics
// Each y[n] is a sum over k in a fixed order per path (AVX2 and AVX-512: even and odd k in two
// chains, added at the end, with FMA, bit-identical to each other; ref: one chain). Not
// bit-identical to Eigen nor between the ref and vector paths, like GemmF32 itself.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/core/tensor.h"
#include "runtime/platform/alternating_sweep.h"

namespace nuphar {

class PackedGemvF32 {
 public:
  static constexpr int64_t kBlockCols = 32;

  PackedGemvF32() = default;
  /// B given as [K, N] with `ldb` elements between rows (MatMul's B).
  static PackedGemvF32 FromKN(const float* b, int64_t K, int64_t N, int64_t ldb);
  /// B given transposed, as [N, K] with `ldb` elements between rows (an RNN's R: gates x hidden).
  static PackedGemvF32 FromNK(const float* b, int64_t K, int64_t N, int64_t ldb);

  int64_t K() const { return k_; }
  int64_t N() const { return n_; }
  /// Block `block` (32 columns): K rows of 32 floats.
  const float* block(int64_t block) const { return data() + block * k_ * kBlockCols; }
  bool empty() const { return buffer_ == nullptr; }
  /// The order of the next GEMV sweep over the blocks (platform/alternating_sweep.h).
  const AlternatingSweep& sweep() const { return sweep_; }

 private:
  static PackedGemvF32 Allocate(int64_t K, int64_t N);
  float* data() const { return static_cast<float*>(buffer_->data()); }
  int64_t k_ = 0, n_ = 0;
  std::unique_ptr<Buffer> buffer_;  ///< 64-byte aligned (runtime/core/tensor.h)
  AlternatingSweep sweep_;
};

/// Whether GemmF32Packed runs on the active tier (AVX-512; elsewhere MatMul keeps Eigen).
bool PackedGemmF32Available();

/// C[m, n] = sum_k A[m, k] * B[k, n] (+ bias[n], added to the finished sum, when bias is not
/// null) for m < M and the columns of 32-column blocks [first, end) (C overwritten, row strides
/// lda and ldc): one FMA chain per element over k in order, so a column's values never depend on
/// M, the block range or the thread that computes it. Only when PackedGemmF32Available()
/// (gemm_packed_f32_avx512.cc explains the kernel).
void GemmF32Packed(const float* a, int64_t M, int64_t lda, const PackedGemvF32& b, int64_t first_block,
                   int64_t end_block, const float* bias, float* c, int64_t ldc);

/// y[n] = (accumulate ? y[n] : 0) + sum_k a[k] * B[k, n] for n < N. Dispatched from CPUID
/// (gemm_dispatch.cc, with GemmF32: SetGemmPathForTesting forces both).
void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate);

}  // namespace nuphar
