// Internal: the per-ISA micro-kernels of gemv_f32.h; only gemm_dispatch.cc chooses between them.
// Each computes y[n] for the columns of blocks [first, end) (y is the whole output).
#pragma once

#include "runtime/kernels/math/gemv_f32.h"

namespace nuphar {
namespace gemv_ref {
void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate);
}
namespace gemv_avx2 {
void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate);
}
namespace gemv_avx512 {
void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate);
}
}  // namespace nuphar
