// Plain integer GEMM with zero points, the reference path of MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv (the int8 AVX2 kernels are in kernels/ngemm):
//
//   C[m, n] = sum_k (A[m, k] - za[m]) * (B[k, n] - zb[n])        (int32, wrapping modulo 2^32)
//
// za/zb may be null (0), one value (per_row/per_col false) or one value per row/column.
#pragma once

#include <cstdint>

namespace nuphar {

struct IntegerZeroPoints {
  const int32_t* a = nullptr;
  bool a_per_row = false;
  const int32_t* b = nullptr;
  bool b_per_col = false;
};

/// A is [M, K] (row stride lda), B is [K, N] (row stride ldb), C is [M, N] (row stride ldc).
/// TA, TB: uint8_t, int8_t, int16_t, uint16_t or int32_t. Uses per-thread scratch for B - zb
/// unless TB is int32_t and zb is null.
template <class TA, class TB>
void IntegerGemm(int64_t M, int64_t N, int64_t K, const TA* A, int64_t lda, const TB* B, int64_t ldb,
                 const IntegerZeroPoints& zp, int32_t* C, int64_t ldc);

}  // namespace nuphar
