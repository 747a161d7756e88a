// Pooling: MaxPool (Indices output, dilations, ceil_mode, storage_order, pads, auto_pad),
// AveragePool (count_include_pad, ceil_mode, dilations from opset 19), LpPool (p; ceil_mode and
// dilations from opset 18), GlobalAveragePool and GlobalMaxPool.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/kernels/conv/conv.h"
#include "runtime/kernels/nn/nn_conv_geometry.h"
#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"

namespace nuphar {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

class PoolKernel final : public OpKernel {
 public:
  PoolKernel(PoolKind kind, WindowAttrs attrs, bool count_include_pad, bool column_major_indices, int64_t p = 2)
      : kind_(kind), attrs_(std::move(attrs)), count_include_pad_(count_include_pad),
        column_major_indices_(column_major_indices), p_(p) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("pooling needs input X");
    if (x->rank() < 3) return Diag::Msg("pooling needs X of rank >= 3, got " + ShapeToString(x->shape()));
    const std::span<const int64_t> xs(x->shape());
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, ComputeWindowGeometry(attrs_, xs.subspan(2), attrs_.kernel_shape));
    std::array<int64_t, WindowAttrs::kMaxSpatial + 2> out_shape{x->dim(0), x->dim(1)};
    for (int i = 0; i < g.rank; ++i) out_shape[static_cast<size_t>(i) + 2] = g.out[static_cast<size_t>(i)];
    const std::span<const int64_t> ys(out_shape.data(), static_cast<size_t>(g.rank) + 2);
    Tensor* y = ctx.Output(0, x->dtype(), ys);
    int64_t* indices = ctx.output_needed(1) ? ctx.Output(1, DType::kInt64, ys)->data<int64_t>() : nullptr;
    // Float 1-D/2-D max or average windows without Indices or dilation: the conv family's
    // per-ISA plane kernel (LpPool stays here).
    if (x->dtype() == DType::kFloat && !indices && kind_ != PoolKind::kLp &&
        PoolFloat(x->data<float>(), x->dim(0) * x->dim(1), g, kind_ == PoolKind::kMax, count_include_pad_,
                  y->data<float>()))
      return Status::OK();
    if (kind_ != PoolKind::kMax) {
      return DispatchFloating(x->dtype(), [&]<class T>() {
        Run<T>(*x, g, y->data<T>(), nullptr);
        return Status::OK();
      });
    }
    return DispatchNumeric(x->dtype(), [&]<class T>() {
      Run<T>(*x, g, y->data<T>(), indices);
      return Status::OK();
    });
  }

 private:
  template <class T>
  void Run(const Tensor& x, const WindowGeometry& g, T* y, int64_t* indices) const {
    const size_t r = static_cast<size_t>(g.rank);
    const int64_t planes = x.dim(0) * x.dim(1), in_size = g.in_size(), out_size = g.out_size();
    const int64_t window = g.kernel_size();
    // Strides of the spatial dims inside a plane, row-major and (for Indices) column-major.
    std::array<int64_t, WindowAttrs::kMaxSpatial> row_stride{}, col_stride{};
    for (size_t i = r, s = 1; i-- > 0;) row_stride[i] = static_cast<int64_t>(s), s *= static_cast<size_t>(g.in[i]);
    for (size_t i = 0, s = 1; i < r; ++i) col_stride[i] = static_cast<int64_t>(s), s *= static_cast<size_t>(g.in[i]);
    std::array<int64_t, WindowAttrs::kMaxSpatial> opos{}, kpos{}, start{};
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T* xp = x.data<T>() + plane * in_size;
      opos.fill(0);
      for (int64_t o = 0; o < out_size; ++o) {
        for (size_t i = 0; i < r; ++i) start[i] = opos[i] * g.stride[i] - g.pad_begin[i];
        kpos.fill(0);
        double sum = 0;
        T best = std::numeric_limits<T>::lowest();
        int64_t best_row = -1, best_col = -1, counted = 0, counted_with_pad = 0;
        for (int64_t k = 0; k < window; ++k) {
          bool inside = true, inside_padded = true;
          int64_t row = 0, colm = 0;
          for (size_t i = 0; i < r; ++i) {
            const int64_t p = start[i] + kpos[i] * g.dilation[i];
            if (p < 0 || p >= g.in[i]) inside = false;
            if (p >= g.in[i] + g.pad_end[i]) inside_padded = false;
            row += p * row_stride[i];
            colm += p * col_stride[i];
          }
          if (inside_padded) ++counted_with_pad;
          if (inside) {
            const T v = xp[row];
            ++counted;
            sum += kind_ == PoolKind::kLp ? std::pow(std::abs(static_cast<double>(v)), static_cast<double>(p_))
                                          : static_cast<double>(v);
            if (best_row < 0 || v > best) best = v, best_row = row, best_col = colm;
          }
          for (size_t i = r; i-- > 0;) {
            if (++kpos[i] < g.kernel[i]) break;
            kpos[i] = 0;
          }
        }
        T* out = y + plane * out_size + o;
        if (kind_ == PoolKind::kMax) {
          *out = best;
          if (indices) indices[plane * out_size + o] = plane * in_size + (column_major_indices_ ? best_col : best_row);
        } else if (kind_ == PoolKind::kLp) {
          *out = static_cast<T>(std::pow(sum, 1.0 / static_cast<double>(p_)));
        } else {
          const int64_t divisor = count_include_pad_ ? counted_with_pad : counted;
          *out = divisor > 0 ? static_cast<T>(sum / static_cast<double>(divisor)) : T(0);
        }
        for (size_t i = r; i-- > 0;) {
          if (++opos[i] < g.out[i]) break;
          opos[i] = 0;
        }
      }
    }
  }

  PoolKind kind_;
  WindowAttrs attrs_;
  bool count_include_pad_;
  bool column_major_indices_;
  int64_t p_;
};

Expected<std::unique_ptr<OpKernel>> CreatePool(const NodeInfo& node) {
  const bool is_max = node.op_type() == "MaxPool";
  const bool is_lp = node.op_type() == "LpPool";
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  if (attrs.kernel_shape.empty()) return node.Error("kernel_shape is required");
  const int dilations_since = is_lp ? 18 : 19;
  if (!is_max && node.opset() < dilations_since && !attrs.dilations.empty() &&
      std::any_of(attrs.dilations.begin(), attrs.dilations.end(), [](int64_t d) { return d != 1; }))
    return node.Error(node.op_type() + " has dilations only from opset " + std::to_string(dilations_since));
  const DType t = node.input_type(0);
  if (is_max ? !DeclaredTypeIsOneOf(t, DType::kFloat, DType::kDouble, DType::kInt8, DType::kUint8)
             : !DeclaredTypeIsOneOf(t, DType::kFloat, DType::kDouble))
    return node.Error(node.op_type() + " on " + DTypeName(t) + " is not supported");
  const int64_t storage_order = node.GetInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) return node.Error("storage_order must be 0 or 1");
  const int64_t p = node.GetInt("p", 2);
  if (is_lp && p <= 0) return node.Error("LpPool p must be positive");
  return MakeKernel<PoolKernel>(is_max ? PoolKind::kMax : (is_lp ? PoolKind::kLp : PoolKind::kAverage), std::move(attrs),
                                node.GetInt("count_include_pad", 0) != 0, storage_order == 1, p);
}

// GlobalAveragePool / GlobalMaxPool: one value per (n, c) plane, spatial dims kept as 1.
class GlobalPoolKernel final : public OpKernel {
 public:
  explicit GlobalPoolKernel(PoolKind kind) : kind_(kind) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("pooling needs input X");
    if (x->rank() < 2) return Diag::Msg("global pooling needs X of rank >= 2, got " + ShapeToString(x->shape()));
    std::vector<int64_t> shape = x->shape();
    std::fill(shape.begin() + 2, shape.end(), 1);
    Tensor* y = ctx.Output(0, x->dtype(), shape);
    const int64_t planes = x->dim(0) * x->dim(1);
    const int64_t size = planes > 0 ? x->size() / planes : 0;
    return DispatchFloating(x->dtype(), [&]<class T>() {
      for (int64_t p = 0; p < planes; ++p) {
        const T* xp = x->data<T>() + p * size;
        if (kind_ == PoolKind::kMax) {
          y->data<T>()[p] = size > 0 ? *std::max_element(xp, xp + size) : T(0);
        } else {
          double sum = 0;
          for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(xp[i]);
          y->data<T>()[p] = size > 0 ? static_cast<T>(sum / static_cast<double>(size)) : T(0);
        }
      }
      return Status::OK();
    });
  }

 private:
  PoolKind kind_;
};

Expected<std::unique_ptr<OpKernel>> CreateGlobalPool(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(node.op_type() + " on " + DTypeName(node.input_type(0)) + " is not supported");
  return MakeKernel<GlobalPoolKernel>(node.op_type() == "GlobalMaxPool" ? PoolKind::kMax : PoolKind::kAverage);
}

}  // namespace

void RegisterPoolKernels(KernelRegistry& r) {
  r.Add("", "MaxPool", CreatePool);
  r.Add("", "AveragePool", CreatePool);
  r.Add("", "LpPool", CreatePool);
  r.Add("", "GlobalAveragePool", CreateGlobalPool);
  r.Add("", "GlobalMaxPool", CreateGlobalPool);
}

}  // namespace nuphar
