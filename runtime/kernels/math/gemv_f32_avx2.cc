// Micro-kernel of gemv_f32.h, AVX2+FMA (this file alone gets -mavx2 -mfma): per 32-column block,
// 8 accumulators (4 column groups x even/odd k) so the FMA latency is hidden, one broadcast per
// k and one sequential 128-byte stream per block.
#include <immintrin.h>

#include <algorithm>

#include "runtime/kernels/math/gemv_f32_internal.h"

namespace nuphar::gemv_avx2 {

void GemvF32PackedBlocks(const float* a, const PackedGemvF32& b, int64_t first, int64_t end, float* y, bool accumulate) {
  constexpr int64_t kCols = PackedGemvF32::kBlockCols;
  const int64_t K = b.K(), N = b.N();
  for (int64_t n0 = first * kCols; n0 < N && n0 < end * kCols; n0 += kCols) {
    const float* p = b.block(n0 / kCols);
    __m256 even[4], odd[4];
    for (int g = 0; g < 4; ++g) even[g] = odd[g] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * kCols) {
      const __m256 x0 = _mm256_broadcast_ss(a + k), x1 = _mm256_broadcast_ss(a + k + 1);
      for (int g = 0; g < 4; ++g) {
        even[g] = _mm256_fmadd_ps(x0, _mm256_load_ps(p + 8 * g), even[g]);
        odd[g] = _mm256_fmadd_ps(x1, _mm256_load_ps(p + kCols + 8 * g), odd[g]);
      }
    }
    if (k < K) {
      const __m256 x0 = _mm256_broadcast_ss(a + k);
      for (int g = 0; g < 4; ++g) even[g] = _mm256_fmadd_ps(x0, _mm256_load_ps(p + 8 * g), even[g]);
    }
    alignas(32) float sums[kCols];
    for (int g = 0; g < 4; ++g) _mm256_store_ps(sums + 8 * g, _mm256_add_ps(even[g], odd[g]));
    const int64_t cols = std::min(kCols, N - n0);
    float* out = y + n0;
    if (cols == kCols && accumulate) {
      for (int g = 0; g < 4; ++g)
        _mm256_storeu_ps(out + 8 * g, _mm256_add_ps(_mm256_loadu_ps(out + 8 * g), _mm256_load_ps(sums + 8 * g)));
    } else if (cols == kCols) {
      for (int g = 0; g < 4; ++g) _mm256_storeu_ps(out + 8 * g, _mm256_load_ps(sums + 8 * g));
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = accumulate ? out[j] + sums[j] : sums[j];
    }
  }
}

}  // namespace nuphar::gemv_avx2
