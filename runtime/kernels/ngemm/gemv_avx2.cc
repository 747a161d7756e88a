// GEMV micro-kernel, AVX2 (no VNNI): per 32-column block 4 accumulators, per k-group one
// vpbroadcastd of A and 4 x (vpmaddubsw, vpmaddwd(ones), vpaddd) (kernel_templates_avx2.h).
#include "runtime/kernels/ngemm/kernel_templates_avx2.h"

namespace nuphar::ngemm {

void GemvAvx2(const NgemmTileArgs& t) {
  using namespace avx2;
  constexpr int kSets = 2;  // the add chain is short (vpaddd); 2 sets only unroll the loop
  const bool x = t.a_xor != 0;
  switch (t.mode) {
    case NgemmMode::kU8S8Fast: x ? GemvBlocks<FastU8S8<true>, kSets>(t) : GemvBlocks<FastU8S8<false>, kSets>(t); break;
    case NgemmMode::kU8S8Exact: x ? GemvBlocks<ExactU8S8<true>, kSets>(t) : GemvBlocks<ExactU8S8<false>, kSets>(t); break;
    case NgemmMode::kS16S16: GemvBlocks<S16S16, kSets>(t); break;
  }
}

}  // namespace nuphar::ngemm
