// Shape rules of ONNX MatMul (numpy.matmul): 1-D operands and broadcast batch dimensions.
// Shared by MatMul, MatMulInteger, MatMulInteger16 and QLinearMatMul. Fixed-size arrays only,
// so planning a product allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "graph/error.h"

namespace nuphar {

class MatMulShape {
 public:
  static constexpr int kMaxRank = 8;

  /// Fails (with the two shapes in the message) when K differs or batch dims do not broadcast.
  static Expected<MatMulShape> Compute(std::span<const int64_t> a, std::span<const int64_t> b);

  int64_t M = 0, N = 0, K = 0;
  /// Number of [M,N] result matrices.
  int64_t batch_count = 1;
  /// Output shape (1-D operands drop their dims as numpy does).
  std::span<const int64_t> output_shape() const { return {out_.data(), static_cast<size_t>(out_rank_)}; }

  /// Element offsets of batch b's A [M,K] and B [K,N] matrices (broadcast dims repeat).
  int64_t a_offset(int64_t batch) const { return Offset(batch, a_stride_); }
  int64_t b_offset(int64_t batch) const { return Offset(batch, b_stride_); }
  /// True when B is one matrix shared by every batch, so the batches of A can be one [batch*M, K]
  /// product (A contiguous, not broadcast).
  bool b_shared_and_a_contiguous() const { return b_shared_ && a_contiguous_; }

 private:
  int64_t Offset(int64_t batch, const std::array<int64_t, kMaxRank>& stride) const;

  int batch_rank_ = 0;
  std::array<int64_t, kMaxRank> batch_{}, a_stride_{}, b_stride_{};
  std::array<int64_t, kMaxRank + 2> out_{};
  int out_rank_ = 0;
  bool b_shared_ = false, a_contiguous_ = false;
};

}  // namespace nuphar
