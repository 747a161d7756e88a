// MatMul shape planning: numpy.matmul rules for 1-D operands and batch broadcasting.
#include "runtime/kernels/nn/nn_matmul_shape.h"

#include <algorithm>
#include <string>

#include "runtime/core/tensor.h"
#include "runtime/kernels/elementwise/broadcast.h"

namespace nuphar {

Expected<MatMulShape> MatMulShape::Compute(std::span<const int64_t> a, std::span<const int64_t> b) {
  auto fail = [&](const char* why) {
    return Diag::Msg(std::string("MatMul ") + why + ": A " + ShapeToString(a) + ", B " + ShapeToString(b));
  };
  if (a.empty() || b.empty()) return fail("operands must have rank >= 1");
  MatMulShape s;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  // A 1-D A is [1,K] and a 1-D B is [K,1]; the unit dim is dropped from the output.
  s.M = a_vec ? 1 : a[a.size() - 2];
  s.K = a.back();
  const int64_t kb = b_vec ? b[0] : b[b.size() - 2];
  s.N = b_vec ? 1 : b.back();
  if (kb != s.K) return fail("inner dimensions differ");
  const int a_batch = a_vec ? 0 : static_cast<int>(a.size()) - 2;
  const int b_batch = b_vec ? 0 : static_cast<int>(b.size()) - 2;
  // The batch dims follow the shared multidirectional broadcast rule.
  InlineShape batch;
  if (!BroadcastShape(a.first(static_cast<size_t>(a_batch)), b.first(static_cast<size_t>(b_batch)), batch).ok())
    return fail("batch dimensions do not broadcast");
  s.batch_rank_ = static_cast<int>(batch.rank);
  if (s.batch_rank_ > kMaxRank) return fail("has too many batch dimensions");
  int64_t a_step = s.M * s.K, b_step = s.K * s.N;
  bool a_broadcast = false;
  s.b_shared_ = true;
  for (int i = s.batch_rank_ - 1; i >= 0; --i) {
    const int ai = i - (s.batch_rank_ - a_batch), bi = i - (s.batch_rank_ - b_batch);
    const int64_t da = ai >= 0 ? a[static_cast<size_t>(ai)] : 1;
    const int64_t db = bi >= 0 ? b[static_cast<size_t>(bi)] : 1;
    const int64_t d = batch.dims[i];
    s.batch_[static_cast<size_t>(i)] = d;
    s.a_stride_[static_cast<size_t>(i)] = da == 1 ? 0 : a_step;
    s.b_stride_[static_cast<size_t>(i)] = db == 1 ? 0 : b_step;
    if (da == 1 && d != 1) a_broadcast = true;
    if (db != 1) s.b_shared_ = false;
    a_step *= da;
    b_step *= db;
    s.batch_count *= d;
  }
  s.a_contiguous_ = !a_broadcast;
  for (int i = 0; i < s.batch_rank_; ++i) s.out_[static_cast<size_t>(s.out_rank_++)] = s.batch_[static_cast<size_t>(i)];
  if (!a_vec) s.out_[static_cast<size_t>(s.out_rank_++)] = s.M;
  if (!b_vec) s.out_[static_cast<size_t>(s.out_rank_++)] = s.N;
  return s;
}

int64_t MatMulShape::Offset(int64_t batch, const std::array<int64_t, kMaxRank>& stride) const {
  int64_t offset = 0;
  for (int i = batch_rank_ - 1; i >= 0 && batch > 0; --i) {
    const int64_t d = batch_[static_cast<size_t>(i)];
    offset += (batch % d) * stride[static_cast<size_t>(i)];
    batch /= d;
  }
  return offset;
}

}  // namespace nuphar
