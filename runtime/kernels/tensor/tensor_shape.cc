// Shape-only ops: Shape, Size, and the zero-copy view ops Reshape, Flatten, Squeeze and
// Unsqueeze (their output shares the input's buffer).
#include <algorithm>

#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

// Shape (start/end from opset 15; both clamp to [0, rank] after adding rank to negatives).
class ShapeKernel final : public OpKernel {
 public:
  ShapeKernel(int64_t start, int64_t end) : start_(start), end_(end) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    const int64_t rank = x->rank();
    auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const int64_t begin = clamp(start_), end = std::max(begin, clamp(end_));
    const int64_t count = end - begin;
    Tensor* y = ctx.Output(0, DType::kInt64, std::vector<int64_t>{count});
    for (int64_t i = 0; i < count; ++i) y->data<int64_t>()[i] = x->dim(begin + i);
    return Status::OK();
  }

 private:
  int64_t start_, end_;
};

class SizeKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    Tensor* y = ctx.Output(0, DType::kInt64, std::vector<int64_t>{});
    *y->data<int64_t>() = x->size();
    return Status::OK();
  }
};

// Reshape: shape from the attribute (opset < 5) or input 1. A 0 copies the input dim (unless
// allowzero=1, opset 14, where it means an empty dim) and one -1 is inferred.
class ReshapeKernel final : public OpKernel {
 public:
  ReshapeKernel(std::vector<int64_t> attr_shape, bool from_attr, bool allowzero)
      : attr_shape_(std::move(attr_shape)), from_attr_(from_attr), allowzero_(allowzero) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 'data' is missing");
    std::vector<int64_t> dims;
    if (from_attr_) {
      dims = attr_shape_;
    } else {
      NUPHAR_ASSIGN_OR_RETURN(dims, InputAsInt64(ctx, 1, "shape"));
    }
    int64_t known = 1, infer_at = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && !allowzero_) {
        if (static_cast<int64_t>(i) >= x->rank())
          return Diag::Msg("shape has 0 at index " + std::to_string(i) + " beyond the input rank " +
                           std::to_string(x->rank()));
        dims[i] = x->dim(static_cast<int64_t>(i));
      }
      if (dims[i] == -1) {
        if (infer_at >= 0) return Diag::Msg("shape " + ShapeToString(dims) + " has more than one -1");
        infer_at = static_cast<int64_t>(i);
      } else if (dims[i] < 0) {
        return Diag::Msg("shape " + ShapeToString(dims) + " has a negative dim");
      } else {
        known *= dims[i];
      }
    }
    if (infer_at >= 0) {
      if (known == 0 || x->size() % known != 0)
        return Diag::Msg("cannot infer the -1 in shape " + ShapeToString(dims) + " for input " +
                         ShapeToString(x->shape()));
      dims[static_cast<size_t>(infer_at)] = x->size() / known;
    } else if (known != x->size()) {
      return Diag::Msg("cannot reshape " + ShapeToString(x->shape()) + " to " + ShapeToString(dims));
    }
    ctx.SetOutputReshaped(0, *x, dims);
    return Status::OK();
  }

 private:
  std::vector<int64_t> attr_shape_;
  bool from_attr_, allowzero_;
};

class FlattenKernel final : public OpKernel {
 public:
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    const int64_t axis = axis_ < 0 ? axis_ + x->rank() : axis_;
    if (axis < 0 || axis > x->rank())
      return Diag::Msg("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(x->rank()));
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < x->rank(); ++k) (k < axis ? outer : inner) *= x->dim(k);
    const int64_t dims[] = {outer, inner};
    ctx.SetOutputReshaped(0, *x, dims);
    return Status::OK();
  }

 private:
  int64_t axis_;
};

// Squeeze and Unsqueeze: axes from the attribute (opset < 13) or input 1, read at load when it
// is a constant. Silero runs dozens per frame on tensors of a few hundred floats, so the output
// shape is built in place (no vectors for shapes up to rank 16) and the value copied or shared
// by SetOutputReshaped.
class SqueezeKernel final : public OpKernel {
 public:
  SqueezeKernel(bool unsqueeze, std::vector<int64_t> attr_axes, bool axes_from_input)
      : unsqueeze_(unsqueeze), attr_axes_(std::move(attr_axes)), axes_from_input_(axes_from_input) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    std::vector<int64_t> fed;
    std::span<const int64_t> axes(attr_axes_);
    if (axes_from_input_ && ctx.input(1)) {
      NUPHAR_ASSIGN_OR_RETURN(fed, InputAsInt64(ctx, 1, "axes"));
      axes = fed;
    }
    const int64_t in_rank = x->rank();
    const int64_t out_rank = unsqueeze_ ? in_rank + static_cast<int64_t>(axes.size()) : in_rank;
    // Per dim: inserted (Unsqueeze) or removed (Squeeze); then the output dims.
    DimsBuffer flag_buffer(static_cast<size_t>(out_rank)), dims_buffer(static_cast<size_t>(out_rank));
    int64_t* flag = flag_buffer.data();
    int64_t* dims = dims_buffer.data();
    std::fill(flag, flag + out_rank, static_cast<int64_t>(!unsqueeze_ && axes.empty()));
    int64_t n = 0;
    if (unsqueeze_) {
      for (int64_t a : axes) {
        NUPHAR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, out_rank));
        if (flag[axis]) return Diag::Msg("axis " + std::to_string(a) + " is repeated");
        flag[axis] = 1;
      }
      int64_t next = 0;
      for (int64_t k = 0; k < out_rank; ++k) dims[n++] = flag[k] ? 1 : x->dim(next++);
    } else {
      for (int64_t a : axes) {
        NUPHAR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, in_rank));
        if (x->dim(axis) != 1)
          return Diag::Msg("cannot squeeze axis " + std::to_string(a) + " of shape " + ShapeToString(x->shape()));
        flag[axis] = 1;
      }
      for (int64_t k = 0; k < in_rank; ++k)
        if (!(flag[k] && x->dim(k) == 1)) dims[n++] = x->dim(k);
    }
    ctx.SetOutputReshaped(0, *x, std::span<const int64_t>(dims, static_cast<size_t>(n)));
    return Status::OK();
  }

 private:
  bool unsqueeze_;
  std::vector<int64_t> attr_axes_;
  bool axes_from_input_;
};

Expected<std::unique_ptr<OpKernel>> CreateShape(const NodeInfo& node) {
  return MakeKernel<ShapeKernel>(node.GetInt("start", 0), node.GetInt("end", INT64_MAX));
}

Expected<std::unique_ptr<OpKernel>> CreateSize(const NodeInfo& node) { return MakeKernel<SizeKernel>(); }

Expected<std::unique_ptr<OpKernel>> CreateReshape(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const bool from_attr = node.opset() < 5;
  if (from_attr && !node.has_attr("shape")) return node.Error("Reshape-1 needs the 'shape' attribute");
  if (!from_attr && !node.has_input(1)) return node.Error("input 'shape' is missing");
  return MakeKernel<ReshapeKernel>(node.GetInts("shape"), from_attr, node.GetInt("allowzero", 0) != 0);
}

Expected<std::unique_ptr<OpKernel>> CreateFlatten(const NodeInfo& node) {
  return MakeKernel<FlattenKernel>(node.GetInt("axis", 1));
}

Expected<std::unique_ptr<OpKernel>> CreateSqueezeLike(const NodeInfo& node) {
  const bool unsqueeze = node.op_type() == "Unsqueeze";
  const bool from_input = node.opset() >= 13;
  if (unsqueeze && from_input && !node.has_input(1)) return node.Error("input 'axes' is missing");
  if (unsqueeze && !from_input && !node.has_attr("axes")) return node.Error("attribute 'axes' is missing");
  if (const Tensor* axes = from_input ? node.constant_input(1) : nullptr) {
    auto values = axes->ToInt64Vector();
    if (values) return MakeKernel<SqueezeKernel>(unsqueeze, std::move(*values), false);
  }
  return MakeKernel<SqueezeKernel>(unsqueeze, node.GetInts("axes"), from_input);
}

}  // namespace

void RegisterShapeKernels(KernelRegistry& r) {
  r.Add("", "Shape", CreateShape);
  r.Add("", "Size", CreateSize);
  r.Add("", "Reshape", CreateReshape);
  r.Add("", "Flatten", CreateFlatten);
  r.Add("", "Squeeze", CreateSqueezeLike);
  r.Add("", "Unsqueeze", CreateSqueezeLike);
}

}  // namespace nuphar::tensor_kernels
