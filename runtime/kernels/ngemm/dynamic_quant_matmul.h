// The fused dynamic-quantized MatMul (spec runtime.md R3): the quantizer's per-row dynamic
// activation quantization + MatMulInteger(16) + four-term dequantization, run as one call that
// equals the unfused graph bit for bit.
//
// # Arithmetic order (the graph's, editor_quantizer.md §3.5-§3.7), every op rounded to float32
//
//   asymm8 (26 nodes)                          symm16 (14 nodes)
//   rmax = ReduceMax(X), bias = ReduceMin(X)   delta = ReduceMax(Abs(X))
//   delta = rmax - bias                        inv = Reciprocal(delta')
//   inv = Reciprocal(delta')                   norm = X * inv
//   norm = (X - bias) * inv
//   scale = delta * inv_range                  scale = delta * inv_range
//   q = Cast(Clip(Floor((norm * range) + half), clip_min, clip_max))       (Mul, then Add: no FMA)
//   qsum = ReduceSum(Cast<i32>(q))
//   Q_Y = MatMulInteger(q, W_q)                Q_Y = MatMulInteger16(q, W_q)
//   o0 = (step*scale)*float(Q_Y)               Y = (step*scale)*float(Q_Y)
//   o1 = (step*bias)*rowsum_w
//   o2 = base*(scale*float(qsum))
//   o3 = base*(bias*k_as_float)
//   Y = ((o3 + o2) + o1) + o0                  (Sum's left-to-right order)
//   then optionally Y = Y + add[m, n]          (a following Add keeps its own rounding)
// delta' = Max(delta, guard_value) with --guard_zero_delta, else delta. A constant row gives
// inv = inf and norm = NaN; Clip keeps NaN and Cast<int> of NaN is 0 (the reference executor's
// rule), so q = 0 and qsum = 0 there, and Y equals the graph's because scale = 0.
//
// Thread safety: reentrant; all state is in the caller's weights, scratch and output.
#pragma once

#include <cfloat>
#include <cstddef>
#include <cstdint>

#include "runtime/kernels/ngemm/ngemm.h"

namespace nuphar::ngemm {

enum class DynQuantScheme : uint8_t {
  kAsymm8,  ///< asymm8_param0_input1: u8 activations, int8 weights, MatMulInteger
  kSymm16,  ///< symm16_param3_input3: s16 activations and weights, MatMulInteger16
};

/// The values of the pattern's constant operands, as found in the graph (the recognizer checks
/// them; the kernel uses exactly these floats).
struct DynQuantConstants {
  float inv_range = 1.0f / 128.0f;  ///< Mul(delta, 1/R_x)
  float range = 128.0f;             ///< Mul(norm, R_x)
  float half = 0.5f;                ///< Add(., 0.5)
  float clip_min = 0.0f;
  float clip_max = 127.0f;
  float k_as_float = 0.0f;          ///< Mul(bias_X, K) (asymm8 only)
  bool guard_zero_delta = false;    ///< Max(delta, guard_value) before Reciprocal
  float guard_value = FLT_MIN;
};

/// Per-session weights: packed W_q (int8 for asymm8, int16 for symm16) and the per-column
/// dequantization vectors of the graph (length N, float32, not pre-multiplied).
struct DynQuantWeights {
  const PackedInt8Weights* packed = nullptr;
  const float* step = nullptr;
  const float* base = nullptr;            ///< asymm8 only
  const float* qparam_rowsum = nullptr;   ///< asymm8 only: the column sums as float32
};

/// Bytes of scratch (64-byte aligned) a call with these sizes needs.
size_t DynQuantMatMulScratchBytes(DynQuantScheme scheme, int64_t M, int64_t K, int64_t N);

/// Y[M, N] (row stride ldy) from X[M, K] (row stride ldx). `scratch` holds
/// DynQuantMatMulScratchBytes bytes, 64-byte aligned. No allocation. Returns false (writing
/// nothing) on inconsistent arguments.
/// The optional following Add: Y[m, n] = Y[m, n] + add[m * ld_add + n], with ld_add = 0 for a
/// bias broadcast over rows (length N) or N (or more) for a [M, N] tensor such as an LSTM step's
/// input projection. The addition is one more float32 rounding, as the Add node's.
/// `tiles`: the session's NUPHAR_IGEMM_* settings for the integer product (M >= 2).
bool DynQuantMatMul(DynQuantScheme scheme, const float* X, int64_t M, int64_t K, int64_t ldx,
                    const DynQuantWeights& weights, const DynQuantConstants& constants,
                    void* scratch, float* Y, int64_t ldy, const float* add = nullptr,
                    int64_t ld_add = 0, const NgemmTiles& tiles = {});

/// The activation side of DynQuantMatMul alone, for a kernel that runs its own product on the
/// quantized row (the fused LSTM cell, runtime/kernels/quant/fused_dq_lstm_cell.cc): quantizes
/// x[0, K) into `q` (uint8 for asymm8, int16 for symm16) exactly as DynQuantMatMul does and
/// returns the row's scalars of the dequantization (spec R3 order):
///   y = ((base*bias_k + base*scale_qsum) + (step*bias)*rowsum) + (step*scale)*float(Q_Y)
struct DynQuantRowScalars {
  float scale = 0.0f;       ///< scale_X
  float bias = 0.0f;        ///< bias_X (row min; 0 for symm16)
  float scale_qsum = 0.0f;  ///< scale_X * float(ReduceSum(Q_X))
  float bias_k = 0.0f;      ///< bias_X * k_as_float
};
DynQuantRowScalars QuantizeActivationRow(DynQuantScheme scheme, const float* x, int64_t K,
                                         const DynQuantConstants& constants, void* q,
                                         std::optional<IsaTier> tier = std::nullopt);

}  // namespace nuphar::ngemm
