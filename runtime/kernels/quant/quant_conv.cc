// ConvInteger (u8/s8 x u8/s8 -> int32, zero points) and QLinearConv (requantized u8/s8 output,
// per-output-channel weight scale/zero point): im2col of (x - x_zero_point) + the integer GEMM.
#include <cmath>
#include <string>

#include "runtime/kernels/nn/nn_conv_geometry.h"
#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_scratch.h"
#include "runtime/kernels/quant/quant_igemm.h"
#include "runtime/kernels/quant/quant_kernels.h"
#include "runtime/kernels/quant/quant_util.h"

namespace nuphar {
namespace {

int32_t ScalarAsInt32(const Tensor* t) {
  if (!t || t->size() == 0) return 0;
  return t->dtype() == DType::kUint8 ? t->data<uint8_t>()[0] : t->data<int8_t>()[0];
}

// The shared integer convolution: y[N, M, out...] (int32) from x [N, C, in...] and w [M, C/g, k...].
class IntegerConv {
 public:
  explicit IntegerConv(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  /// Validates shapes and computes the geometry; fills the output shape.
  Expected<WindowGeometry> Plan(const Tensor& x, const Tensor& w, std::vector<int64_t>* out_shape) const {
    if (x.rank() < 3 || w.rank() != x.rank() || x.dim(1) != w.dim(1) * attrs_.group || w.dim(0) % attrs_.group != 0)
      return Diag::Msg("integer conv shapes do not fit: X " + ShapeToString(x.shape()) + ", W " + ShapeToString(w.shape()));
    const std::span<const int64_t> xs(x.shape()), ws(w.shape());
    NUPHAR_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindowGeometry(attrs_, xs.subspan(2), ws.subspan(2)));
    *out_shape = {x.dim(0), w.dim(0)};
    for (int i = 0; i < g.rank; ++i) out_shape->push_back(g.out[static_cast<size_t>(i)]);
    return g;
  }

  /// w_zero: null, one value, or one per output channel (w_zero_per_channel).
  Status Run(const Tensor& x, const Tensor& w, const WindowGeometry& g, int32_t x_zero, const int32_t* w_zero,
             bool w_zero_per_channel, int32_t* y) const {
    if ((x.dtype() != DType::kUint8 && x.dtype() != DType::kInt8) || (w.dtype() != DType::kUint8 && w.dtype() != DType::kInt8))
      return Diag::Msg(std::string("integer conv of ") + DTypeName(x.dtype()) + " x " + DTypeName(w.dtype()) + " is not supported");
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), G = attrs_.group;
    const int64_t Cg = C / G, Mg = M / G, ck = Cg * g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
    int32_t* col = ScratchBuffer<int32_t>(static_cast<size_t>(ck * out_size), 0);
    auto run = [&]<class TX, class TW>() {
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t grp = 0; grp < G; ++grp) {
          Im2Col<TX, int32_t>(x.data<TX>() + (n * C + grp * Cg) * in_size, Cg, g, x_zero, col);
          IntegerZeroPoints zp;
          zp.a = w_zero ? w_zero + (w_zero_per_channel ? grp * Mg : 0) : nullptr;
          zp.a_per_row = w_zero_per_channel;
          IntegerGemm<TW, int32_t>(Mg, out_size, ck, w.data<TW>() + grp * Mg * ck, ck, col, out_size, zp,
                                   y + (n * M + grp * Mg) * out_size, out_size);
        }
      }
      return Status::OK();
    };
    const bool xu = x.dtype() == DType::kUint8, wu = w.dtype() == DType::kUint8;
    if (xu) return wu ? run.template operator()<uint8_t, uint8_t>() : run.template operator()<uint8_t, int8_t>();
    return wu ? run.template operator()<int8_t, uint8_t>() : run.template operator()<int8_t, int8_t>();
  }

 private:
  WindowAttrs attrs_;
};

// The weight zero point widened to int32: scalar or one per output channel.
Expected<const int32_t*> WidenWeightZero(const Tensor* zp, int64_t M, bool* per_channel) {
  *per_channel = false;
  if (!zp || zp->size() == 0) return static_cast<const int32_t*>(nullptr);
  if (zp->size() != 1 && zp->size() != M)
    return Diag::Msg("w_zero_point must be a scalar or have one value per output channel");
  *per_channel = zp->size() != 1;
  int32_t* buf = ScratchBuffer<int32_t>(static_cast<size_t>(zp->size()), 1);
  for (int64_t i = 0; i < zp->size(); ++i)
    buf[i] = zp->dtype() == DType::kUint8 ? zp->data<uint8_t>()[i] : zp->data<int8_t>()[i];
  return static_cast<const int32_t*>(buf);
}

class ConvIntegerKernel final : public OpKernel {
 public:
  explicit ConvIntegerKernel(WindowAttrs attrs) : conv_(std::move(attrs)) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    if (!x || !w) return Diag::Msg("ConvInteger needs x and w");
    if (const Tensor* xz = ctx.input(2); xz && xz->size() != 1) return Diag::Msg("ConvInteger x_zero_point must be a scalar");
    std::vector<int64_t> out_shape;
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, conv_.Plan(*x, *w, &out_shape));
    bool per_channel = false;
    NUPHAR_ASSIGN_OR_RETURN(const int32_t* wz, WidenWeightZero(ctx.input(3), w->dim(0), &per_channel));
    int32_t* y = ctx.Output(0, DType::kInt32, out_shape)->data<int32_t>();
    return conv_.Run(*x, *w, g, ScalarAsInt32(ctx.input(2)), wz, per_channel, y);
  }

 private:
  IntegerConv conv_;
};

Expected<std::unique_ptr<OpKernel>> CreateConvInteger(const NodeInfo& node) {
  for (size_t i = 0; i < 4; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kUint8, DType::kInt8))
      return node.Error(std::string("ConvInteger on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  return MakeKernel<ConvIntegerKernel>(std::move(attrs));
}

// QLinearConv: y = saturate(round((acc + B[m]) * x_scale * w_scale[m] / y_scale) + y_zero_point).
class QLinearConvKernel final : public OpKernel {
 public:
  explicit QLinearConvKernel(WindowAttrs attrs) : conv_(std::move(attrs)) {}
  Status Compute(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (!ctx.input(i)) return Diag::Msg("QLinearConv needs inputs 0..7");
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(3);
    const Tensor *x_scale = ctx.input(1), *w_scale = ctx.input(4), *y_scale = ctx.input(6), *y_zp = ctx.input(7);
    const Tensor* bias = ctx.input(8);
    if (x_scale->size() != 1 || ctx.input(2)->size() != 1 || y_scale->size() != 1 || y_zp->size() != 1)
      return Diag::Msg("QLinearConv x/y scales and zero points must be scalars");
    for (const Tensor* sc : {x_scale, w_scale, y_scale})
      if (sc->dtype() != DType::kFloat) return Diag::Msg("QLinearConv scales must be float");
    std::vector<int64_t> out_shape;
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, conv_.Plan(x, w, &out_shape));
    const int64_t M = w.dim(0);
    NUPHAR_ASSIGN_OR_RETURN(const PerAxisParam ws, ReadPerAxisParam(w_scale, M, "w_scale"));
    if (bias && (bias->dtype() != DType::kInt32 || bias->size() != M))
      return Diag::Msg("QLinearConv B must be int32 with one value per output channel");
    bool per_channel = false;
    NUPHAR_ASSIGN_OR_RETURN(const int32_t* wz, WidenWeightZero(ctx.input(5), M, &per_channel));
    const int64_t out_size = g.out_size(), total = x.dim(0) * M * out_size;
    int32_t* acc = ScratchBuffer<int32_t>(static_cast<size_t>(total), 2);
    NUPHAR_RETURN_IF_ERROR(conv_.Run(x, w, g, ScalarAsInt32(ctx.input(2)), wz, per_channel, acc));
    Tensor* y = ctx.Output(0, y_zp->dtype(), out_shape);
    const float xs = x_scale->data<float>()[0], ys = y_scale->data<float>()[0];
    auto requantize = [&]<class Q>() {
      const float zero = static_cast<float>(y_zp->data<Q>()[0]);
      for (int64_t p = 0; p < x.dim(0) * M; ++p) {
        const int64_t m = p % M;
        const float multiplier = xs * w_scale->data<float>()[ws.count == 1 ? 0 : m] / ys;
        const int32_t b = bias ? bias->data<int32_t>()[m] : 0;
        for (int64_t i = p * out_size; i < (p + 1) * out_size; ++i)
          y->data<Q>()[i] = SaturateRound<Q>(std::nearbyint(static_cast<float>(acc[i] + b) * multiplier) + zero);
      }
      return Status::OK();
    };
    if (y_zp->dtype() == DType::kUint8) return requantize.template operator()<uint8_t>();
    if (y_zp->dtype() == DType::kInt8) return requantize.template operator()<int8_t>();
    return UnsupportedDType(y_zp->dtype());
  }

 private:
  IntegerConv conv_;
};

Expected<std::unique_ptr<OpKernel>> CreateQLinearConv(const NodeInfo& node) {
  for (size_t i : {0, 2, 3, 5, 7})
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kUint8, DType::kInt8))
      return node.Error(std::string("QLinearConv on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  return MakeKernel<QLinearConvKernel>(std::move(attrs));
}

}  // namespace

void RegisterQuantConvKernels(KernelRegistry& r) {
  r.Add("", "ConvInteger", CreateConvInteger);
  r.Add("", "QLinearConv", CreateQLinearConv);
}

}  // namespace nuphar
