// Resize (opset 10, 11, 13, 18 axes, keep_aspect_ratio_policy and antialias, 19
// half_pixel_symmetric) and
// Upsample (opset 7 scales attribute, 9 scales input).
//
// # How an output coordinate finds its inputs
// Every mode is separable: per dim, each output index o maps to an original coordinate x
// (coordinate_transformation_mode) and from x to taps (input index, weight): 1 tap for
// nearest, 2 for linear, 4 for cubic; out-of-range taps clamp to the edge, or are dropped and
// the weights renormalized with exclude_outside. tf_crop_and_resize marks x outside
// [0, in - 1] as extrapolation_value. This follows the ONNX reference implementation,
// including its use of the real-valued output length scale * in for align_corners and
// pytorch_half_pixel, and its tie rule (an integral x uses the taps left of x with ratio 1).
//
// # How it runs
// Nearest is an IndexMapCopy on the raw elements (any dtype, exact). Linear and cubic convert
// to double, apply one 1-D pass per dim that changes (dims whose map is the identity are
// skipped) and convert back, rounding and saturating for integer types.
// Opset 10 Resize and Upsample use the asymmetric transform, and nearest picks
// ceil(x) when downsampling and floor(x) otherwise, as ONNX Runtime does for them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

enum class Interp { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize, kHalfPixelSymmetric };
enum class NearestRound { kPreferFloor, kPreferCeil, kFloor, kCeil, kLegacy };

struct ResizeConfig {
  Interp interp = Interp::kNearest;
  Coord coord = Coord::kHalfPixel;
  NearestRound round = NearestRound::kPreferFloor;
  bool exclude_outside = false;
  bool antialias = false;  // Resize-18: linear/cubic filters widened by 1/scale when downsampling
  double extrapolation = 0.0;
  double cubic_a = -0.75;
};

// The taps of one dim: out * taps (index, weight) pairs; `outside` marks extrapolated outputs.
struct DimTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
  bool identity = false;
};

double OriginalCoordinate(const ResizeConfig& c, int64_t o, double scale, double out_len, int64_t in,
                          double roi_start, double roi_end) {
  const double x = static_cast<double>(o);
  switch (c.coord) {
    case Coord::kAlignCorners: return out_len == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_len - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case Coord::kPytorchHalfPixel: return out_len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case Coord::kTfCropAndResize: {
      const double span = (roi_end - roi_start) * static_cast<double>(in - 1);
      const double offset = roi_start * static_cast<double>(in - 1);
      return out_len == 1 ? span / 2 + offset : x * span / (out_len - 1) + offset;
    }
    case Coord::kHalfPixelSymmetric: {  // Resize-19: half_pixel, re-centred for the truncated output length
      const double adjustment = out_len > 0 ? std::floor(out_len) / out_len : 1.0;
      const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Coord::kHalfPixel: break;
  }
  return (x + 0.5) / scale - 0.5;
}

int64_t NearestIndex(const ResizeConfig& c, double x, double scale) {
  const double base = std::floor(x);
  if (c.round == NearestRound::kLegacy) return static_cast<int64_t>(scale < 1 ? std::ceil(x) : base);
  if (x == base) return static_cast<int64_t>(base);
  const double ratio = x - base;
  bool up = false;
  switch (c.round) {
    case NearestRound::kPreferFloor: up = ratio > 0.5; break;
    case NearestRound::kPreferCeil: up = ratio >= 0.5; break;
    case NearestRound::kFloor: up = false; break;
    case NearestRound::kCeil: up = true; break;
    case NearestRound::kLegacy: break;
  }
  return static_cast<int64_t>(base) + (up ? 1 : 0);
}

void CubicCoefficients(double r, double a, double* w) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 <= t < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // 0 <= t < 1
  w[0] = far(r + 1);
  w[1] = near(r);
  w[2] = near(1 - r);
  w[3] = far(2 - r);
}

// Resize-18 antialias, as ONNX Runtime (after Pillow): the linear (support 2) or cubic (support 4)
// filter is stretched by 1/scale when downsampling, so each output averages every input its
// footprint covers; taps are [floor(center - support + 1/2), floor(center + support + 1/2)) with
// center = x + 1/2, normalized to sum 1. Taps past the edges fold onto the edge (the index clamp
// below) unless exclude_outside drops them.
DimTaps BuildAntialiasTaps(const ResizeConfig& c, int64_t in, int64_t out, double scale, double out_len,
                           double roi_start, double roi_end) {
  const double support_size = c.interp == Interp::kLinear ? 2.0 : 4.0;
  const double stretch = 1.0 / scale;  // input pixels per output pixel
  const double support = stretch >= 1 ? support_size / 2 * stretch : support_size / 2;
  const double inv = stretch >= 1 ? 1.0 / stretch : 1.0;
  auto filter = [&](double x) {
    x = std::abs(x);
    if (c.interp == Interp::kLinear) return x < 1 ? 1 - x : 0.0;
    const double a = c.cubic_a;
    if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
  };
  DimTaps t;
  t.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.index.assign(static_cast<size_t>(out * t.taps), 0);
  t.weight.assign(static_cast<size_t>(out * t.taps), 0.0);
  t.outside.assign(static_cast<size_t>(out), 0);
  t.identity = false;
  for (int64_t o = 0; o < out; ++o) {
    const double center =
        0.5 + (scale == 1 ? static_cast<double>(o) : OriginalCoordinate(c, o, scale, out_len, in, roi_start, roi_end));
    int64_t lo = static_cast<int64_t>(std::floor(center - support + 0.5));
    int64_t hi = static_cast<int64_t>(std::floor(center + support + 0.5));
    if (c.exclude_outside) lo = std::max<int64_t>(lo, 0), hi = std::min(hi, in);
    int64_t* idx = &t.index[static_cast<size_t>(o * t.taps)];
    double* w = &t.weight[static_cast<size_t>(o * t.taps)];
    double total = 0;
    for (int64_t j = lo; j < hi && j - lo < t.taps; ++j) {
      idx[j - lo] = std::clamp(j, int64_t{0}, in - 1);
      w[j - lo] = filter((static_cast<double>(j) - center + 0.5) * inv);
      total += w[j - lo];
    }
    if (total != 0)
      for (int k = 0; k < t.taps; ++k) w[k] /= total;
  }
  return t;
}

DimTaps BuildTaps(const ResizeConfig& c, int64_t in, int64_t out, double scale, double out_len, double roi_start,
                  double roi_end) {
  if (c.antialias && c.interp != Interp::kNearest) return BuildAntialiasTaps(c, in, out, scale, out_len, roi_start, roi_end);
  DimTaps t;
  t.taps = c.interp == Interp::kNearest ? 1 : c.interp == Interp::kLinear ? 2 : 4;
  const size_t n = static_cast<size_t>(out) * static_cast<size_t>(t.taps);
  t.index.resize(n);
  t.weight.resize(n);
  t.outside.assign(static_cast<size_t>(out), 0);
  t.identity = out == in;
  for (int64_t o = 0; o < out; ++o) {
    const double x = OriginalCoordinate(c, o, scale, out_len, in, roi_start, roi_end);
    int64_t* idx = &t.index[static_cast<size_t>(o * t.taps)];
    double* w = &t.weight[static_cast<size_t>(o * t.taps)];
    if (c.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<double>(in - 1))) {
      t.outside[static_cast<size_t>(o)] = 1;
      t.identity = false;
    }
    if (c.interp == Interp::kNearest) {
      idx[0] = NearestIndex(c, x, scale);
      w[0] = 1;
    } else {
      double base = std::floor(x), ratio = x - base;
      if (ratio == 0) {  // the reference's tie rule: taps left of x, ratio 1
        base -= 1;
        ratio = 1;
      }
      if (c.interp == Interp::kLinear) {
        idx[0] = static_cast<int64_t>(base);
        idx[1] = idx[0] + 1;
        w[0] = 1 - ratio;
        w[1] = ratio;
      } else {
        for (int k = 0; k < 4; ++k) idx[k] = static_cast<int64_t>(base) - 1 + k;
        CubicCoefficients(ratio, c.cubic_a, w);
      }
      if (c.exclude_outside) {
        double sum = 0;
        for (int k = 0; k < t.taps; ++k) {
          if (idx[k] < 0 || idx[k] >= in) w[k] = 0;
          sum += w[k];
        }
        if (sum != 0)
          for (int k = 0; k < t.taps; ++k) w[k] /= sum;
      }
    }
    double self = 0, other = 0;
    for (int k = 0; k < t.taps; ++k) {
      idx[k] = std::clamp(idx[k], int64_t{0}, in - 1);
      (idx[k] == o ? self : other) += std::abs(w[k]);
    }
    if (self != 1 || other != 0) t.identity = false;
  }
  return t;
}

// One 1-D pass along `dim` of the double buffer `src` with shape `shape`; updates `shape`.
void InterpolateDim(const DimTaps& t, std::vector<double>& src, std::vector<double>& dst, std::vector<int64_t>& shape,
                    size_t dim, double extrapolation) {
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < dim; ++k) outer *= shape[k];
  for (size_t k = dim + 1; k < shape.size(); ++k) inner *= shape[k];
  const int64_t in = shape[dim], out = static_cast<int64_t>(t.outside.size());
  dst.assign(static_cast<size_t>(outer * out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* s = src.data() + o * in * inner;
    for (int64_t j = 0; j < out; ++j) {
      double* d = dst.data() + (o * out + j) * inner;
      if (t.outside[static_cast<size_t>(j)]) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      for (int k = 0; k < t.taps; ++k) {
        const double w = t.weight[static_cast<size_t>(j * t.taps + k)];
        if (w == 0) continue;
        const double* row = s + t.index[static_cast<size_t>(j * t.taps + k)] * inner;
        for (int64_t i = 0; i < inner; ++i) d[i] += w * row[i];
      }
    }
  }
  shape[dim] = out;
  src.swap(dst);
}

// Element i of x as double / stored from double (integers round to nearest and saturate).
Status ToDoubles(const Tensor& x, std::vector<double>& out) {
  out.resize(static_cast<size_t>(x.size()));
  if (x.dtype() == DType::kFloat16) {
    for (int64_t i = 0; i < x.size(); ++i) out[static_cast<size_t>(i)] = HalfToFloat(x.data<uint16_t>()[i]);
    return Status::OK();
  }
  return VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < x.size(); ++i) out[static_cast<size_t>(i)] = static_cast<double>(x.data<T>()[i]);
    return Status::OK();
  });
}

Status FromDoubles(const std::vector<double>& v, Tensor& y) {
  if (y.dtype() == DType::kFloat16) {
    for (int64_t i = 0; i < y.size(); ++i) y.data<uint16_t>()[i] = FloatToHalf(static_cast<float>(v[static_cast<size_t>(i)]));
    return Status::OK();
  }
  return VisitNumeric(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data<T>();
    for (int64_t i = 0; i < y.size(); ++i) {
      const double d = v[static_cast<size_t>(i)];
      if constexpr (std::is_floating_point_v<T>) {
        out[i] = static_cast<T>(d);
      } else {
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        out[i] = static_cast<T>(std::clamp(std::nearbyint(d), lo, hi));
      }
    }
    return Status::OK();
  });
}

// Where the kernel reads its parameters, per op and opset.
struct ResizeInputs {
  int roi = -1, scales = -1, sizes = -1;  // input slots; -1 = none
  std::vector<float> attr_scales;         // Upsample-7
  std::vector<int64_t> axes;              // Resize-18: the dims scales/sizes/roi list (empty = all)
  enum class Aspect { kStretch, kNotLarger, kNotSmaller } aspect = Aspect::kStretch;  // Resize-18
};

// Resize-18 axes: scales, sizes and roi list only `axes`; the other dims keep scale 1, their
// size and the full roi [0, 1].
Status ExpandToRank(const std::vector<int64_t>& axes, const std::vector<int64_t>& in_shape, std::vector<double>* scales,
                    std::vector<int64_t>* sizes, std::vector<double>* roi) {
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  const size_t n = axes.size();
  if ((!scales->empty() && scales->size() != n) || (!sizes->empty() && sizes->size() != n) ||
      (!roi->empty() && roi->size() != 2 * n))
    return Diag::Msg("scales, sizes and roi must have one entry (roi: two) per listed axis");
  std::vector<double> full_scales(in_shape.size(), 1.0), full_roi;
  std::vector<int64_t> full_sizes = in_shape;
  if (!roi->empty()) {
    full_roi.assign(2 * in_shape.size(), 0.0);
    std::fill(full_roi.begin() + rank, full_roi.end(), 1.0);
  }
  for (size_t k = 0; k < n; ++k) {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axes[k], rank));
    if (!scales->empty()) full_scales[static_cast<size_t>(a)] = (*scales)[k];
    if (!sizes->empty()) full_sizes[static_cast<size_t>(a)] = (*sizes)[k];
    if (!roi->empty()) full_roi[static_cast<size_t>(a)] = (*roi)[k], full_roi[static_cast<size_t>(a + rank)] = (*roi)[k + n];
  }
  if (!scales->empty()) *scales = std::move(full_scales);
  if (!sizes->empty()) *sizes = std::move(full_sizes);
  *roi = std::move(full_roi);
  return Status::OK();
}

class ResizeKernel final : public OpKernel {
 public:
  ResizeKernel(ResizeConfig config, ResizeInputs inputs) : c_(config), in_(std::move(inputs)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 'X' is missing");
    const size_t rank = static_cast<size_t>(x->rank());
    std::vector<double> scales(in_.attr_scales.begin(), in_.attr_scales.end()), roi;
    std::vector<int64_t> sizes;
    if (in_.scales >= 0 && ctx.input(static_cast<size_t>(in_.scales))) {
      NUPHAR_ASSIGN_OR_RETURN(scales, ctx.input(static_cast<size_t>(in_.scales))->ToDoubleVector());
    }
    if (in_.sizes >= 0 && ctx.input(static_cast<size_t>(in_.sizes))) {
      NUPHAR_ASSIGN_OR_RETURN(sizes, InputAsInt64(ctx, static_cast<size_t>(in_.sizes), "sizes"));
    }
    if (c_.coord == Coord::kTfCropAndResize && in_.roi >= 0 && ctx.input(static_cast<size_t>(in_.roi))) {
      NUPHAR_ASSIGN_OR_RETURN(roi, ctx.input(static_cast<size_t>(in_.roi))->ToDoubleVector());
    }
    if (!in_.axes.empty()) NUPHAR_RETURN_IF_ERROR(ExpandToRank(in_.axes, x->shape(), &scales, &sizes, &roi));
    if (!roi.empty() && roi.size() != 2 * rank) return Diag::Msg("roi must have 2 * rank entries");
    if (scales.empty() == sizes.empty()) return Diag::Msg("exactly one of scales and sizes must be given");
    if (!sizes.empty() && sizes.size() != rank) return Diag::Msg("sizes must have one entry per dim");
    if (!scales.empty() && scales.size() != rank) return Diag::Msg("scales must have one entry per dim");

    // keep_aspect_ratio_policy: one scale for the listed dims, the smallest (not_larger) or the
    // largest (not_smaller) of sizes/in; those dims become round(scale * in), as ONNX Runtime.
    std::vector<double> aspect_scale(rank, 0.0);
    if (in_.aspect != ResizeInputs::Aspect::kStretch && !sizes.empty()) {
      std::vector<bool> listed(rank, in_.axes.empty());
      for (int64_t a : in_.axes) listed[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)] = true;
      double common = in_.aspect == ResizeInputs::Aspect::kNotLarger ? INFINITY : 0.0;
      for (size_t d = 0; d < rank; ++d) {
        if (!listed[d] || x->shape()[d] == 0) continue;
        const double r = static_cast<double>(sizes[d]) / static_cast<double>(x->shape()[d]);
        common = in_.aspect == ResizeInputs::Aspect::kNotLarger ? std::min(common, r) : std::max(common, r);
      }
      for (size_t d = 0; d < rank; ++d)
        if (listed[d] && std::isfinite(common) && common > 0) {
          aspect_scale[d] = common;
          sizes[d] = static_cast<int64_t>(std::round(common * static_cast<double>(x->shape()[d])));
        }
    }

    std::vector<int64_t> out_shape(rank);
    std::vector<DimTaps> taps(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t in = x->shape()[d];
      double scale, out_len;
      if (!sizes.empty()) {
        out_shape[d] = sizes[d];
        scale = aspect_scale[d] > 0 ? aspect_scale[d] : in == 0 ? 1.0 : static_cast<double>(sizes[d]) / static_cast<double>(in);
        out_len = static_cast<double>(sizes[d]);
      } else {
        scale = scales[d];
        if (!(scale > 0)) return Diag::Msg("scales must be positive");
        out_len = scale * static_cast<double>(in);
        out_shape[d] = static_cast<int64_t>(out_len);
      }
      if (out_shape[d] < 0) return Diag::Msg("sizes must be non-negative");
      if (in == 0 && out_shape[d] > 0) return Diag::Msg("cannot resize an empty dim to a non-empty one");
      taps[d] = BuildTaps(c_, in, out_shape[d], scale, out_len, roi.empty() ? 0.0 : roi[d],
                          roi.empty() ? 1.0 : roi[d + rank]);
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    if (y->size() == 0) return Status::OK();
    if (c_.interp == Interp::kNearest) return NearestCopy(*x, taps, *y);

    std::vector<double> cur, next;
    NUPHAR_RETURN_IF_ERROR(ToDoubles(*x, cur));
    std::vector<int64_t> shape = x->shape();
    for (size_t d = 0; d < rank; ++d)
      if (!taps[d].identity) InterpolateDim(taps[d], cur, next, shape, d, c_.extrapolation);
    return FromDoubles(cur, *y);
  }

 private:
  Status NearestCopy(const Tensor& x, const std::vector<DimTaps>& taps, Tensor& y) const {
    const std::vector<int64_t> strides = ContiguousStrides(x.shape());
    std::vector<std::vector<int64_t>> maps(taps.size());
    for (size_t d = 0; d < taps.size(); ++d) {
      maps[d].resize(taps[d].index.size());
      for (size_t o = 0; o < maps[d].size(); ++o)
        maps[d][o] = taps[d].outside[o] ? -1 : taps[d].index[o] * strides[d];
    }
    Tensor fill(x.dtype(), {1});
    NUPHAR_RETURN_IF_ERROR(FromDoubles(std::vector<double>{c_.extrapolation}, fill));
    IndexMapCopy(y.raw(), x.raw(), maps, DTypeSize(x.dtype()), fill.raw());
    return Status::OK();
  }

  ResizeConfig c_;
  ResizeInputs in_;
};

template <class E>
bool ParseEnum(const std::string& s, std::initializer_list<std::pair<const char*, E>> table, E& out) {
  for (const auto& [name, value] : table)
    if (s == name) {
      out = value;
      return true;
    }
  return false;
}

Expected<std::unique_ptr<OpKernel>> CreateResize(const NodeInfo& node) {
  const DType t = node.input_type(0);
  if (t != DType::kUndefined && (!IsNumeric(t) || t == DType::kBool || t == DType::kBfloat16))
    return node.Error(std::string("input type ") + DTypeName(t) + " is not supported");
  const bool upsample = node.op_type() == "Upsample";
  const bool legacy = upsample || node.opset() < 11;
  if (upsample && node.opset() < 7) return node.Error("Upsample-1 is not supported; use opset >= 7");
  ResizeConfig c;
  std::string mode = node.GetString("mode", "nearest");
  if (upsample && mode == "bilinear") mode = "linear";
  if (!ParseEnum(mode, {{"nearest", Interp::kNearest}, {"linear", Interp::kLinear}, {"cubic", Interp::kCubic}},
                 c.interp) ||
      (legacy && c.interp == Interp::kCubic))
    return node.Error("mode '" + mode + "' is not supported");
  ResizeInputs in;
  if (legacy) {
    c.coord = Coord::kAsymmetric;
    c.round = NearestRound::kLegacy;
    if (upsample && node.opset() < 9) {
      in.attr_scales = node.GetFloats("scales");
      if (in.attr_scales.empty()) return node.Error("attribute 'scales' is missing");
    } else {
      in.scales = 1;
    }
    return MakeKernel<ResizeKernel>(c, std::move(in));
  }
  const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
  if (!ParseEnum(coord,
                 {{"half_pixel", Coord::kHalfPixel},
                  {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
                  {"align_corners", Coord::kAlignCorners},
                  {"asymmetric", Coord::kAsymmetric},
                  {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn},
                  {"tf_crop_and_resize", Coord::kTfCropAndResize},
                  {"half_pixel_symmetric", Coord::kHalfPixelSymmetric}},
                 c.coord))
    return node.Error("coordinate_transformation_mode '" + coord + "' is not supported");
  if (c.coord == Coord::kHalfPixelSymmetric && node.opset() < 19)
    return node.Error("coordinate_transformation_mode 'half_pixel_symmetric' exists from Resize-19");
  const std::string round = node.GetString("nearest_mode", "round_prefer_floor");
  if (!ParseEnum(round,
                 {{"round_prefer_floor", NearestRound::kPreferFloor},
                  {"round_prefer_ceil", NearestRound::kPreferCeil},
                  {"floor", NearestRound::kFloor},
                  {"ceil", NearestRound::kCeil}},
                 c.round))
    return node.Error("nearest_mode '" + round + "' is not supported");
  // Resize-18's attributes at their defaults (exporters write them out) mean plain Resize-13.
  c.antialias = node.GetInt("antialias", 0) != 0;
  if (c.antialias && c.coord == Coord::kTfCropAndResize)
    return node.Error("Resize-18 antialias with tf_crop_and_resize is not supported");
  in.axes = node.GetInts("axes");
  const std::string aspect = node.GetString("keep_aspect_ratio_policy", "stretch");
  if (aspect == "not_larger") in.aspect = ResizeInputs::Aspect::kNotLarger;
  else if (aspect == "not_smaller") in.aspect = ResizeInputs::Aspect::kNotSmaller;
  else if (aspect != "stretch")
    return node.Error("keep_aspect_ratio_policy '" + aspect + "' is not stretch, not_larger or not_smaller");
  c.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  c.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  c.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  in.roi = 1;
  in.scales = 2;
  in.sizes = 3;
  return MakeKernel<ResizeKernel>(c, std::move(in));
}

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  r.Add("", "Resize", CreateResize);
  r.Add("", "Upsample", CreateResize);
}

}  // namespace nuphar::tensor_kernels
