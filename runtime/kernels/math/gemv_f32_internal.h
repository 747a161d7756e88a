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
/// C[m, n] (+ bias[n] when bias is not null) for rows [0, M) and the columns of blocks [first, end)
/// (gemm_packed_f32_avx512.cc).
void GemmF32PackedBlocks(const float* a, int64_t M, int64_t lda, const PackedGemvF32& b, int64_t first, int64_t end,
                         const float* bias, float* c, int64_t ldc);
void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate);
}
}  // namespace nuphar
