// Micro-kernel, portable reference: one tile of C over packed B, one output at a time. Exact
// for every mode (it has no saturating step), so it is the path every other one is tested against.
#include <cstring>

#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

/// Dot product of one activation group with one packed column group, exact in (wrapping) int32.
inline uint32_t GroupDot(uint32_t a_group, const uint8_t* b, NgemmMode mode, uint8_t a_xor) {
  uint8_t a[4];
  std::memcpy(a, &a_group, 4);
  uint32_t sum = 0;
  if (mode == NgemmMode::kS16S16) {
    for (int i = 0; i < 2; ++i) {
      int16_t av, bv;
      std::memcpy(&av, a + 2 * i, 2);
      std::memcpy(&bv, b + 2 * i, 2);
      sum += static_cast<uint32_t>(int32_t{av} * int32_t{bv});
    }
  } else {
    for (int i = 0; i < 4; ++i) {
      sum += static_cast<uint32_t>(int32_t{static_cast<uint8_t>(a[i] ^ a_xor)} * int32_t{static_cast<int8_t>(b[i])});
    }
  }
  return sum;
}

}  // namespace

void KernelRef(const NgemmTileArgs& t) {
  const int64_t row_bytes = t.k_elems * ActivationBytes(t.mode);
  const int64_t groups = (row_bytes + 3) / 4;
  for (int64_t r = 0; r < t.rows; ++r) {
    const uint8_t* a_row = t.a + r * t.lda_bytes;
    for (int64_t j = 0; j < t.cols; ++j) {
      const int64_t col = t.col_in_block + j;
      const uint8_t* b = t.b + (col / kBlockCols) * t.block_stride + ((col % kBlockCols) / 8) * kPanelBytes + (col % 8) * 4;
      uint32_t sum = 0;
      for (int64_t g = 0; g < groups; ++g) {
        sum += GroupDot(LoadActivationGroup(a_row, 4 * g, row_bytes), b + g * kGroupBytes, t.mode, t.a_xor);
      }
      int32_t* c = t.c + r * t.ldc + j;
      *c = static_cast<int32_t>(t.accumulate ? static_cast<uint32_t>(*c) + sum : sum);
    }
  }
}

void GemvRef(const NgemmTileArgs& t) { KernelRef(t); }

}  // namespace nuphar::ngemm
