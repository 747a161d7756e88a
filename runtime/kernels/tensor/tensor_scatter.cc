// Index-driven writes: ScatterElements (and its deprecated alias Scatter) and ScatterND, with
// the reduction attribute of opset 16 (none, add, mul) and 18 (max, min). The output starts as
// a copy of data; updates are applied in index order, so with reduction=none a duplicate index
// keeps the last update.
#include <algorithm>

#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// dst[j] (op)= src[j] for j < n. With kNone, T is only an element of the right width.
template <class T>
inline void Combine(T* dst, const T* src, int64_t n, Reduction r) {
  for (int64_t j = 0; j < n; ++j) {
    switch (r) {
      case Reduction::kNone: dst[j] = src[j]; break;
      case Reduction::kAdd: dst[j] = static_cast<T>(dst[j] + src[j]); break;
      case Reduction::kMul: dst[j] = static_cast<T>(dst[j] * src[j]); break;
      case Reduction::kMax: dst[j] = std::max(dst[j], src[j]); break;
      case Reduction::kMin: dst[j] = std::min(dst[j], src[j]); break;
    }
  }
}

// Visits the element type for a reduction: width for kNone (any dtype), value type otherwise.
template <class F>
Status VisitForReduction(DType dtype, Reduction r, F&& f) {
  if (r == Reduction::kNone) {
    VisitWidth(DTypeSize(dtype), [&](auto tag) { f(tag); });
    return Status::OK();
  }
  if (dtype == DType::kBool) return Diag::Msg("reductions are not defined for bool");
  return VisitNumeric(dtype, [&](auto tag) {
    f(tag);
    return Status::OK();
  });
}

class ScatterElementsKernel final : public OpKernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction r) : axis_(axis), reduction_(r) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    const Tensor* updates = ctx.input(2);
    if (!data || !indices || !updates) return Diag::Msg("inputs 'data', 'indices' and 'updates' are required");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*indices, "indices"));
    if (indices->shape() != updates->shape() || updates->dtype() != data->dtype() ||
        indices->rank() != data->rank() || data->rank() == 0)
      return Diag::Msg("indices " + ShapeToString(indices->shape()) + " and updates " +
                       ShapeToString(updates->shape()) + " must match each other and the rank of data " +
                       ShapeToString(data->shape()));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, data->rank()));
    Tensor* y = ctx.Output(0, data->dtype(), data->shape());
    std::memcpy(y->raw(), data->raw(), data->bytes());
    Status status;
    NUPHAR_RETURN_IF_ERROR(VisitForReduction(data->dtype(), reduction_, [&](auto tag) {
      using T = decltype(tag);
      T* dst = y->data<T>();
      const T* src = updates->data<T>();
      status = ForEachAxisIndex(*indices, data->shape(), axis,
                                [&](int64_t i, int64_t offset) { Combine(dst + offset, src + i, 1, reduction_); });
    }));
    return status;
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

// ScatterND: each index tuple (last dim of indices, length k) addresses a slice data[t][...]
// of prod(data.shape[k:]) elements, combined with the matching slice of updates.
class ScatterNDKernel final : public OpKernel {
 public:
  explicit ScatterNDKernel(Reduction r) : reduction_(r) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    const Tensor* updates = ctx.input(2);
    if (!data || !indices || !updates) return Diag::Msg("inputs 'data', 'indices' and 'updates' are required");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*indices, "indices"));
    const int64_t q = indices->rank(), r = data->rank();
    const int64_t k = q > 0 ? indices->dim(q - 1) : 0;
    if (q < 1 || k > r || updates->dtype() != data->dtype())
      return Diag::Msg("indices " + ShapeToString(indices->shape()) + " do not address data " +
                       ShapeToString(data->shape()));
    std::vector<int64_t> expected(indices->shape().begin(), indices->shape().end() - 1);
    expected.insert(expected.end(), data->shape().begin() + k, data->shape().end());
    if (updates->shape() != expected)
      return Diag::Msg("updates " + ShapeToString(updates->shape()) + " must have shape " + ShapeToString(expected));
    Tensor* y = ctx.Output(0, data->dtype(), data->shape());
    std::memcpy(y->raw(), data->raw(), data->bytes());
    const std::vector<int64_t> strides = ContiguousStrides(data->shape());
    int64_t slice = 1;
    for (int64_t d = k; d < r; ++d) slice *= data->dim(d);
    const int64_t tuples = k == 0 ? updates->size() / std::max<int64_t>(slice, 1) : indices->size() / k;
    Status status;
    NUPHAR_RETURN_IF_ERROR(VisitForReduction(data->dtype(), reduction_, [&](auto tag) {
      using T = decltype(tag);
      T* dst = y->data<T>();
      const T* src = updates->data<T>();
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = 0;
        for (int64_t c = 0; c < k; ++c) {
          int64_t idx = LoadIndex(*indices, t * k + c);
          if (Status s = ResolveIndex(idx, data->dim(c)); !s.ok()) {
            status = s;
            return;
          }
          off += idx * strides[static_cast<size_t>(c)];
        }
        Combine(dst + off, src + t * slice, slice, reduction_);
      }
    }));
    return status;
  }

 private:
  Reduction reduction_;
};

Expected<Reduction> ParseReduction(const NodeInfo& node) {
  const std::string r = node.GetString("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return node.Error("reduction '" + r + "' is not none, add, mul, max or min");
}

Expected<std::unique_ptr<OpKernel>> CreateScatterElements(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  NUPHAR_RETURN_IF_ERROR(CheckIndexInput(node, 1));
  NUPHAR_ASSIGN_OR_RETURN(const Reduction r, ParseReduction(node));
  return MakeKernel<ScatterElementsKernel>(node.GetInt("axis", 0), r);
}

Expected<std::unique_ptr<OpKernel>> CreateScatterND(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  NUPHAR_RETURN_IF_ERROR(CheckIndexInput(node, 1));
  NUPHAR_ASSIGN_OR_RETURN(const Reduction r, ParseReduction(node));
  return MakeKernel<ScatterNDKernel>(r);
}

}  // namespace

void RegisterScatterKernels(KernelRegistry& r) {
  r.Add("", "Scatter", CreateScatterElements);
  r.Add("", "ScatterElements", CreateScatterElements);
  r.Add("", "ScatterND", CreateScatterND);
}

}  // namespace nuphar::tensor_kernels
