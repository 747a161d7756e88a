// QuantizeLinear (opset 10/13: per-tensor or per-axis, round half to even, saturate),
// DequantizeLinear (per-tensor or per-axis) and DynamicQuantizeLinear (uint8, ONNX formula).
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/quant/quant_kernels.h"
#include "runtime/kernels/quant/quant_util.h"

namespace nuphar {
namespace {

// Runs `body(index_range_begin, count, param_index)` over x's elements grouped by their
// coordinate along the quantization axis (a single group for per-tensor parameters).
template <class F>
void ForEachAxisRun(int64_t outer, int64_t extent, int64_t inner, bool per_axis, F&& body) {
  if (!per_axis) {
    body(0, outer * extent * inner, 0);
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < extent; ++a) body((o * extent + a) * inner, inner, a);
}

class QuantizeLinearKernel final : public OpKernel {
 public:
  QuantizeLinearKernel(int64_t axis, DType default_out) : axis_(axis), default_out_(default_out) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (!x || !scale) return Diag::Msg("QuantizeLinear needs x and y_scale");
    if (scale->dtype() != DType::kFloat) return Diag::Msg("QuantizeLinear y_scale must be float");
    int64_t outer = 1, extent = 1, inner = 1;
    const bool per_axis = scale->size() != 1;
    if (per_axis) NUPHAR_RETURN_IF_ERROR(SplitAroundAxis(x->shape(), axis_, &outer, &extent, &inner));
    NUPHAR_ASSIGN_OR_RETURN(PerAxisParam s, ReadPerAxisParam(scale, per_axis ? extent : 1, "y_scale"));
    NUPHAR_ASSIGN_OR_RETURN(PerAxisParam z, ReadPerAxisParam(zp, per_axis ? extent : 1, "y_zero_point"));
    if (!per_axis) outer = x->size();
    const DType out_type = zp ? zp->dtype() : default_out_;
    Tensor* y = ctx.Output(0, out_type, x->shape());
    // x is float or int32 (converted to float, as the spec's division implies).
    auto run = [&]<class X, class Q>() {
      ForEachAxisRun(outer, extent, inner, per_axis, [&](int64_t begin, int64_t count, int64_t a) {
        const float sc = scale->data<float>()[s.count == 1 ? 0 : a];
        const float zero = zp ? static_cast<float>(zp->data<Q>()[z.count == 1 ? 0 : a]) : 0.0f;
        const X* px = x->data<X>();
        Q* py = y->data<Q>();
        for (int64_t i = begin; i < begin + count; ++i)
          py[i] = SaturateRound<Q>(std::nearbyint(static_cast<float>(px[i]) / sc) + zero);
      });
      return Status::OK();
    };
    const bool x_float = x->dtype() == DType::kFloat;
    if (!x_float && x->dtype() != DType::kInt32)
      return Diag::Msg(std::string("QuantizeLinear input of type ") + DTypeName(x->dtype()) + " is not supported");
    switch (out_type) {
      case DType::kUint8:
        return x_float ? run.template operator()<float, uint8_t>() : run.template operator()<int32_t, uint8_t>();
      case DType::kInt8:
        return x_float ? run.template operator()<float, int8_t>() : run.template operator()<int32_t, int8_t>();
      default: return UnsupportedDType(out_type);
    }
  }

 private:
  int64_t axis_;
  DType default_out_;
};

Expected<std::unique_ptr<OpKernel>> CreateQuantizeLinear(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kInt32))
    return node.Error(std::string("QuantizeLinear on ") + DTypeName(node.input_type(0)) + " is not supported");
  if (!DeclaredTypeIsOneOf(node.input_type(2), DType::kUint8, DType::kInt8))
    return node.Error(std::string("QuantizeLinear to ") + DTypeName(node.input_type(2)) + " is not supported");
  if (node.GetInt("block_size", 0) != 0) return node.Error("QuantizeLinear-21 blocked quantization (block_size) is not supported");
  // QuantizeLinear-21's output_dtype gives the type when the zero point is absent.
  const int64_t output_dtype = node.GetInt("output_dtype", 0);
  if (output_dtype != 0 && output_dtype != static_cast<int64_t>(DType::kUint8) && output_dtype != static_cast<int64_t>(DType::kInt8))
    return node.Error("QuantizeLinear-21 output_dtype " + std::to_string(output_dtype) + " is not supported (uint8, int8)");
  return MakeKernel<QuantizeLinearKernel>(node.opset() >= 13 ? node.GetInt("axis", 1) : 1,
                                          output_dtype == 0 ? DType::kUint8 : static_cast<DType>(output_dtype));
}

class DequantizeLinearKernel final : public OpKernel {
 public:
  explicit DequantizeLinearKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (!x || !scale) return Diag::Msg("DequantizeLinear needs x and x_scale");
    if (scale->dtype() != DType::kFloat) return Diag::Msg("DequantizeLinear x_scale must be float");
    if (zp && zp->dtype() != x->dtype()) return Diag::Msg("DequantizeLinear x_zero_point must have x's element type");
    int64_t outer = 1, extent = 1, inner = 1;
    const bool per_axis = scale->size() != 1;
    if (per_axis) NUPHAR_RETURN_IF_ERROR(SplitAroundAxis(x->shape(), axis_, &outer, &extent, &inner));
    NUPHAR_ASSIGN_OR_RETURN(PerAxisParam s, ReadPerAxisParam(scale, per_axis ? extent : 1, "x_scale"));
    NUPHAR_ASSIGN_OR_RETURN(PerAxisParam z, ReadPerAxisParam(zp, per_axis ? extent : 1, "x_zero_point"));
    if (!per_axis) outer = x->size();
    Tensor* y = ctx.Output(0, DType::kFloat, x->shape());
    auto run = [&]<class Q>() {
      ForEachAxisRun(outer, extent, inner, per_axis, [&](int64_t begin, int64_t count, int64_t a) {
        const float sc = scale->data<float>()[s.count == 1 ? 0 : a];
        const int64_t zero = zp ? static_cast<int64_t>(zp->data<Q>()[z.count == 1 ? 0 : a]) : 0;
        for (int64_t i = begin; i < begin + count; ++i)
          y->data<float>()[i] = static_cast<float>(static_cast<int64_t>(x->data<Q>()[i]) - zero) * sc;
      });
      return Status::OK();
    };
    switch (x->dtype()) {
      case DType::kUint8: return run.template operator()<uint8_t>();
      case DType::kInt8: return run.template operator()<int8_t>();
      case DType::kInt32: return run.template operator()<int32_t>();
      default: return UnsupportedDType(x->dtype());
    }
  }

 private:
  int64_t axis_;
};

Expected<std::unique_ptr<OpKernel>> CreateDequantizeLinear(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kUint8, DType::kInt8, DType::kInt32))
    return node.Error(std::string("DequantizeLinear on ") + DTypeName(node.input_type(0)) + " is not supported");
  if (node.GetInt("block_size", 0) != 0) return node.Error("DequantizeLinear-21 blocked quantization (block_size) is not supported");
  return MakeKernel<DequantizeLinearKernel>(node.opset() >= 13 ? node.GetInt("axis", 1) : 1);
}

// DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255,
// zero_point = saturate(round(-min / scale)), y = saturate(round(x / scale) + zero_point).
class DynamicQuantizeLinearKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("DynamicQuantizeLinear needs input x");
    if (x->dtype() != DType::kFloat) return Diag::Msg("DynamicQuantizeLinear input must be float");
    const float* px = x->data<float>();
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < x->size(); ++i) lo = std::min(lo, px[i]), hi = std::max(hi, px[i]);
    const float scale = (hi - lo) / 255.0f;
    // An all-zero input gives scale 0; every value then quantizes to zero point 0.
    const uint8_t zero = scale == 0.0f ? 0 : SaturateRound<uint8_t>((0.0f - lo) / scale);
    uint8_t* py = ctx.Output(0, DType::kUint8, x->shape())->data<uint8_t>();
    for (int64_t i = 0; i < x->size(); ++i)
      py[i] = scale == 0.0f ? zero : SaturateRound<uint8_t>(std::nearbyint(px[i] / scale) + static_cast<float>(zero));
    ctx.Output(1, DType::kFloat, std::span<const int64_t>())->data<float>()[0] = scale;
    ctx.Output(2, DType::kUint8, std::span<const int64_t>())->data<uint8_t>()[0] = zero;
    return Status::OK();
  }
};

Expected<std::unique_ptr<OpKernel>> CreateDynamicQuantizeLinear(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat))
    return node.Error(std::string("DynamicQuantizeLinear on ") + DTypeName(node.input_type(0)) + " is not supported");
  return MakeKernel<DynamicQuantizeLinearKernel>();
}

}  // namespace

void RegisterQuantizeLinearKernels(KernelRegistry& r) {
  r.Add("", "QuantizeLinear", CreateQuantizeLinear);
  r.Add("", "DequantizeLinear", CreateDequantizeLinear);
  r.Add("", "DynamicQuantizeLinear", CreateDynamicQuantizeLinear);
}

}  // namespace nuphar
