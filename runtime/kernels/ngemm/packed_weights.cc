// Packing front-end: the size query and PackedInt8Weights::Pack (R12). The byte shuffling is
// done by the dispatched pack_b hook (pack_ref.cc / pack_avx2.cc).
#include <cstdint>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

int64_t PanelBytes(int64_t K, int64_t N, WeightType type) {
  const int group = GroupElems(type);
  return RoundUp(N, kBlockCols) / kBlockCols * (RoundUp(K, group) / group * kGroupBytes);
}

}  // namespace

struct PackAccess {
  static bool Pack(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb, void* buffer,
                   PackedInt8Weights* out) {
    if (B == nullptr || buffer == nullptr || out == nullptr || K <= 0 || N <= 0 || ldb < N) return false;
    if (reinterpret_cast<uintptr_t>(buffer) % 64 != 0) return false;
    const int group = GroupElems(type);
    PackedInt8Weights w;
    w.k_ = K;
    w.n_ = N;
    w.k_pad_ = RoundUp(K, group);
    w.n_pad_ = RoundUp(N, kBlockCols);
    w.block_stride_ = w.k_pad_ / group * kGroupBytes;
    w.type_ = type;
    w.b_offset_ = type == WeightType::kUint8 ? 128 : 0;
    auto* bytes = static_cast<uint8_t*>(buffer);
    auto* sums = reinterpret_cast<int32_t*>(bytes + PanelBytes(K, N, type));  // 128-byte multiple: aligned
    GetNgemmDispatch().pack_b(B, type, K, N, ldb, bytes, sums, &w.within_7bit_);
    w.data_ = bytes;
    w.col_sums_ = sums;
    *out = w;
    return true;
  }
};

size_t PackedInt8Weights::RequiredBytes(int64_t K, int64_t N, WeightType type) {
  if (K <= 0 || N <= 0) return 0;
  return static_cast<size_t>(PanelBytes(K, N, type) + RoundUp(N, kBlockCols) * 4);
}

bool PackedInt8Weights::Pack(const int8_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                             PackedInt8Weights* out) {
  return PackAccess::Pack(B, WeightType::kInt8, K, N, ldb, buffer, out);
}
bool PackedInt8Weights::Pack(const uint8_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                             PackedInt8Weights* out) {
  return PackAccess::Pack(B, WeightType::kUint8, K, N, ldb, buffer, out);
}
bool PackedInt8Weights::Pack(const int16_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                             PackedInt8Weights* out) {
  return PackAccess::Pack(B, WeightType::kInt16, K, N, ldb, buffer, out);
}

}  // namespace nuphar::ngemm
