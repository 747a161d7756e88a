// Packing, AVX2: int8/uint8 [K, N] -> panel layout with a 4x32 byte transpose per k-group, then
// column sums and the [-64, 64] check computed from the packed vectors. int16 weights and the
// ragged edges (K % 4, N % 32) go through a scalar loop; results equal pack_ref.cc byte for byte.
#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/ngemm/avx2_ops.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

/// Transposes 4 rows x 32 columns of bytes into the 4 panel vectors [8 cols][4 k].
inline void TransposeGroup(__m256i r0, __m256i r1, __m256i r2, __m256i r3, uint8_t* dst) {
  const __m256i r01lo = _mm256_unpacklo_epi8(r0, r1), r01hi = _mm256_unpackhi_epi8(r0, r1);
  const __m256i r23lo = _mm256_unpacklo_epi8(r2, r3), r23hi = _mm256_unpackhi_epi8(r2, r3);
  // Lane 0 holds columns 0-15, lane 1 columns 16-31; each q has 4 columns x 4 k per lane.
  const __m256i q0 = _mm256_unpacklo_epi16(r01lo, r23lo);  // cols 0-3 | 16-19
  const __m256i q1 = _mm256_unpackhi_epi16(r01lo, r23lo);  // cols 4-7 | 20-23
  const __m256i q2 = _mm256_unpacklo_epi16(r01hi, r23hi);  // cols 8-11 | 24-27
  const __m256i q3 = _mm256_unpackhi_epi16(r01hi, r23hi);  // cols 12-15 | 28-31
  auto* out = reinterpret_cast<__m256i*>(dst);
  _mm256_store_si256(out + 0, _mm256_permute2x128_si256(q0, q1, 0x20));
  _mm256_store_si256(out + 1, _mm256_permute2x128_si256(q2, q3, 0x20));
  _mm256_store_si256(out + 2, _mm256_permute2x128_si256(q0, q1, 0x31));
  _mm256_store_si256(out + 3, _mm256_permute2x128_si256(q2, q3, 0x31));
}

}  // namespace

void PackBAvx2(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb, uint8_t* packed,
               int32_t* col_sums, bool* within_7bit) {
  if (type == WeightType::kInt16) {
    PackBRef(B, type, K, N, ldb, packed, col_sums, within_7bit);
    return;
  }
  const auto* src = static_cast<const uint8_t*>(B);
  const uint8_t flip = type == WeightType::kUint8 ? 0x80 : 0;  // u8 - 128 as s8 == u8 ^ 0x80
  const int64_t k_pad = RoundUp(K, 4), n_pad = RoundUp(N, kBlockCols);
  const int64_t block_stride = k_pad / 4 * kGroupBytes;
  const int64_t blocks = n_pad / kBlockCols, full_blocks = N / kBlockCols, full_groups = K / 4;
  std::memset(packed, 0, static_cast<size_t>(blocks * block_stride));

  const __m256i flip_v = _mm256_set1_epi8(static_cast<char>(flip));
  for (int64_t nb = 0; nb < full_blocks; ++nb) {
    for (int64_t g = 0; g < full_groups; ++g) {
      const uint8_t* row = src + 4 * g * ldb + nb * kBlockCols;
      auto load = [&](int i) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i * ldb)), flip_v);
      };
      TransposeGroup(load(0), load(1), load(2), load(3), packed + nb * block_stride + g * kGroupBytes);
    }
  }
  // Ragged edges: the k tail of the full blocks, and every k of the last partial block.
  auto put = [&](int64_t k, int64_t n) {
    packed[(n / kBlockCols) * block_stride + (k / 4) * kGroupBytes + ((n % kBlockCols) / 8) * kPanelBytes + (n % 8) * 4 + k % 4] =
        src[k * ldb + n] ^ flip;
  };
  for (int64_t k = 4 * full_groups; k < K; ++k)
    for (int64_t n = 0; n < full_blocks * kBlockCols; ++n) put(k, n);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = full_blocks * kBlockCols; n < N; ++n) put(k, n);

  // Column sums and range from the packed vectors (padding is zero, so it adds nothing).
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  __m256i lo = _mm256_setzero_si256(), hi = lo;
  for (int64_t nb = 0; nb < blocks; ++nb) {
    __m256i sum[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t g = 0; g < k_pad / 4; ++g) {
      const auto* v = reinterpret_cast<const __m256i*>(packed + nb * block_stride + g * kGroupBytes);
      for (int p = 0; p < 4; ++p) {
        const __m256i x = _mm256_load_si256(v + p);
        lo = _mm256_min_epi8(lo, x);
        hi = _mm256_max_epi8(hi, x);
        // 1*b + 1*b is at most 256 in magnitude: vpmaddubsw is exact here.
        sum[p] = _mm256_add_epi32(sum[p], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, x), ones16));
      }
    }
    for (int p = 0; p < 4; ++p) _mm256_storeu_si256(reinterpret_cast<__m256i*>(col_sums + nb * kBlockCols + 8 * p), sum[p]);
  }
  alignas(32) int8_t lo_b[32], hi_b[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lo_b), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(hi_b), hi);
  bool small = true;
  for (int i = 0; i < 32; ++i) small = small && lo_b[i] >= -64 && hi_b[i] <= 64;
  *within_7bit = small;
}

}  // namespace nuphar::ngemm
