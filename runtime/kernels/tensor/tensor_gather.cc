// Index-driven reads: Gather, GatherElements, GatherND, and the selections Compress and
// NonZero. Negative indices count from the end; out-of-range indices are run-time errors.
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

int64_t Product(std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// Gather: out = data[:axis] ++ indices.shape ++ data[axis+1:]; each index picks a block.
class GatherKernel final : public OpKernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return Diag::Msg("inputs 'data' and 'indices' are required");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*indices, "indices"));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, data->rank()));
    const std::span<const int64_t> dshape(data->shape());
    std::vector<int64_t> out_shape(dshape.begin(), dshape.begin() + axis);
    out_shape.insert(out_shape.end(), indices->shape().begin(), indices->shape().end());
    out_shape.insert(out_shape.end(), dshape.begin() + axis + 1, dshape.end());
    Tensor* y = ctx.Output(0, data->dtype(), out_shape);

    const int64_t outer = Product(dshape.first(static_cast<size_t>(axis)));
    const int64_t dim = data->dim(axis);
    const size_t block = static_cast<size_t>(Product(dshape.subspan(static_cast<size_t>(axis) + 1))) *
                         DTypeSize(data->dtype());
    const int64_t n = indices->size();
    const auto* src = static_cast<const char*>(data->raw());
    auto* dst = static_cast<char*>(y->raw());
    for (int64_t j = 0; j < n; ++j) {  // validate once, not per outer block
      int64_t idx = LoadIndex(*indices, j);
      NUPHAR_RETURN_IF_ERROR(ResolveIndex(idx, dim));
    }
    for (int64_t o = 0; o < outer; ++o) {
      const char* slab = src + static_cast<size_t>(o * dim) * block;
      for (int64_t j = 0; j < n; ++j) {
        int64_t idx = LoadIndex(*indices, j);
        if (idx < 0) idx += dim;
        std::memcpy(dst, slab + static_cast<size_t>(idx) * block, block);
        dst += block;
      }
    }
    return Status::OK();
  }

 private:
  int64_t axis_;
};

// GatherElements: out[i] = data[i with coordinate `axis` replaced by indices[i]].
class GatherElementsKernel final : public OpKernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return Diag::Msg("inputs 'data' and 'indices' are required");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*indices, "indices"));
    if (data->rank() != indices->rank() || data->rank() == 0)
      return Diag::Msg("data " + ShapeToString(data->shape()) + " and indices " + ShapeToString(indices->shape()) +
                       " must have the same non-zero rank");
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, data->rank()));
    for (int64_t k = 0; k < data->rank(); ++k)
      if (k != axis && indices->dim(k) > data->dim(k))
        return Diag::Msg("indices " + ShapeToString(indices->shape()) + " exceed data " +
                         ShapeToString(data->shape()) + " outside the axis");
    Tensor* y = ctx.Output(0, data->dtype(), indices->shape());
    if (y->size() == 0) return Status::OK();
    Status status;
    VisitWidth(DTypeSize(data->dtype()), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data->data<T>();
      T* dst = y->data<T>();
      status = ForEachAxisIndex(*indices, data->shape(), axis, [&](int64_t i, int64_t offset) { dst[i] = src[offset]; });
    });
    return status;
  }

 private:
  int64_t axis_;
};

// GatherND with batch_dims: each index tuple (last dim of indices) picks a slice of data.
class GatherNDKernel final : public OpKernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : batch_dims_(batch_dims) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return Diag::Msg("inputs 'data' and 'indices' are required");
    NUPHAR_RETURN_IF_ERROR(CheckIndexTensor(*indices, "indices"));
    const int64_t b = batch_dims_, r = data->rank(), q = indices->rank();
    if (q < 1 || b >= q || b >= r) return Diag::Msg("batch_dims must be less than both input ranks");
    const int64_t m = indices->dim(q - 1);
    if (m < 1 || m > r - b)
      return Diag::Msg("indices tuples of length " + std::to_string(m) + " do not fit data " +
                       ShapeToString(data->shape()) + " with batch_dims " + std::to_string(b));
    for (int64_t k = 0; k < b; ++k)
      if (data->dim(k) != indices->dim(k)) return Diag::Msg("batch dims of data and indices differ");
    std::vector<int64_t> out_shape(indices->shape().begin(), indices->shape().end() - 1);
    out_shape.insert(out_shape.end(), data->shape().begin() + b + m, data->shape().end());
    Tensor* y = ctx.Output(0, data->dtype(), out_shape);

    const std::vector<int64_t> dstrides = ContiguousStrides(data->shape());
    const size_t elem = DTypeSize(data->dtype());
    const int64_t batches = Product(std::span(data->shape()).first(static_cast<size_t>(b)));
    const int64_t tuples_per_batch = batches == 0 ? 0 : indices->size() / m / batches;
    const size_t slice = static_cast<size_t>(b + m < r ? dstrides[static_cast<size_t>(b + m - 1)] : 1) * elem;
    const int64_t batch_stride = b > 0 ? dstrides[static_cast<size_t>(b - 1)] : 0;
    const auto* src = static_cast<const char*>(data->raw());
    auto* dst = static_cast<char*>(y->raw());
    int64_t t = 0;  // running index into indices
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t j = 0; j < tuples_per_batch; ++j) {
        int64_t off = bi * batch_stride;
        for (int64_t c = 0; c < m; ++c, ++t) {
          int64_t idx = LoadIndex(*indices, t);
          NUPHAR_RETURN_IF_ERROR(ResolveIndex(idx, data->dim(b + c)));
          off += idx * dstrides[static_cast<size_t>(b + c)];
        }
        std::memcpy(dst, src + static_cast<size_t>(off) * elem, slice);
        dst += slice;
      }
    }
    return Status::OK();
  }

 private:
  int64_t batch_dims_;
};

// Compress: keeps the slices along `axis` (or the flattened elements) whose condition is true;
// a condition shorter than the dim drops the rest.
class CompressKernel final : public OpKernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    if (!x || !cond) return Diag::Msg("inputs 'input' and 'condition' are required");
    if (cond->dtype() != DType::kBool || cond->rank() != 1) return Diag::Msg("condition must be a 1-D bool tensor");
    int64_t axis = 0, outer = 1, dim = x->size(), inner = 1;
    if (has_axis_) {
      NUPHAR_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis_, x->rank()));
      dim = x->dim(axis);
      outer = Product(std::span(x->shape()).first(static_cast<size_t>(axis)));
      inner = Product(std::span(x->shape()).subspan(static_cast<size_t>(axis) + 1));
    }
    const int64_t n = std::min(dim, cond->size());
    const auto* keep = cond->data<uint8_t>();
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) kept += keep[i] != 0;
    std::vector<int64_t> out_shape{kept};
    if (has_axis_) {
      out_shape = x->shape();
      out_shape[static_cast<size_t>(axis)] = kept;
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    const size_t block = static_cast<size_t>(inner) * DTypeSize(x->dtype());
    const auto* src = static_cast<const char*>(x->raw());
    auto* dst = static_cast<char*>(y->raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < n; ++i)
        if (keep[i]) {
          std::memcpy(dst, src + static_cast<size_t>(o * dim + i) * block, block);
          dst += block;
        }
    return Status::OK();
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// NonZero: int64 [rank, count] coordinates of the non-zero elements in row-major order
// (a scalar counts as rank 1). Floats compare by value, so -0.0 is zero.
class NonZeroKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    std::vector<int64_t> shape = x->shape();
    if (shape.empty()) shape.push_back(1);
    const int64_t n = x->size(), rank = static_cast<int64_t>(shape.size());
    auto visit = [&](auto is_nonzero) -> Status {
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) count += is_nonzero(i);
      Tensor* y = ctx.Output(0, DType::kInt64, std::vector<int64_t>{rank, count});
      int64_t* out = y->data<int64_t>();
      std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
      for (int64_t i = 0, c = 0; i < n; ++i) {
        if (is_nonzero(i)) {
          for (int64_t k = 0; k < rank; ++k) out[k * count + c] = coord[static_cast<size_t>(k)];
          ++c;
        }
        for (int64_t k = rank; k-- > 0;) {
          if (++coord[static_cast<size_t>(k)] < shape[static_cast<size_t>(k)]) break;
          coord[static_cast<size_t>(k)] = 0;
        }
      }
      return Status::OK();
    };
    if (x->dtype() == DType::kFloat16 || x->dtype() == DType::kBfloat16) {
      const uint16_t* v = x->data<uint16_t>();
      return visit([v](int64_t i) { return (v[i] & 0x7fff) != 0; });
    }
    return VisitNumeric(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* v = x->data<T>();
      return visit([v](int64_t i) { return v[i] != T{}; });
    });
  }
};

Expected<std::unique_ptr<OpKernel>> CreateGather(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  NUPHAR_RETURN_IF_ERROR(CheckIndexInput(node, 1));
  return MakeKernel<GatherKernel>(node.GetInt("axis", 0));
}

Expected<std::unique_ptr<OpKernel>> CreateGatherElements(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  NUPHAR_RETURN_IF_ERROR(CheckIndexInput(node, 1));
  return MakeKernel<GatherElementsKernel>(node.GetInt("axis", 0));
}

Expected<std::unique_ptr<OpKernel>> CreateGatherND(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  if (node.input_type(1) != DType::kUndefined && node.input_type(1) != DType::kInt64)
    return node.Error("indices must be int64");
  const int64_t b = node.GetInt("batch_dims", 0);
  if (b < 0) return node.Error("batch_dims must be non-negative");
  return MakeKernel<GatherNDKernel>(b);
}

Expected<std::unique_ptr<OpKernel>> CreateCompress(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  return MakeKernel<CompressKernel>(node.has_attr("axis"), node.GetInt("axis", 0));
}

Expected<std::unique_ptr<OpKernel>> CreateNonZero(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  return MakeKernel<NonZeroKernel>();
}

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Add("", "Gather", CreateGather);
  r.Add("", "GatherElements", CreateGatherElements);
  r.Add("", "GatherND", CreateGatherND);
  r.Add("", "Compress", CreateCompress);
  r.Add("", "NonZero", CreateNonZero);
}

}  // namespace nuphar::tensor_kernels
