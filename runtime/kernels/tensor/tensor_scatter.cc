// Index-driven writes: ScatterElements (and its deprecated alias Scatter) and ScatterND, with
// the reduction attribute of opset 16 (none, add, mul) and 18 (max, min). The output starts as
// a copy of data; updates are applied in index order, so with reduction=none a duplicate index
// keeps the last update. ScatterND with constant indices that enumerate a box is a block copy.
#include <algorithm>
#include <optional>

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

// Constant ScatterND indices whose tuples enumerate a box in row-major order: tuple t is
// (lo[0] + i_0, ..., lo[k-1] + i_{k-1}) for the t-th (i_0, ..., i_{k-1}) of len[0] x ... x
// len[k-1]. Exporters write a cache update `cache[:, :, a:b] = x` this way (GTCRN: 16 of them per
// frame, up to 5280 tuples each); the box is then a strided block copy of rows of len[k-1] slices
// instead of a bounds-checked walk over every tuple.
struct IndexBox {
  std::vector<int64_t> lo, len;
};

// The box the constant `indices` enumerate, if they do and none is negative (a negative index
// depends on the data's dims).
std::optional<IndexBox> FindIndexBox(const Tensor& indices) {
  if (indices.rank() < 1 || (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)) return std::nullopt;
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || indices.size() == 0) return std::nullopt;
  const int64_t tuples = indices.size() / k;
  IndexBox box;
  for (int64_t c = 0; c < k; ++c) {
    int64_t lo = LoadIndex(indices, c), hi = lo;
    for (int64_t t = 1; t < tuples; ++t) {
      lo = std::min(lo, LoadIndex(indices, t * k + c));
      hi = std::max(hi, LoadIndex(indices, t * k + c));
    }
    if (lo < 0) return std::nullopt;
    box.lo.push_back(lo);
    box.len.push_back(hi - lo + 1);
  }
  std::vector<int64_t> at(box.lo);  // odometer over the box, last column fastest
  for (int64_t t = 0; t < tuples; ++t) {
    for (int64_t c = 0; c < k; ++c)
      if (LoadIndex(indices, t * k + c) != at[static_cast<size_t>(c)]) return std::nullopt;
    for (int64_t c = k - 1; c >= 0; --c) {
      const size_t cc = static_cast<size_t>(c);
      if (++at[cc] < box.lo[cc] + box.len[cc]) break;
      at[cc] = box.lo[cc];
      if (c == 0 && t + 1 < tuples) return std::nullopt;  // more tuples than the box holds
    }
  }
  int64_t volume = 1;
  for (int64_t n : box.len) volume *= n;
  if (volume != tuples) return std::nullopt;
  return box;
}

// ScatterND: each index tuple (last dim of indices, length k) addresses a slice data[t][...]
// of prod(data.shape[k:]) elements, combined with the matching slice of updates.
class ScatterNDKernel final : public OpKernel {
 public:
  ScatterNDKernel(Reduction r, const Tensor* constant_indices, std::optional<IndexBox> box)
      : reduction_(r), constant_indices_(constant_indices), box_(std::move(box)) {}
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
    if (box_ && indices == constant_indices_ && BoxFits(*data)) return ScatterBox(*data, *updates, strides, slice, y);
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
  // The box lies inside data (otherwise the tuple walk reports the first index out of range).
  bool BoxFits(const Tensor& data) const {
    for (size_t c = 0; c < box_->lo.size(); ++c)
      if (box_->lo[c] + box_->len[c] > data.dim(static_cast<int64_t>(c))) return false;
    return true;
  }

  // The tuples of the box in order: each run along the last index column is len[k-1]
  // consecutive slices of data, so one Combine per run, in the tuple order of the walk.
  Status ScatterBox(const Tensor& data, const Tensor& updates, const std::vector<int64_t>& strides, int64_t slice,
                    Tensor* y) const {
    const size_t k = box_->lo.size();
    int64_t base = 0, runs = 1;
    for (size_t c = 0; c < k; ++c) base += box_->lo[c] * strides[c];
    for (size_t c = 0; c + 1 < k; ++c) runs *= box_->len[c];
    const int64_t run = box_->len[k - 1] * slice;
    return VisitForReduction(data.dtype(), reduction_, [&](auto tag) {
      using T = decltype(tag);
      T* dst = y->data<T>() + base;
      const T* src = updates.data<T>();
      std::vector<int64_t> at(k, 0);  // odometer over the box's first k-1 columns
      for (int64_t r = 0; r < runs; ++r) {
        int64_t off = 0;
        for (size_t c = 0; c + 1 < k; ++c) off += at[c] * strides[c];
        if (reduction_ == Reduction::kNone) std::memcpy(dst + off, src + r * run, static_cast<size_t>(run) * sizeof(T));
        else Combine(dst + off, src + r * run, run, reduction_);
        for (size_t c = k - 1; c-- > 0;) {
          if (++at[c] < box_->len[c]) break;
          at[c] = 0;
        }
      }
    });
  }

  Reduction reduction_;
  const Tensor* constant_indices_;  ///< the plan's constant, when indices are known at load time
  std::optional<IndexBox> box_;     ///< the box those indices enumerate, if they do
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
  const Tensor* indices = node.constant_input(1);
  std::optional<IndexBox> box = indices ? FindIndexBox(*indices) : std::nullopt;
  return MakeKernel<ScatterNDKernel>(r, box ? indices : nullptr, std::move(box));
}

}  // namespace

void RegisterScatterKernels(KernelRegistry& r) {
  r.Add("", "Scatter", CreateScatterElements);
  r.Add("", "ScatterElements", CreateScatterElements);
  r.Add("", "ScatterND", CreateScatterND);
}

}  // namespace nuphar::tensor_kernels
