// Signal ops of opset 17/20 that speech front ends export (torch.stft, torch.fft): DFT (axis
// as attribute at 17, as input 2 at 20), STFT, the Hann/Hamming/Blackman window generators and
// MelWeightMatrix.
// Reference kernels: a direct O(n^2) transform in double per output bin, which is exact enough
// (1e-5 of ONNX Runtime's FFT) for the frame lengths of speech models (<= 2048).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// Reads a scalar integer input (int32 or int64).
Expected<int64_t> ScalarInt(const KernelContext& ctx, size_t i, const char* what) {
  NUPHAR_ASSIGN_OR_RETURN(const std::vector<int64_t> v, tensor_kernels::InputAsInt64(ctx, i, what));
  if (v.size() != 1) return Diag::Msg(std::string(what) + " must be a scalar");
  return v[0];
}

// One transform of n complex inputs (stride `in_stride` complex elements apart, real-only when
// `complex_in` is false) into `bins` outputs: X[k] = sum_t x[t] * exp(-+2*pi*i*k*t/length),
// scaled by 1/length when inverse. Input beyond n is zero (dft_length > n pads).
template <class T>
void Transform(const T* x, int64_t n, int64_t in_stride, bool complex_in, int64_t length, int64_t bins, bool inverse,
               const T* window, T* y, int64_t out_stride) {
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t used = std::min(n, length);
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < used; ++t) {
      const T* p = x + t * in_stride * (complex_in ? 2 : 1);
      const double w = window ? static_cast<double>(window[t]) : 1.0;
      const double xr = static_cast<double>(p[0]) * w, xi = complex_in ? static_cast<double>(p[1]) * w : 0.0;
      // Reduce k*t modulo length first so the angle stays small and exact for long inputs.
      const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>((k * t) % length) / static_cast<double>(length);
      const double c = std::cos(angle), s = std::sin(angle);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) re /= static_cast<double>(length), im /= static_cast<double>(length);
    y[k * out_stride * 2] = static_cast<T>(re);
    y[k * out_stride * 2 + 1] = static_cast<T>(im);
  }
}

// DFT: X [batch, ..., n, ..., 1|2] -> [batch, ..., bins, ..., 2] along `axis` (a signal axis).
class DftKernel final : public OpKernel {
 public:
  DftKernel(int64_t attr_axis, bool axis_is_input, bool inverse, bool onesided)
      : attr_axis_(attr_axis), axis_is_input_(axis_is_input), inverse_(inverse), onesided_(onesided) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("DFT needs input");
    const int64_t rank = x->rank();
    if (rank < 2 || (x->dim(rank - 1) != 1 && x->dim(rank - 1) != 2))
      return Diag::Msg("DFT input must end in a dim of 1 (real) or 2 (complex), got " + ShapeToString(x->shape()));
    int64_t axis = attr_axis_;
    if (axis_is_input_ && ctx.input(2)) {
      NUPHAR_ASSIGN_OR_RETURN(axis, ScalarInt(ctx, 2, "axis"));
    }
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank - 1) return Diag::Msg("DFT axis " + std::to_string(axis) + " is not a signal axis");
    const int64_t n = x->dim(axis);
    int64_t length = n;
    if (ctx.input(1)) {
      NUPHAR_ASSIGN_OR_RETURN(length, ScalarInt(ctx, 1, "dft_length"));
      if (length <= 0) return Diag::Msg("dft_length must be positive");
    }
    const bool complex_in = x->dim(rank - 1) == 2;
    if (onesided_ && complex_in) return Diag::Msg("onesided DFT needs a real input");
    const int64_t bins = onesided_ ? length / 2 + 1 : length;
    std::vector<int64_t> out_shape = x->shape();
    out_shape[static_cast<size_t>(axis)] = bins;
    out_shape.back() = 2;
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    const int64_t outer = Product(x->shape(), 0, static_cast<size_t>(axis));
    const int64_t inner = Product(x->shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(rank - 1));
    const int64_t in_c = complex_in ? 2 : 1;
    return DispatchFloating(x->dtype(), [&]<class T>() {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          Transform<T>(x->data<T>() + (o * n * inner + i) * in_c, n, inner, complex_in, length, bins, inverse_, nullptr,
                       y->data<T>() + (o * bins * inner + i) * 2, inner);
      return Status::OK();
    });
  }

 private:
  int64_t attr_axis_;
  bool axis_is_input_, inverse_, onesided_;
};

Expected<std::unique_ptr<OpKernel>> CreateDft(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("DFT on ") + DTypeName(node.input_type(0)) + " is not supported");
  const bool axis_is_input = node.opset() >= 20;
  if (axis_is_input && node.has_attr("axis")) return node.Error("DFT-20 takes axis as input 2, not as an attribute");
  return MakeKernel<DftKernel>(axis_is_input ? -2 : node.GetInt("axis", 1), axis_is_input, node.GetInt("inverse", 0) != 0,
                               node.GetInt("onesided", 0) != 0);
}

// STFT: signal [batch, length, 1|2] -> [batch, frames, bins, 2], frames of frame_length every
// frame_step samples, each multiplied by the window.
class StftKernel final : public OpKernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* window = ctx.input(2);
    if (!x || !ctx.input(1)) return Diag::Msg("STFT needs signal and frame_step");
    if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2))
      return Diag::Msg("STFT signal must be [batch, length, 1|2], got " + ShapeToString(x->shape()));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t step, ScalarInt(ctx, 1, "frame_step"));
    int64_t frame = window ? window->size() : -1;
    if (ctx.input(3)) {
      NUPHAR_ASSIGN_OR_RETURN(frame, ScalarInt(ctx, 3, "frame_length"));
    }
    if (frame <= 0 || step <= 0) return Diag::Msg("STFT needs a positive frame_step and a frame_length or window");
    if (window && (window->rank() != 1 || window->size() != frame || window->dtype() != x->dtype()))
      return Diag::Msg("STFT window must be [frame_length] of the signal's type");
    const bool complex_in = x->dim(2) == 2;
    if (onesided_ && complex_in) return Diag::Msg("onesided STFT needs a real signal");
    const int64_t length = x->dim(1);
    if (length < frame) return Diag::Msg("STFT signal is shorter than one frame");
    const int64_t frames = (length - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    Tensor* y = ctx.Output(0, x->dtype(), std::vector<int64_t>{x->dim(0), frames, bins, 2});
    const int64_t in_c = complex_in ? 2 : 1;
    return DispatchFloating(x->dtype(), [&]<class T>() {
      for (int64_t b = 0; b < x->dim(0); ++b)
        for (int64_t f = 0; f < frames; ++f)
          Transform<T>(x->data<T>() + (b * length + f * step) * in_c, frame, 1, complex_in, frame, bins, false,
                       window ? window->data<T>() : nullptr, y->data<T>() + (b * frames + f) * bins * 2, 1);
      return Status::OK();
    });
  }

 private:
  bool onesided_;
};

Expected<std::unique_ptr<OpKernel>> CreateStft(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("STFT on ") + DTypeName(node.input_type(0)) + " is not supported");
  return MakeKernel<StftKernel>(node.GetInt("onesided", 1) != 0);
}

// HannWindow / HammingWindow / BlackmanWindow: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
// N = size (periodic) or size - 1 (symmetric).
class WindowKernel final : public OpKernel {
 public:
  WindowKernel(double a0, double a1, double a2, bool periodic, DType out) : a0_(a0), a1_(a1), a2_(a2), periodic_(periodic), out_(out) {}

  Status Compute(KernelContext& ctx) const override {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t size, ScalarInt(ctx, 0, "size"));
    if (size < 0) return Diag::Msg("window size must be non-negative");
    Tensor* y = ctx.Output(0, out_, std::vector<int64_t>{size});
    const double N = static_cast<double>(periodic_ ? size : size - 1);
    return DispatchFloating(out_, [&]<class T>() {
      for (int64_t i = 0; i < size; ++i) {
        const double t = N > 0 ? 2.0 * std::numbers::pi * static_cast<double>(i) / N : 0.0;
        y->data<T>()[i] = static_cast<T>(a0_ - a1_ * std::cos(t) + a2_ * std::cos(2 * t));
      }
      return Status::OK();
    });
  }

 private:
  double a0_, a1_, a2_;
  bool periodic_;
  DType out_;
};

Expected<std::unique_ptr<OpKernel>> CreateWindow(const NodeInfo& node) {
  const DType out = static_cast<DType>(node.GetInt("output_datatype", static_cast<int64_t>(DType::kFloat)));
  if (out != DType::kFloat && out != DType::kDouble)
    return node.Error(std::string("window output_datatype ") + DTypeName(out) + " is not supported (float, double)");
  const bool periodic = node.GetInt("periodic", 1) != 0;
  const std::string& op = node.op_type();
  if (op == "HannWindow") return MakeKernel<WindowKernel>(0.5, 0.5, 0.0, periodic, out);
  if (op == "HammingWindow") return MakeKernel<WindowKernel>(25.0 / 46.0, 21.0 / 46.0, 0.0, periodic, out);
  return MakeKernel<WindowKernel>(0.42, 0.5, 0.08, periodic, out);  // BlackmanWindow
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters, as the ONNX reference
// computes them: num_mel_bins + 2 points evenly spaced in mel (step over num_mel_bins + 2),
// mapped back to Hz and floored to spectrogram bins ((dft_length + 1) * hz // sample_rate).
class MelWeightMatrixKernel final : public OpKernel {
 public:
  explicit MelWeightMatrixKernel(DType out) : out_(out) {}

  Status Compute(KernelContext& ctx) const override {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t mel_bins, ScalarInt(ctx, 0, "num_mel_bins"));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t dft_length, ScalarInt(ctx, 1, "dft_length"));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t sample_rate, ScalarInt(ctx, 2, "sample_rate"));
    const Tensor* lo = ctx.input(3);
    const Tensor* hi = ctx.input(4);
    if (!lo || !hi || lo->size() != 1 || hi->size() != 1) return Diag::Msg("lower/upper_edge_hertz must be scalars");
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<double> lo_hz, lo->ToDoubleVector());
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<double> hi_hz, hi->ToDoubleVector());
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0) return Diag::Msg("MelWeightMatrix sizes must be positive");
    const int64_t spec_bins = dft_length / 2 + 1;
    const double lo_mel = 2595.0 * std::log10(1.0 + lo_hz[0] / 700.0);
    const double hi_mel = 2595.0 * std::log10(1.0 + hi_hz[0] / 700.0);
    const double step = (hi_mel - lo_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> bins(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595.0) - 1.0);
      bins[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    }
    std::vector<double> w(static_cast<size_t>(spec_bins * mel_bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double* {
      return j >= 0 && j < spec_bins ? &w[static_cast<size_t>(j * mel_bins + i)] : nullptr;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = bins[static_cast<size_t>(i)], center = bins[static_cast<size_t>(i) + 1],
                    right = bins[static_cast<size_t>(i) + 2];
      if (center == left) {
        if (double* p = at(center, i)) *p = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j)
          if (double* p = at(j, i)) *p = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
      if (right > center)
        for (int64_t j = center; j < right; ++j)
          if (double* p = at(j, i)) *p = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
    Tensor* y = ctx.Output(0, out_, std::vector<int64_t>{spec_bins, mel_bins});
    return DispatchFloating(out_, [&]<class T>() {
      for (size_t k = 0; k < w.size(); ++k) y->data<T>()[k] = static_cast<T>(w[k]);
      return Status::OK();
    });
  }

 private:
  DType out_;
};

Expected<std::unique_ptr<OpKernel>> CreateMelWeightMatrix(const NodeInfo& node) {
  const DType out = static_cast<DType>(node.GetInt("output_datatype", static_cast<int64_t>(DType::kFloat)));
  if (out != DType::kFloat && out != DType::kDouble)
    return node.Error(std::string("MelWeightMatrix output_datatype ") + DTypeName(out) + " is not supported (float, double)");
  return MakeKernel<MelWeightMatrixKernel>(out);
}

}  // namespace

void RegisterSignalKernels(KernelRegistry& r) {
  r.Add("", "DFT", CreateDft);
  r.Add("", "STFT", CreateStft);
  r.Add("", "HannWindow", CreateWindow);
  r.Add("", "HammingWindow", CreateWindow);
  r.Add("", "BlackmanWindow", CreateWindow);
  r.Add("", "MelWeightMatrix", CreateMelWeightMatrix);
}

}  // namespace nuphar
