// Window geometry shared by Conv, ConvInteger, QLinearConv, ConvTranspose and the pooling ops:
// attribute parsing (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode), output sizes,
// and im2col. Spatial ranks 1..kMaxSpatial; all arrays are fixed-size, so no allocation at run time.
//
// Output size of one spatial dim (in = input size, k = dilated kernel extent (k-1)*d+1):
//   NOTSET      (in + pad_begin + pad_end - k) / s + 1   (rounded up with ceil_mode, pooling only)
//   VALID       (in - k) / s + 1, no padding
//   SAME_UPPER  ceil(in / s), total padding (out-1)*s + k - in split with the extra cell at the end
//   SAME_LOWER  the same with the extra cell at the beginning
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/error.h"
#include "runtime/kernels/kernel.h"

namespace nuphar {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct WindowAttrs {
  static constexpr int kMaxSpatial = 6;
  std::vector<int64_t> kernel_shape;  ///< empty = taken from the weight tensor (Conv)
  std::vector<int64_t> strides, dilations, pads;  ///< empty = defaults (1, 1, 0)
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
  int64_t group = 1;

  /// Reads the attributes of `node`; validates what does not depend on shapes.
  static Expected<WindowAttrs> Parse(const NodeInfo& node);
};

/// Resolved sizes for one call.
struct WindowGeometry {
  int rank = 0;  ///< spatial rank
  std::array<int64_t, WindowAttrs::kMaxSpatial> in{}, out{}, kernel{}, stride{}, dilation{}, pad_begin{}, pad_end{};
  int64_t in_size() const;      ///< product of in
  int64_t out_size() const;     ///< product of out
  int64_t kernel_size() const;  ///< product of kernel
  /// Sets every field of spatial dim i.
  void SetDim(size_t i, int64_t in_size, int64_t out_size, int64_t kernel_extent, int64_t stride_size,
              int64_t dilation_size, int64_t pad_begin_size, int64_t pad_end_size) {
    in[i] = in_size;
    out[i] = out_size;
    kernel[i] = kernel_extent;
    stride[i] = stride_size;
    dilation[i] = dilation_size;
    pad_begin[i] = pad_begin_size;
    pad_end[i] = pad_end_size;
  }
};

/// A window op's output dims [n, channels, spatial...] into y (room for spatial.size() + 2);
/// returns their count.
inline int WindowOutputDims(int64_t n, int64_t channels, std::span<const int64_t> spatial, int64_t* y) {
  y[0] = n;
  y[1] = channels;
  for (size_t i = 0; i < spatial.size(); ++i) y[i + 2] = spatial[i];
  return static_cast<int>(spatial.size()) + 2;
}

/// Geometry of a forward window op (Conv, pooling). `kernel` is the spatial kernel extent.
Expected<WindowGeometry> ComputeWindowGeometry(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                                               std::span<const int64_t> kernel);

/// im2col of one image group: x is [channels, in...]; col becomes [channels * kernel_size, out_size]
/// holding Out(x - zero_point), with padded cells 0 (i.e. padded with the zero point).
template <class In, class Out>
void Im2Col(const In* x, int64_t channels, const WindowGeometry& g, Out zero_point, Out* col);

/// The adjoint of Im2Col: adds col [channels * kernel_size, out_size] into y [channels, in...]
/// (cells that fall into the padding are dropped). ConvTranspose's scatter step.
template <class T>
void Col2Im(const T* col, int64_t channels, const WindowGeometry& g, T* y);

/// True when im2col would be the identity (1x1 kernel, unit stride, no padding): use x directly.
bool Im2ColIsIdentity(const WindowGeometry& g);

}  // namespace nuphar
