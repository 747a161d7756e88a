// Micro-kernel of gemv_f32.h, AVX-512 (this file alone gets the avx512 flags): two 32-column
// blocks at a time, 8 zmm accumulators (2 blocks x 2 column halves x even/odd k). Every column's
// arithmetic is the AVX2 kernel's (gemv_f32_avx2.cc): even and odd k in two FMA chains in k order,
// added at the end, then added to y; so both tiers give bit-identical results, and the wider loads
// stream the packed weights (from L2 at RNN sizes) at up to twice the AVX2 rate.
#include <immintrin.h>

#include <algorithm>

#include "runtime/kernels/math/gemv_f32_internal.h"

namespace nuphar::gemv_avx512 {
namespace {

constexpr int64_t kCols = PackedGemvF32::kBlockCols;

// y[n0 .. n0 + cols) from one block's even and odd sums (two zmm halves each).
inline void Store(const __m512 even[2], const __m512 odd[2], int64_t cols, bool accumulate, float* out) {
  const __m512 s0 = _mm512_add_ps(even[0], odd[0]), s1 = _mm512_add_ps(even[1], odd[1]);
  if (cols == kCols) {
    _mm512_storeu_ps(out, accumulate ? _mm512_add_ps(_mm512_loadu_ps(out), s0) : s0);
    _mm512_storeu_ps(out + 16, accumulate ? _mm512_add_ps(_mm512_loadu_ps(out + 16), s1) : s1);
    return;
  }
  alignas(64) float sums[kCols];
  _mm512_store_ps(sums, s0);
  _mm512_store_ps(sums + 16, s1);
  for (int64_t j = 0; j < cols; ++j) out[j] = accumulate ? out[j] + sums[j] : sums[j];
}

}  // namespace

void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate) {
  const int64_t K = b.K(), N = b.N();
  const int64_t blocks = std::min((N + kCols - 1) / kCols, end);
  int64_t blk = first;
  for (; blk + 2 <= blocks; blk += 2) {
    const float* p = b.block(blk);
    const float* q = b.block(blk + 1);
    __m512 pe[2], po[2], qe[2], qo[2];
    for (int h = 0; h < 2; ++h) pe[h] = po[h] = qe[h] = qo[h] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * kCols, q += 2 * kCols) {
      const __m512 x0 = _mm512_set1_ps(a[k]), x1 = _mm512_set1_ps(a[k + 1]);
      for (int h = 0; h < 2; ++h) {
        pe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(p + 16 * h), pe[h]);
        po[h] = _mm512_fmadd_ps(x1, _mm512_load_ps(p + kCols + 16 * h), po[h]);
        qe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(q + 16 * h), qe[h]);
        qo[h] = _mm512_fmadd_ps(x1, _mm512_load_ps(q + kCols + 16 * h), qo[h]);
      }
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(a[k]);
      for (int h = 0; h < 2; ++h) {
        pe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(p + 16 * h), pe[h]);
        qe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(q + 16 * h), qe[h]);
      }
    }
    const int64_t n0 = blk * kCols;
    Store(pe, po, kCols, accumulate, y + n0);  // the first of two blocks is never the last one
    Store(qe, qo, std::min(kCols, N - n0 - kCols), accumulate, y + n0 + kCols);
  }
  if (blk < blocks) {
    const float* p = b.block(blk);
    __m512 pe[2], po[2];
    for (int h = 0; h < 2; ++h) pe[h] = po[h] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * kCols) {
      const __m512 x0 = _mm512_set1_ps(a[k]), x1 = _mm512_set1_ps(a[k + 1]);
      for (int h = 0; h < 2; ++h) {
        pe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(p + 16 * h), pe[h]);
        po[h] = _mm512_fmadd_ps(x1, _mm512_load_ps(p + kCols + 16 * h), po[h]);
      }
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(a[k]);
      for (int h = 0; h < 2; ++h) pe[h] = _mm512_fmadd_ps(x0, _mm512_load_ps(p + 16 * h), pe[h]);
    }
    const int64_t n0 = blk * kCols;
    Store(pe, po, std::min(kCols, N - n0), accumulate, y + n0);
  }
}

}  // namespace nuphar::gemv_avx512
