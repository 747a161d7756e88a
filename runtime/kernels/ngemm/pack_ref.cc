// Packing, portable reference: int8/uint8/int16 [K, N] -> the panel layout of ngemm.h, with
// zeroed padding, column sums and the [-64, 64] check.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

/// Stored (re-centred) value of B[k, n].
inline int32_t StoredValue(const void* B, WeightType type, int64_t k, int64_t n, int64_t ldb) {
  switch (type) {
    case WeightType::kInt8: return static_cast<const int8_t*>(B)[k * ldb + n];
    case WeightType::kUint8: return static_cast<int32_t>(static_cast<const uint8_t*>(B)[k * ldb + n]) - 128;
    case WeightType::kInt16: return static_cast<const int16_t*>(B)[k * ldb + n];
  }
  return 0;
}

}  // namespace

void PackBRef(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb, uint8_t* packed,
              int32_t* col_sums, bool* within_7bit) {
  const int group = GroupElems(type);
  const int64_t k_pad = RoundUp(K, group);
  const int64_t n_pad = RoundUp(N, kBlockCols);
  const int64_t block_stride = k_pad / group * kGroupBytes;
  std::memset(packed, 0, static_cast<size_t>(n_pad / kBlockCols * block_stride));
  std::fill(col_sums, col_sums + n_pad, 0);
  bool small = true;
  for (int64_t n = 0; n < N; ++n) {
    uint8_t* column = packed + (n / kBlockCols) * block_stride + ((n % kBlockCols) / 8) * kPanelBytes + (n % 8) * 4;
    uint32_t sum = 0;  // wraps like the kernels' int32 arithmetic
    for (int64_t k = 0; k < K; ++k) {
      const int32_t v = StoredValue(B, type, k, n, ldb);
      uint8_t* dst = column + (k / group) * kGroupBytes;
      if (type == WeightType::kInt16) {
        const int16_t v16 = static_cast<int16_t>(v);
        std::memcpy(dst + (k % 2) * 2, &v16, 2);
      } else {
        dst[k % 4] = static_cast<uint8_t>(static_cast<int8_t>(v));
        small = small && v >= -64 && v <= 64;
      }
      sum += static_cast<uint32_t>(v);
    }
    col_sums[n] = static_cast<int32_t>(sum);
  }
  *within_7bit = type != WeightType::kInt16 && small;
}

}  // namespace nuphar::ngemm
