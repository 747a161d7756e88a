// Layout ops that are one strided or index-mapped copy: Transpose, DepthToSpace,
// SpaceToDepth (a reshape-transpose-reshape), Expand (stride-0 broadcast) and Tile.
#include <numeric>

#include "runtime/kernels/elementwise/broadcast.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

// dst (contiguous, shape in_shape permuted by perm) = transpose of src (contiguous in_shape).
void TransposeInto(void* dst, const void* src, std::span<const int64_t> in_shape, std::span<const int64_t> perm,
                   size_t elem_size) {
  const size_t rank = perm.size();
  DimsBuffer in_strides(rank), out_shape(rank), strides(rank);
  int64_t stride = 1;
  for (size_t k = rank; k-- > 0;) {
    in_strides.data()[k] = stride;
    stride *= in_shape[k];
  }
  for (size_t k = 0; k < rank; ++k) {
    out_shape.data()[k] = in_shape[static_cast<size_t>(perm[k])];
    strides.data()[k] = in_strides.data()[static_cast<size_t>(perm[k])];
  }
  StridedCopy(dst, src, out_shape.span(), strides.span(), elem_size);
}

class TransposeKernel final : public OpKernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    const size_t rank = static_cast<size_t>(x->rank());
    DimsBuffer reversed(perm_.empty() ? rank : 0);
    std::span<const int64_t> perm(perm_);
    if (perm_.empty()) {
      for (size_t k = 0; k < rank; ++k) reversed.data()[k] = static_cast<int64_t>(rank - 1 - k);
      perm = reversed.span();
    }
    if (perm.size() != rank)
      return Diag::Msg("perm has " + std::to_string(perm.size()) + " entries but the input has rank " +
                       std::to_string(x->rank()));
    // perm is a permutation of 0..rank-1 (checked at load time; the default reverses).
    DimsBuffer out_shape(rank);
    for (size_t k = 0; k < rank; ++k) out_shape.data()[k] = x->dim(perm[k]);
    if (TransposeKeepsOffsets(x->shape(), perm)) {
      ctx.SetOutputReshaped(0, *x, out_shape.span());
      return Status::OK();
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape.span());
    TransposeInto(y->raw(), x->raw(), x->shape(), perm, DTypeSize(x->dtype()));
    return Status::OK();
  }

 private:
  std::vector<int64_t> perm_;  // empty = reverse the dims
};

// DepthToSpace (modes DCR and CRD) and SpaceToDepth on NCHW input.
class BlockRearrangeKernel final : public OpKernel {
 public:
  enum class Kind { kDepthToSpaceDcr, kDepthToSpaceCrd, kSpaceToDepth };
  BlockRearrangeKernel(Kind kind, int64_t block) : kind_(kind), block_(block) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    if (x->rank() != 4) return Diag::Msg("input must have rank 4, got " + ShapeToString(x->shape()));
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3), b = block_;
    std::vector<int64_t> view, perm, out_shape;
    if (kind_ == Kind::kSpaceToDepth) {
      if (h % b != 0 || w % b != 0)
        return Diag::Msg("height and width of " + ShapeToString(x->shape()) + " must be multiples of blocksize " +
                         std::to_string(b));
      view = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      out_shape = {n, c * b * b, h / b, w / b};
    } else {
      if (c % (b * b) != 0)
        return Diag::Msg("channels of " + ShapeToString(x->shape()) + " must be a multiple of blocksize^2 = " +
                         std::to_string(b * b));
      const int64_t oc = c / (b * b);
      if (kind_ == Kind::kDepthToSpaceDcr) {
        view = {n, b, b, oc, h, w};
        perm = {0, 3, 4, 1, 5, 2};
      } else {
        view = {n, oc, b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      }
      out_shape = {n, oc, h * b, w * b};
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    TransposeInto(y->raw(), x->raw(), view, perm, DTypeSize(x->dtype()));
    return Status::OK();
  }

 private:
  Kind kind_;
  int64_t block_;
};

class ExpandKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    NUPHAR_ASSIGN_OR_RETURN(std::vector<int64_t> target, InputAsInt64(ctx, 1, "shape"));
    std::vector<int64_t> out_shape;
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(x->shape(), target, out_shape));
    // Input dims align to the right; a broadcast dim repeats its element (stride 0).
    const std::vector<int64_t> in_strides = ContiguousStrides(x->shape());
    const size_t lead = out_shape.size() - static_cast<size_t>(x->rank());
    std::vector<int64_t> strides(out_shape.size(), 0);
    for (size_t k = lead; k < out_shape.size(); ++k)
      if (x->dim(static_cast<int64_t>(k - lead)) != 1) strides[k] = in_strides[k - lead];
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    StridedCopy(y->raw(), x->raw(), out_shape, strides, DTypeSize(x->dtype()));
    return Status::OK();
  }
};

class TileKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    NUPHAR_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, InputAsInt64(ctx, 1, "repeats"));
    if (static_cast<int64_t>(repeats.size()) != x->rank())
      return Diag::Msg("repeats has " + std::to_string(repeats.size()) + " entries but the input has rank " +
                       std::to_string(x->rank()));
    const std::vector<int64_t> in_strides = ContiguousStrides(x->shape());
    std::vector<int64_t> out_shape(repeats.size());
    std::vector<std::vector<int64_t>> maps(repeats.size());
    for (size_t k = 0; k < repeats.size(); ++k) {
      if (repeats[k] < 0) return Diag::Msg("repeats " + ShapeToString(repeats) + " has a negative entry");
      const int64_t dim = x->dim(static_cast<int64_t>(k));
      out_shape[k] = dim * repeats[k];
      maps[k].resize(static_cast<size_t>(out_shape[k]));
      for (int64_t o = 0; o < out_shape[k]; ++o) maps[k][static_cast<size_t>(o)] = (o % dim) * in_strides[k];
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    IndexMapCopy(y->raw(), x->raw(), maps, DTypeSize(x->dtype()), nullptr);
    return Status::OK();
  }
};

Expected<std::unique_ptr<OpKernel>> CreateTranspose(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const std::vector<int64_t> perm = node.GetInts("perm");
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
      return node.Error("perm " + ShapeToString(perm) + " is not a permutation of 0.." +
                        std::to_string(static_cast<int64_t>(perm.size()) - 1));
    seen[static_cast<size_t>(p)] = true;
  }
  return MakeKernel<TransposeKernel>(perm);
}

Expected<std::unique_ptr<OpKernel>> CreateBlockRearrange(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const int64_t block = node.GetInt("blocksize", 0);
  if (block <= 0) return node.Error("attribute 'blocksize' must be positive");
  using Kind = BlockRearrangeKernel::Kind;
  if (node.op_type() == "SpaceToDepth") return MakeKernel<BlockRearrangeKernel>(Kind::kSpaceToDepth, block);
  const std::string mode = node.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return node.Error("mode '" + mode + "' is not DCR or CRD");
  return MakeKernel<BlockRearrangeKernel>(mode == "DCR" ? Kind::kDepthToSpaceDcr : Kind::kDepthToSpaceCrd, block);
}

Expected<std::unique_ptr<OpKernel>> CreateExpand(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  return MakeKernel<ExpandKernel>();
}

Expected<std::unique_ptr<OpKernel>> CreateTile(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  if (node.opset() < 6) return node.Error("Tile-1 (tiles and axis inputs) is not supported; use opset >= 6");
  return MakeKernel<TileKernel>();
}

}  // namespace

void RegisterLayoutKernels(KernelRegistry& r) {
  r.Add("", "Transpose", CreateTranspose);
  r.Add("", "DepthToSpace", CreateBlockRearrange);
  r.Add("", "SpaceToDepth", CreateBlockRearrange);
  r.Add("", "Expand", CreateExpand);
  r.Add("", "Tile", CreateTile);
}

}  // namespace nuphar::tensor_kernels
