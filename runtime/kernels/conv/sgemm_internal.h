// Internal to runtime/kernels/conv/: the GEMM micro-kernels per ISA; dispatch.cc puts them into
// ConvKernels (conv.h), nothing else calls them by name.
#pragma once

#include <cstdint>

#define NUPHAR_CONV_SGEMM_DECLARE(ns)                                                                                \
  namespace nuphar::ns {                                                                                             \
  void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows, \
                  int64_t cols);                                                                                     \
  }

NUPHAR_CONV_SGEMM_DECLARE(conv_ref)
NUPHAR_CONV_SGEMM_DECLARE(conv_avx2)
NUPHAR_CONV_SGEMM_DECLARE(conv_avx512)

namespace nuphar::conv_avx512 {
/// Two consecutive panels at once for cols <= 6 (ConvKernels::gemm_panel_pair).
void SgemmPanelPair(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows2,
                    int64_t cols);
}  // namespace nuphar::conv_avx512
