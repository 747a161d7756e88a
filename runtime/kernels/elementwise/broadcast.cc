// Multidirectional broadcasting: output shapes and the dim-collapsing plan (broadcast.h).
#include "runtime/kernels/elementwise/broadcast.h"

#include <algorithm>

#include "runtime/core/tensor.h"

namespace nuphar {

Status BroadcastShape(std::span<const int64_t> a, std::span<const int64_t> b, InlineShape& out) {
  const size_t rank = std::max(a.size(), b.size());
  if (rank > InlineShape::kCapacity)
    return Diag::Msg("rank " + std::to_string(rank) + " is above the supported " + std::to_string(InlineShape::kCapacity));
  out.rank = rank;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out.dims[i] = da;
    } else if (da == 1) {
      out.dims[i] = db;
    } else {
      return Diag::Msg("cannot broadcast " + ShapeToString(a) + " with " + ShapeToString(b));
    }
  }
  return Status::OK();
}

Status BroadcastShape(std::span<const int64_t> a, std::span<const int64_t> b, std::vector<int64_t>& out) {
  InlineShape shape;
  NUPHAR_RETURN_IF_ERROR(BroadcastShape(a, b, shape));
  out.assign(shape.dims, shape.dims + shape.rank);
  return Status::OK();
}

Status BroadcastShapes(std::span<const std::span<const int64_t>> shapes, std::vector<int64_t>& out) {
  NUPHAR_CHECK(!shapes.empty(), "BroadcastShapes needs at least one shape");
  out.assign(shapes[0].begin(), shapes[0].end());
  std::vector<int64_t> next;
  for (size_t k = 1; k < shapes.size(); ++k) {
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(out, shapes[k], next));
    out.swap(next);
  }
  return Status::OK();
}

Status InitBroadcastPlan(std::span<const std::span<const int64_t>> in_shapes, std::span<const int64_t> out_shape,
                         int& rank, int64_t& size, int64_t* dims, int64_t* strides) {
  const size_t num_inputs = in_shapes.size();
  NUPHAR_CHECK(num_inputs <= 32, "BroadcastPlan supports at most 32 inputs");
  const size_t out_rank = out_shape.size();
  size = 1;
  for (int64_t d : out_shape) size *= d;

  // present[k] over the kept (non-1) output dims: does input k span this dim (else repeated)?
  // Adjacent kept dims with identical presence for every input merge into one.
  int r = 0;
  uint32_t prev_mask = 0;
  int64_t merged_dims[64];
  uint32_t masks[64];
  if (out_rank > 64) return Diag::Msg("broadcast of rank " + std::to_string(out_rank) + " is not supported");
  for (size_t i = 0; i < out_rank; ++i) {
    const int64_t d = out_shape[i];
    if (d == 1) continue;
    uint32_t mask = 0;
    for (size_t k = 0; k < num_inputs; ++k) {
      const auto& s = in_shapes[k];
      if (s.size() > out_rank) return Diag::Msg("input shape " + ShapeToString(s) + " has higher rank than " + ShapeToString(out_shape));
      const size_t lead = out_rank - s.size();
      const int64_t in_dim = i < lead ? 1 : s[i - lead];
      if (in_dim == d) {
        mask |= 1u << k;
      } else if (in_dim != 1) {
        return Diag::Msg("input shape " + ShapeToString(s) + " does not broadcast to " + ShapeToString(out_shape));
      }
    }
    if (r > 0 && mask == prev_mask) {
      merged_dims[r - 1] *= d;
    } else {
      merged_dims[r] = d;
      masks[r] = mask;
      ++r;
    }
    prev_mask = mask;
  }
  // Validate dims of size 1 in the output too (an input dim there must be 1).
  for (size_t k = 0; k < num_inputs; ++k) {
    const auto& s = in_shapes[k];
    const size_t lead = out_rank - s.size();
    for (size_t i = lead; i < out_rank; ++i)
      if (out_shape[i] == 1 && s[i - lead] != 1)
        return Diag::Msg("input shape " + ShapeToString(s) + " does not broadcast to " + ShapeToString(out_shape));
  }
  if (r == 0) {  // scalar output (or all dims 1): one row of one element
    merged_dims[0] = 1;
    masks[0] = 0;
    r = 1;
  }
  if (r > kMaxBroadcastRank)
    return Diag::Msg("broadcast of " + ShapeToString(out_shape) + " needs " + std::to_string(r) +
                     " loop dims after collapsing; at most " + std::to_string(kMaxBroadcastRank) + " are supported");
  rank = r;
  for (int d = 0; d < r; ++d) dims[d] = merged_dims[d];
  for (size_t k = 0; k < num_inputs; ++k) {
    int64_t stride = 1;  // inputs are dense row-major, so a present dim's stride is the product of inner present dims
    for (int d = r - 1; d >= 0; --d) {
      const bool present = masks[d] & (1u << k);
      strides[k * kMaxBroadcastRank + d] = present ? stride : 0;
      if (present) stride *= merged_dims[d];
    }
  }
  return Status::OK();
}

}  // namespace nuphar
