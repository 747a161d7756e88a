// GEMV micro-kernel, AVX2: one row of A times all of B. Per 32-column block, 4 accumulators (one
// per panel) stay in registers for the whole K; per k-group: one vpbroadcastd of A and 4 x
// (load, vpmaddubsw, vpmaddwd(ones), vpaddd). No horizontal sums; the block walks one
// sequential 128-byte-per-group stream.
#include <immintrin.h>

#include "runtime/kernels/ngemm/avx2_ops.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

using avx2::LoadGroup;
using avx2::StoreColumns;

template <class Op>
void GemvBlocks(const NgemmTileArgs& t) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t full_groups = row_bytes / 4;
  const bool has_tail = row_bytes % 4 != 0;
  const uint32_t tail = has_tail ? LoadActivationGroup(t.a, 4 * full_groups, row_bytes) : 0;

  for (int64_t col0 = 0; col0 < t.cols; col0 += kBlockCols) {
    const uint8_t* b = t.b + (col0 / kBlockCols) * t.block_stride;
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    auto step = [&](uint32_t group, const uint8_t* bg) __attribute__((always_inline)) {
      const typename Op::A a = Op::Prepare(group);
      const auto* v = reinterpret_cast<const __m256i*>(bg);
      acc0 = _mm256_add_epi32(acc0, Op::Dot(a, _mm256_load_si256(v + 0), ones16));
      acc1 = _mm256_add_epi32(acc1, Op::Dot(a, _mm256_load_si256(v + 1), ones16));
      acc2 = _mm256_add_epi32(acc2, Op::Dot(a, _mm256_load_si256(v + 2), ones16));
      acc3 = _mm256_add_epi32(acc3, Op::Dot(a, _mm256_load_si256(v + 3), ones16));
    };
    int64_t g = 0;
    for (; g + 2 <= full_groups; g += 2) {
      step(LoadGroup(t.a + 4 * g), b + g * kGroupBytes);
      step(LoadGroup(t.a + 4 * g + 4), b + (g + 1) * kGroupBytes);
    }
    if (g < full_groups) step(LoadGroup(t.a + 4 * g), b + g * kGroupBytes);
    if (has_tail) step(tail, b + full_groups * kGroupBytes);

    int32_t* c = t.c + col0;
    const int64_t valid = t.cols - col0;
    StoreColumns(c + 0, acc0, valid, t.accumulate);
    StoreColumns(c + 8, acc1, valid - 8, t.accumulate);
    StoreColumns(c + 16, acc2, valid - 16, t.accumulate);
    StoreColumns(c + 24, acc3, valid - 24, t.accumulate);
  }
}

}  // namespace

void GemvAvx2(const NgemmTileArgs& t) {
  avx2::WithOp(t, [&]<class Op>() { GemvBlocks<Op>(t); });
}

}  // namespace nuphar::ngemm
