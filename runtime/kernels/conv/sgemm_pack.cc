// Conv GEMM weight packing (conv.h), done once at load: W_g [Mg, K] becomes ceil(Mg / mr) panels,
// each [K][mr] (the mr output channels of one k side by side), rows past Mg zero. The micro-kernel
// then reads one panel front to back, broadcasting mr weights per k, and never tests a row
// bound while accumulating; zero rows keep the padding deterministic.
#include <algorithm>

#include "runtime/kernels/conv/conv.h"

namespace nuphar {

int64_t PackedConvWeightsFloats(int64_t Mg, int64_t K, int mr) { return (Mg + mr - 1) / mr * mr * K; }

void PackConvWeights(const float* w, int64_t Mg, int64_t K, int mr, float* out) {
  for (int64_t p = 0; p < (Mg + mr - 1) / mr; ++p) {
    float* panel = out + p * mr * K;
    for (int64_t k = 0; k < K; ++k)
      for (int i = 0; i < mr; ++i) {
        const int64_t m = p * mr + i;
        panel[k * mr + i] = m < Mg ? w[m * K + k] : 0.0f;
      }
  }
}

}  // namespace nuphar
