// Internal to runtime/kernels/conv/: the register-blocked tile and the column walk that the
// AVX2 and AVX-512 GEMM micro-kernels (sgemm_kernel_avx2.cc, sgemm_kernel_avx512.cc) share.
// Only those files include it, so it compiles with their ISA flags; each hands in a vector type
// `V` of its ISA, and only the intrinsics behind V differ between them:
//   Reg, Mask         a register of kLanes floats, and the lane mask of the last, partial tile
//   Zero()            Load(p)   MaskLoad(p, mask)   Broadcast(p) (*p in every lane)
//   Fma(a, b, acc)    a * b + acc, one rounding      Store(p, v)   MaskStore(p, mask, v)
//   NoMask()          TailMask(left) (the first `left` lanes, 0 < left < kLanes)
#pragma once

#include <cstdint>

namespace nuphar::conv {

/// C[rows, NV * kLanes] = A_panel x B for one packed panel of kMr output channels (rows <= kMr);
/// NV * kMr accumulators. With kMasked the last vector of columns is partial (`mask`).
template <class V, int kMr, int NV, bool kMasked>
inline void SgemmTile(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                      int64_t rows, typename V::Mask mask) {
  typename V::Reg acc[kMr][NV];
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = V::Zero();
  for (int64_t k = 0; k < K; ++k) {
    typename V::Reg bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j)
      bv[j] = kMasked && j == NV - 1 ? V::MaskLoad(b[k] + n0 + V::kLanes * j, mask)
                                     : V::Load(b[k] + n0 + V::kLanes * j);
    const float* ak = a + k * kMr;
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const typename V::Reg av = V::Broadcast(ak + i);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = V::Fma(av, bv[j], acc[i][j]);
    }
  }
  // Fully unrolled with constant indices, so the accumulators stay in registers (a data-dependent
  // `break` here made GCC keep them in memory and store all of them on every k).
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) {
    if (i >= rows) continue;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      if (kMasked && j == NV - 1)
        V::MaskStore(c + i * ldc + V::kLanes * j, mask, acc[i][j]);
      else
        V::Store(c + i * ldc + V::kLanes * j, acc[i][j]);
    }
  }
}

/// The columns of one panel: tiles of two vectors, then one, then a masked one for the rest.
template <class V, int kMr>
inline void SgemmColumns(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                         int64_t rows, int64_t cols) {
  int64_t n = 0;
  for (; n + 2 * V::kLanes <= cols; n += 2 * V::kLanes)
    SgemmTile<V, kMr, 2, false>(a, K, b, n0 + n, c + n, ldc, rows, V::NoMask());
  if (n + V::kLanes <= cols) {
    SgemmTile<V, kMr, 1, false>(a, K, b, n0 + n, c + n, ldc, rows, V::NoMask());
    n += V::kLanes;
  }
  if (n < cols) SgemmTile<V, kMr, 1, true>(a, K, b, n0 + n, c + n, ldc, rows, V::TailMask(static_cast<int>(cols - n)));
}

}  // namespace nuphar::conv
