// GEMM micro-kernel, AVX2 (no VNNI): 4 x 16 register blocks of vpmaddubsw + vpmaddwd(ones) +
// vpaddd (kernel_templates_avx2.h); the exact and int16 modes use the same blocking.
#include "runtime/kernels/ngemm/kernel_templates_avx2.h"

namespace nuphar::ngemm {

void KernelAvx2(const NgemmTileArgs& t) {
  using namespace avx2;
  constexpr int kMR = 4;  // 8 accumulators + 2 panels + broadcast + ones fit in 16 ymm
  const bool x = t.a_xor != 0;
  switch (t.mode) {
    case NgemmMode::kU8S8Fast: x ? Tile<FastU8S8<true>, kMR>(t) : Tile<FastU8S8<false>, kMR>(t); break;
    case NgemmMode::kU8S8Exact: x ? Tile<ExactU8S8<true>, kMR>(t) : Tile<ExactU8S8<false>, kMR>(t); break;
    case NgemmMode::kS16S16: Tile<S16S16, kMR>(t); break;
  }
}

}  // namespace nuphar::ngemm
