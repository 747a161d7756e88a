// Ops that generate or mask values: ConstantOfShape, Range, EyeLike, OneHot, Trilu and
// ReverseSequence.
#include <algorithm>
#include <cmath>

#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

// Fills `count` elements of `elem_size` bytes with the element at `value`.
void FillElements(void* dst, int64_t count, const void* value, size_t elem_size) {
  VisitWidth(elem_size, [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    std::fill(static_cast<T*>(dst), static_cast<T*>(dst) + count, v);
  });
}

// The bytes of the value 1 in `dtype` (float16 included).
Expected<uint64_t> OneOf(DType dtype) {
  uint64_t bits = 0;
  if (dtype == DType::kFloat16) {
    bits = FloatToHalf(1.0f);
    return bits;
  }
  NUPHAR_RETURN_IF_ERROR(VisitNumeric(dtype, [&](auto tag) {
    const auto one = static_cast<decltype(tag)>(1);
    std::memcpy(&bits, &one, sizeof(one));
    return Status::OK();
  }));
  return bits;
}

class ConstantOfShapeKernel final : public OpKernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}
  Status Compute(KernelContext& ctx) const override {
    NUPHAR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, InputAsInt64(ctx, 0, "shape"));
    for (int64_t d : shape)
      if (d < 0) return Diag::Msg("shape " + ShapeToString(shape) + " has a negative dim");
    Tensor* y = ctx.Output(0, value_.dtype(), shape);
    FillElements(y->raw(), y->size(), value_.raw(), DTypeSize(value_.dtype()));
    return Status::OK();
  }

 private:
  Tensor value_;  // one element
};

// Range: max(ceil((limit - start) / delta), 0) elements start + i * delta.
class RangeKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* start = ctx.input(0);
    const Tensor* limit = ctx.input(1);
    const Tensor* delta = ctx.input(2);
    if (!start || !limit || !delta) return Diag::Msg("inputs 'start', 'limit' and 'delta' are required");
    if (start->size() != 1 || limit->size() != 1 || delta->size() != 1 || limit->dtype() != start->dtype() ||
        delta->dtype() != start->dtype())
      return Diag::Msg("start, limit and delta must be scalars of one type");
    return VisitNumeric(start->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        return Diag::Msg("Range is not defined for bool");
      } else {
        const T s = *start->data<T>(), l = *limit->data<T>(), d = *delta->data<T>();
        if (d == T{0}) return Diag::Msg("delta must not be 0");
        int64_t n;
        if constexpr (std::is_floating_point_v<T>) {
          n = static_cast<int64_t>(std::ceil((l - s) / d));  // in T, as the reference does
        } else {
          const double span = static_cast<double>(l) - static_cast<double>(s);
          n = static_cast<int64_t>(std::ceil(span / static_cast<double>(d)));
        }
        n = std::max<int64_t>(n, 0);
        Tensor* y = ctx.Output(0, start->dtype(), std::vector<int64_t>{n});
        T* out = y->data<T>();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(s + static_cast<T>(i) * d);
        return Status::OK();
      }
    });
  }
};

class EyeLikeKernel final : public OpKernel {
 public:
  EyeLikeKernel(DType dtype, int64_t k) : dtype_(dtype), k_(k) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    if (x->rank() != 2) return Diag::Msg("input must be 2-D, got " + ShapeToString(x->shape()));
    const DType dtype = dtype_ == DType::kUndefined ? x->dtype() : dtype_;
    NUPHAR_ASSIGN_OR_RETURN(const uint64_t one, OneOf(dtype));
    Tensor* y = ctx.Output(0, dtype, x->shape());
    std::memset(y->raw(), 0, y->bytes());
    const size_t elem = DTypeSize(dtype);
    auto* out = static_cast<char*>(y->raw());
    const int64_t rows = x->dim(0), cols = x->dim(1);
    for (int64_t i = std::max<int64_t>(0, -k_); i < rows && i + k_ < cols; ++i)
      std::memcpy(out + static_cast<size_t>(i * cols + i + k_) * elem, &one, elem);
    return Status::OK();
  }

 private:
  DType dtype_;  // kUndefined = the input's
  int64_t k_;
};

// OneHot: indices shape with `depth` inserted at `axis`; values = [off, on]. Indices in
// [-depth, depth) select (negatives count from the end); others leave the row all off.
class OneHotKernel final : public OpKernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* indices = ctx.input(0);
    const Tensor* depth_t = ctx.input(1);
    const Tensor* values = ctx.input(2);
    if (!indices || !depth_t || !values) return Diag::Msg("inputs 'indices', 'depth' and 'values' are required");
    if (depth_t->size() != 1) return Diag::Msg("depth must have one element");
    if (values->size() != 2) return Diag::Msg("values must have two elements [off, on]");
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<double> depth_v, depth_t->ToDoubleVector());
    const int64_t depth = static_cast<int64_t>(depth_v[0]);
    if (depth < 1) return Diag::Msg("depth must be positive, got " + std::to_string(depth));
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<double> idx, indices->ToDoubleVector());
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, indices->rank() + 1));
    std::vector<int64_t> out_shape = indices->shape();
    out_shape.insert(out_shape.begin() + axis, depth);
    Tensor* y = ctx.Output(0, values->dtype(), out_shape);
    const size_t elem = DTypeSize(values->dtype());
    const auto* off_on = static_cast<const char*>(values->raw());
    FillElements(y->raw(), y->size(), off_on, elem);
    int64_t inner = 1;
    for (size_t k = static_cast<size_t>(axis); k < indices->shape().size(); ++k) inner *= indices->shape()[k];
    auto* out = static_cast<char*>(y->raw());
    for (int64_t i = 0; i < indices->size(); ++i) {
      int64_t v = static_cast<int64_t>(idx[static_cast<size_t>(i)]);
      if (v < -depth || v >= depth) continue;
      if (v < 0) v += depth;
      const int64_t o = i / inner, in = i % inner;
      std::memcpy(out + static_cast<size_t>((o * depth + v) * inner + in) * elem, off_on + elem, elem);
    }
    return Status::OK();
  }

 private:
  int64_t axis_;
};

// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims.
class TriluKernel final : public OpKernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    if (x->rank() < 2) return Diag::Msg("input must have rank >= 2, got " + ShapeToString(x->shape()));
    int64_t k = 0;
    if (ctx.input(1)) {
      NUPHAR_ASSIGN_OR_RETURN(std::vector<int64_t> kv, InputAsInt64(ctx, 1, "k"));
      if (kv.size() != 1) return Diag::Msg("k must have one element");
      k = kv[0];
    }
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    std::memset(y->raw(), 0, y->bytes());  // zero is all-zero bytes for every numeric type
    const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
    const int64_t mats = rows * cols == 0 ? 0 : x->size() / (rows * cols);
    const size_t elem = DTypeSize(x->dtype());
    const auto* src = static_cast<const char*>(x->raw());
    auto* dst = static_cast<char*>(y->raw());
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        // Kept columns of row i: [i + k, cols) for upper, [0, i + k] for lower.
        const int64_t lo = upper_ ? std::clamp(i + k, int64_t{0}, cols) : 0;
        const int64_t hi = upper_ ? cols : std::clamp(i + k + 1, int64_t{0}, cols);
        if (hi <= lo) continue;
        const size_t at = static_cast<size_t>((m * rows + i) * cols + lo) * elem;
        std::memcpy(dst + at, src + at, static_cast<size_t>(hi - lo) * elem);
      }
    }
    return Status::OK();
  }

 private:
  bool upper_;
};

// ReverseSequence: for batch b, the first sequence_lens[b] steps along time_axis are reversed.
class ReverseSequenceKernel final : public OpKernel {
 public:
  ReverseSequenceKernel(int64_t time_axis, int64_t batch_axis) : time_axis_(time_axis), batch_axis_(batch_axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* lens = ctx.input(1);
    if (!x || !lens) return Diag::Msg("inputs 'input' and 'sequence_lens' are required");
    if (x->rank() < 2) return Diag::Msg("input must have rank >= 2");
    const int64_t steps = x->dim(time_axis_), batch = x->dim(batch_axis_);
    if (lens->rank() != 1 || lens->size() != batch) return Diag::Msg("sequence_lens must have one entry per batch");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*lens, "sequence_lens"));
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    int64_t inner = 1;
    for (int64_t k = 2; k < x->rank(); ++k) inner *= x->dim(k);
    const size_t block = static_cast<size_t>(inner) * DTypeSize(x->dtype());
    // Offset of (time t, batch b) blocks: dims 0 and 1 are time and batch in some order.
    const int64_t t_stride = time_axis_ == 0 ? batch : 1, b_stride = time_axis_ == 0 ? 1 : steps;
    const auto* src = static_cast<const char*>(x->raw());
    auto* dst = static_cast<char*>(y->raw());
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = LoadIndex(*lens, b);
      if (len < 0 || len > steps) return Diag::Msg("sequence_lens entry " + std::to_string(len) + " is out of range");
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        std::memcpy(dst + static_cast<size_t>(t * t_stride + b * b_stride) * block,
                    src + static_cast<size_t>(from * t_stride + b * b_stride) * block, block);
      }
    }
    return Status::OK();
  }

 private:
  int64_t time_axis_, batch_axis_;
};

Expected<std::unique_ptr<OpKernel>> CreateConstantOfShape(const NodeInfo& node) {
  Tensor value = Tensor::Scalar<float>(0.0f);
  if (node.has_attr("value")) {
    NUPHAR_ASSIGN_OR_RETURN(value, node.GetTensor("value"));
    if (value.size() != 1) return node.Error("attribute 'value' must have exactly one element");
  }
  return MakeKernel<ConstantOfShapeKernel>(std::move(value));
}

Expected<std::unique_ptr<OpKernel>> CreateRange(const NodeInfo& node) { return MakeKernel<RangeKernel>(); }

Expected<std::unique_ptr<OpKernel>> CreateEyeLike(const NodeInfo& node) {
  DType dtype = DType::kUndefined;
  if (node.has_attr("dtype")) {
    dtype = static_cast<DType>(node.GetInt("dtype", 0));
    if (!IsNumeric(dtype) || dtype == DType::kBfloat16 || dtype == DType::kComplex64 || dtype == DType::kComplex128)
      return node.Error(std::string("dtype ") + DTypeName(dtype) + " is not supported");
  }
  return MakeKernel<EyeLikeKernel>(dtype, node.GetInt("k", 0));
}

Expected<std::unique_ptr<OpKernel>> CreateOneHot(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 2));
  return MakeKernel<OneHotKernel>(node.GetInt("axis", -1));
}

Expected<std::unique_ptr<OpKernel>> CreateTrilu(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  return MakeKernel<TriluKernel>(node.GetInt("upper", 1) != 0);
}

Expected<std::unique_ptr<OpKernel>> CreateReverseSequence(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const int64_t time_axis = node.GetInt("time_axis", 0), batch_axis = node.GetInt("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    return node.Error("time_axis and batch_axis must be 0 and 1 in some order");
  return MakeKernel<ReverseSequenceKernel>(time_axis, batch_axis);
}

}  // namespace

void RegisterGenerateKernels(KernelRegistry& r) {
  r.Add("", "ConstantOfShape", CreateConstantOfShape);
  r.Add("", "Range", CreateRange);
  r.Add("", "EyeLike", CreateEyeLike);
  r.Add("", "OneHot", CreateOneHot);
  r.Add("", "Trilu", CreateTrilu);
  r.Add("", "ReverseSequence", CreateReverseSequence);
}

}  // namespace nuphar::tensor_kernels
