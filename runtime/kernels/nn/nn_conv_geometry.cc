// Window geometry and im2col for convolutions and pooling (see nn_conv_geometry.h).
#include "runtime/kernels/nn/nn_conv_geometry.h"

#include <algorithm>
#include <string>

#include "runtime/core/tensor.h"

namespace nuphar {

Expected<WindowAttrs> WindowAttrs::Parse(const NodeInfo& node) {
  WindowAttrs a;
  a.kernel_shape = node.GetInts("kernel_shape");
  a.strides = node.GetInts("strides");
  a.dilations = node.GetInts("dilations");
  a.pads = node.GetInts("pads");
  a.group = node.GetInt("group", 1);
  a.ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) a.auto_pad = AutoPad::kNotSet;
  else if (auto_pad == "SAME_UPPER") a.auto_pad = AutoPad::kSameUpper;
  else if (auto_pad == "SAME_LOWER") a.auto_pad = AutoPad::kSameLower;
  else if (auto_pad == "VALID") a.auto_pad = AutoPad::kValid;
  else return node.Error("unknown auto_pad '" + auto_pad + "'");
  if (a.group < 1) return node.Error("group must be >= 1");
  for (int64_t v : a.kernel_shape)
    if (v < 1) return node.Error("kernel_shape values must be >= 1");
  for (int64_t v : a.strides)
    if (v < 1) return node.Error("strides must be >= 1");
  for (int64_t v : a.dilations)
    if (v < 1) return node.Error("dilations must be >= 1");
  for (int64_t v : a.pads)
    if (v < 0) return node.Error("pads must be >= 0");
  if (a.kernel_shape.size() > kMaxSpatial) return node.Error("more than 6 spatial dimensions are not supported");
  return a;
}

int64_t WindowGeometry::in_size() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= in[static_cast<size_t>(i)];
  return n;
}
int64_t WindowGeometry::out_size() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= out[static_cast<size_t>(i)];
  return n;
}
int64_t WindowGeometry::kernel_size() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= kernel[static_cast<size_t>(i)];
  return n;
}

Expected<WindowGeometry> ComputeWindowGeometry(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                                               std::span<const int64_t> kernel) {
  WindowGeometry g;
  const size_t rank = in_spatial.size();
  if (rank == 0 || rank > WindowAttrs::kMaxSpatial)
    return Diag::Msg("input needs 1 to 6 spatial dimensions, got " + std::to_string(rank));
  auto attr_size_ok = [&](const std::vector<int64_t>& v, size_t n) { return v.empty() || v.size() == n; };
  if (kernel.size() != rank || !attr_size_ok(attrs.strides, rank) || !attr_size_ok(attrs.dilations, rank) ||
      !attr_size_ok(attrs.pads, 2 * rank))
    return Diag::Msg("kernel_shape/strides/dilations/pads do not match the input's " + std::to_string(rank) +
                     " spatial dimensions");
  g.rank = static_cast<int>(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = in_spatial[i], k = kernel[i];
    const int64_t s = attrs.strides.empty() ? 1 : attrs.strides[i];
    const int64_t d = attrs.dilations.empty() ? 1 : attrs.dilations[i];
    const int64_t extent = (k - 1) * d + 1;
    int64_t pb = attrs.pads.empty() ? 0 : attrs.pads[i];
    int64_t pe = attrs.pads.empty() ? 0 : attrs.pads[i + rank];
    int64_t out = 0;
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet: {
        const int64_t span = in + pb + pe - extent;
        if (span < 0) return Diag::Msg("kernel is larger than the padded input " + ShapeToString(in_spatial));
        out = (attrs.ceil_mode ? (span + s - 1) / s : span / s) + 1;
        // A window must start inside the input or the begin padding (ceil_mode corner).
        if (attrs.ceil_mode && (out - 1) * s >= in + pb) --out;
        break;
      }
      case AutoPad::kValid:
        pb = pe = 0;
        if (in < extent) return Diag::Msg("kernel is larger than the input " + ShapeToString(in_spatial));
        out = (in - extent) / s + 1;
        break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
        pb = attrs.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
        pe = total - pb;
        break;
      }
    }
    g.SetDim(i, in, out, k, s, d, pb, pe);
  }
  return g;
}

bool Im2ColIsIdentity(const WindowGeometry& g) {
  for (int i = 0; i < g.rank; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (g.kernel[k] != 1 || g.stride[k] != 1 || g.pad_begin[k] != 0 || g.pad_end[k] != 0 || g.out[k] != g.in[k])
      return false;
  }
  return true;
}

namespace {

/// One row of the im2col matrix: the input row it reads (offset of its first element within the
/// channel, or -1 when the row lies in the padding) and the output positions w in [w_lo, w_hi)
/// that read input w * stride + off; the others read padding.
struct WindowRow {
  int64_t in_row_offset;
  int64_t off, w_lo, w_hi;
};

/// The walk shared by Im2Col and its adjoint Col2Im: for each channel c, kernel position kk and
/// output row o (all output dims but the last, o counted in elements), calls
/// visit(c, kk, o, WindowRow).
template <class Visit>
void ForEachWindowRow(int64_t channels, const WindowGeometry& g, Visit&& visit) {
  const int r = g.rank;
  const size_t last = static_cast<size_t>(r - 1);
  const int64_t out_size = g.out_size(), k_size = g.kernel_size();
  const int64_t out_w = g.out[last], in_w = g.in[last];
  const int64_t s_w = g.stride[last], d_w = g.dilation[last], p_w = g.pad_begin[last];
  std::array<int64_t, WindowAttrs::kMaxSpatial> kpos{}, opos{};
  for (int64_t c = 0; c < channels; ++c) {
    kpos.fill(0);
    for (int64_t kk = 0; kk < k_size; ++kk) {
      opos.fill(0);
      const int64_t off = kpos[last] * d_w - p_w;
      // Valid w: 0 <= w*s + off < in_w; the rest is padding.
      const int64_t w_lo = std::min(out_w, off >= 0 ? int64_t{0} : (-off + s_w - 1) / s_w);
      const int64_t w_hi = std::max(w_lo, std::min(out_w, in_w - off <= 0 ? int64_t{0} : (in_w - off + s_w - 1) / s_w));
      for (int64_t o = 0; o < out_size; o += out_w) {
        int64_t base = 0;
        bool inside = true;
        for (size_t i = 0; i < last; ++i) {
          const int64_t p = opos[i] * g.stride[i] - g.pad_begin[i] + kpos[i] * g.dilation[i];
          if (p < 0 || p >= g.in[i]) inside = false;
          base = base * g.in[i] + p;
        }
        visit(c, kk, o, WindowRow{inside ? base * in_w : -1, off, w_lo, w_hi});
        for (size_t i = last; i-- > 0;) {
          if (++opos[i] < g.out[i]) break;
          opos[i] = 0;
        }
      }
      for (size_t i = static_cast<size_t>(r); i-- > 0;) {
        if (++kpos[i] < g.kernel[i]) break;
        kpos[i] = 0;
      }
    }
  }
}

}  // namespace

template <class In, class Out>
void Im2Col(const In* x, int64_t channels, const WindowGeometry& g, Out zero_point, Out* col) {
  const int64_t in_size = g.in_size(), out_size = g.out_size(), k_size = g.kernel_size();
  const int64_t out_w = g.out[static_cast<size_t>(g.rank - 1)], s_w = g.stride[static_cast<size_t>(g.rank - 1)];
  ForEachWindowRow(channels, g, [&](int64_t c, int64_t kk, int64_t o, const WindowRow& row) {
    Out* dst = col + (c * k_size + kk) * out_size + o;
    if (row.in_row_offset < 0) {
      std::fill(dst, dst + out_w, Out(0));
      return;
    }
    const In* src = x + c * in_size + row.in_row_offset;
    std::fill(dst, dst + row.w_lo, Out(0));
    if (s_w == 1) {
      for (int64_t w = row.w_lo; w < row.w_hi; ++w) dst[w] = static_cast<Out>(static_cast<Out>(src[w + row.off]) - zero_point);
    } else {
      for (int64_t w = row.w_lo; w < row.w_hi; ++w)
        dst[w] = static_cast<Out>(static_cast<Out>(src[w * s_w + row.off]) - zero_point);
    }
    std::fill(dst + row.w_hi, dst + out_w, Out(0));
  });
}

template <class T>
void Col2Im(const T* col, int64_t channels, const WindowGeometry& g, T* y) {
  const int64_t in_size = g.in_size(), out_size = g.out_size(), k_size = g.kernel_size();
  const int64_t s_w = g.stride[static_cast<size_t>(g.rank - 1)];
  ForEachWindowRow(channels, g, [&](int64_t c, int64_t kk, int64_t o, const WindowRow& row) {
    if (row.in_row_offset < 0) return;
    T* dst = y + c * in_size + row.in_row_offset;
    const T* src = col + (c * k_size + kk) * out_size + o;
    for (int64_t w = row.w_lo; w < row.w_hi; ++w) dst[w * s_w + row.off] += src[w];
  });
}

template void Col2Im<float>(const float*, int64_t, const WindowGeometry&, float*);
template void Col2Im<double>(const double*, int64_t, const WindowGeometry&, double*);
template void Im2Col<float, float>(const float*, int64_t, const WindowGeometry&, float, float*);
template void Im2Col<double, double>(const double*, int64_t, const WindowGeometry&, double, double*);
template void Im2Col<uint8_t, int32_t>(const uint8_t*, int64_t, const WindowGeometry&, int32_t, int32_t*);
template void Im2Col<int8_t, int32_t>(const int8_t*, int64_t, const WindowGeometry&, int32_t, int32_t*);

}  // namespace nuphar
