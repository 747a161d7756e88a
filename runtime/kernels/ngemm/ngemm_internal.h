// NGEMM internals shared by the driver, dispatch and the per-ISA files (not part of the API).
#pragma once

#include <cstdint>
#include <cstring>

#include "runtime/kernels/ngemm/ngemm.h"

namespace nuphar::ngemm {

/// Bytes of one k-group (4 int8 or 2 int16 values) of one 8-column panel, and of a whole
/// 32-column block per k-group.
inline constexpr int kPanelBytes = 32;
inline constexpr int kGroupBytes = 4 * kPanelBytes;
inline constexpr int kBlockCols = 32;

inline int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// Values per 4-byte group for a weight type.
inline int GroupElems(WeightType type) { return type == WeightType::kInt16 ? 2 : 4; }

/// Reads the 4-byte activation group at byte `offset` of a row of `row_bytes` bytes; bytes past
/// the row end read as zero (the last partial group of K), so A never needs padding.
inline uint32_t LoadActivationGroup(const uint8_t* row, int64_t offset, int64_t row_bytes) {
  uint32_t v = 0;
  const int64_t left = row_bytes - offset;
  std::memcpy(&v, row + offset, left >= 4 ? 4 : static_cast<size_t>(left));
  return v;
}

/// Bytes of A per element for a mode.
inline int ActivationBytes(NgemmMode mode) { return mode == NgemmMode::kS16S16 ? 2 : 1; }

// Reference path (always built).
void PackBRef(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb, uint8_t* packed,
              int32_t* col_sums, bool* within_7bit);
void KernelRef(const NgemmTileArgs& args);
void GemvRef(const NgemmTileArgs& args);

// AVX2 path (pack_avx2.cc, kernel_avx2.cc, gemv_avx2.cc), only called when CPUID has AVX2.
void PackBAvx2(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb, uint8_t* packed,
               int32_t* col_sums, bool* within_7bit);
void KernelAvx2(const NgemmTileArgs& args);
void GemvAvx2(const NgemmTileArgs& args);

// AVX-VNNI path (kernel_avxvnni.cc; packing is the AVX2 one), only called when CPUID has it.
void KernelAvxVnni(const NgemmTileArgs& args);
void GemvAvxVnni(const NgemmTileArgs& args);

// AVX-512 paths (kernel_avx512.cc: BW without VNNI; kernel_avx512vnni.cc); packing is the AVX2 one.
void KernelAvx512(const NgemmTileArgs& args);
void GemvAvx512(const NgemmTileArgs& args);
void KernelAvx512Vnni(const NgemmTileArgs& args);
void GemvAvx512Vnni(const NgemmTileArgs& args);

/// Tiles after the guards of R2 for one call.
struct ResolvedTiles {
  int64_t m, n, k;
  bool n_outer;     // permute outer|all
  bool rows_outer;  // permute inner|all
};
ResolvedTiles ResolveTiles(const NgemmTiles& tiles, int64_t M, int64_t n_pad, int64_t k_pad);

}  // namespace nuphar::ngemm
