// Packing of gemv_f32.h and its portable micro-kernel (the reference path; baseline flags).
#include <algorithm>
#include <cstring>

#include "runtime/kernels/math/gemv_f32_internal.h"

namespace nuphar {

PackedGemvF32 PackedGemvF32::Allocate(int64_t K, int64_t N) {
  PackedGemvF32 p;
  p.k_ = K;
  p.n_ = N;
  const int64_t blocks = (N + kBlockCols - 1) / kBlockCols;
  const size_t bytes = static_cast<size_t>(blocks * K * kBlockCols) * sizeof(float);
  p.buffer_ = std::make_unique<Buffer>(bytes);
  std::memset(p.buffer_->data(), 0, bytes);
  return p;
}

PackedGemvF32 PackedGemvF32::FromKN(const float* b, int64_t K, int64_t N, int64_t ldb) {
  PackedGemvF32 p = Allocate(K, N);
  for (int64_t n0 = 0; n0 < N; n0 += kBlockCols) {
    float* dst = p.data() + n0 * K;  // block n0 / 32 starts at (n0 / 32) * K * 32
    const int64_t cols = std::min(kBlockCols, N - n0);
    for (int64_t k = 0; k < K; ++k) std::memcpy(dst + k * kBlockCols, b + k * ldb + n0, size_t(cols) * sizeof(float));
  }
  return p;
}

PackedGemvF32 PackedGemvF32::FromNK(const float* b, int64_t K, int64_t N, int64_t ldb) {
  PackedGemvF32 p = Allocate(K, N);
  for (int64_t n0 = 0; n0 < N; n0 += kBlockCols) {
    float* dst = p.data() + n0 * K;
    const int64_t cols = std::min(kBlockCols, N - n0);
    for (int64_t j = 0; j < cols; ++j) {
      const float* row = b + (n0 + j) * ldb;
      for (int64_t k = 0; k < K; ++k) dst[k * kBlockCols + j] = row[k];
    }
  }
  return p;
}

namespace gemv_ref {

void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate) {
  constexpr int64_t kCols = PackedGemvF32::kBlockCols;
  const int64_t K = b.K(), N = b.N();
  for (int64_t n0 = first * kCols; n0 < N && n0 < end * kCols; n0 += kCols) {
    float acc[kCols] = {};
    const float* panel = b.block(n0 / kCols);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < kCols; ++j) acc[j] += a[k] * panel[k * kCols + j];
    const int64_t cols = std::min(kCols, N - n0);
    for (int64_t j = 0; j < cols; ++j) y[n0 + j] = accumulate ? y[n0 + j] + acc[j] : acc[j];
  }
}

}  // namespace gemv_ref
}  // namespace nuphar
