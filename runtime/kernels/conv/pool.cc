// Pooling fast path (conv.h): float MaxPool/AveragePool over 1-D or 2-D windows without dilation,
// plane by plane on the per-ISA PoolPlane; nn_pool.cc keeps every other case.
#include "runtime/kernels/conv/conv.h"
#include "runtime/kernels/nn/nn_conv_geometry.h"

namespace nuphar {

bool PoolFloat(const float* x, int64_t planes, const WindowGeometry& g, bool is_max, bool count_include_pad, float* y) {
  if (g.rank < 1 || g.rank > 2) return false;
  for (int i = 0; i < g.rank; ++i)
    if (g.dilation[static_cast<size_t>(i)] != 1) return false;
  const bool two = g.rank == 2;
  const size_t w = static_cast<size_t>(g.rank - 1);
  const int64_t H = two ? g.in[0] : 1, OH = two ? g.out[0] : 1, KH = two ? g.kernel[0] : 1;
  const int64_t sh = two ? g.stride[0] : 1, pt = two ? g.pad_begin[0] : 0, pb = two ? g.pad_end[0] : 0;
  const ConvKernels& k = GetConvKernels();
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  for (int64_t p = 0; p < planes; ++p)
    k.pool_plane(x + p * in_size, H, g.in[w], KH, g.kernel[w], sh, g.stride[w], pt, g.pad_begin[w], pb, g.pad_end[w],
                 y + p * out_size, OH, g.out[w], is_max, count_include_pad);
  return true;
}

}  // namespace nuphar
