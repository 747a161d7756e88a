// Internal: the per-ISA micro-kernels of gemv_f32.h; only gemm_dispatch.cc chooses between them.
#pragma once

#include "runtime/kernels/math/gemv_f32.h"

namespace nuphar {
namespace gemv_ref {
void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate);
}
namespace gemv_avx2 {
void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate);
}
namespace gemv_avx512 {
void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate);
}
}  // namespace nuphar
