// The fused int8 LSTM step of DynQuantLstmCell (runtime/fusion/lstm_cell_fusion.h), one batch row:
//   pack      dq_lstm_cell_pack.cc        Wq [K, 4H] regrouped by chunks of hidden units
//   step      dq_lstm_cell_step.inc       the product of chunk u with the gate math of chunk u-1
//                                         issued inside its k loop, for any vector width
//   per ISA   dq_lstm_cell_avx512vnni.cc  zmm, 32 units per chunk, vpdpbusd
//             dq_lstm_cell_avxvnni.cc     ymm, 16 units, VEX vpdpbusd
//             dq_lstm_cell_avx2.cc        ymm, 16 units, vpmaddubsw (7-bit activations only)
//   dispatch  dq_lstm_cell_dispatch.cc    LstmCellKernelFor(tier)
// The kernel (fused_dq_lstm_cell.cc) runs it for one row when the session's tier has one and H is
// a multiple of its chunk; everything else runs DynQuantMatMul and the gate math row by row.
//
// Why one loop: a step's product streams the 4H x K weights from L2 (256 KB at H 256), while its
// gate math (dequantization, 3 Sigmoid and 2 Tanh per unit) is ~25 vector ops per vector of units
// and gate, bound by the FP ports. Run one after the other they add up; issued in small pieces
// inside the product's loop, the out-of-order core overlaps them (at the granularity of whole
// chunks it does not: docs/ngemm.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar::quant {

/// Bytes of the packed weights for K rows and H units (H a multiple of chunk_units).
size_t LstmCellPackedBytes(int64_t K, int64_t H, int chunk_units);

/// Packs int8 Wq [K, 4H] (row-major, the quantizer's layout) for the fused step: chunk after
/// chunk of `chunk_units` units; in a chunk, per group of 4 rows of Wq (K padded to 4 with zeros),
/// the chunk's columns of gate i, then o, f and c, each column's 4 bytes together (the dot
/// product's operand). gate_parts[r] = which quarter of Wq's columns holds gate r (r = i, o, f, c).
void PackLstmCellWeights(const int8_t* wq, int64_t K, int64_t H, int chunk_units, const int gate_parts[4],
                         uint8_t* packed);

/// One step of one row: h, c from the quantized h_prev. The float vectors are indexed by Wq's
/// column (part * H + unit); `add` (the input projection row, 4H) may be null. c_prev and c may be
/// the same buffer; q holds K rounded up to 4 bytes (the pad read as zeros by the weights).
struct LstmCellStep {
  const uint8_t* packed = nullptr;
  int64_t K = 0, H = 0;
  int gate_parts[4] = {0, 1, 2, 3};
  const uint8_t* q = nullptr;  ///< quantized h_prev
  ngemm::DynQuantRowScalars row;
  const float* step = nullptr;
  const float* base = nullptr;
  const float* rowsum = nullptr;
  const float* add = nullptr;
  const float* c_prev = nullptr;
  float* c = nullptr;
  float* h = nullptr;
  bool descending = false;  ///< chunks from the last to the first (any order gives the same floats)
};
void LstmCellStepAvx512Vnni(const LstmCellStep& s);
void LstmCellStepAvxVnni(const LstmCellStep& s);
void LstmCellStepAvx2(const LstmCellStep& s);

/// One ISA's fused step and the chunk its packing uses (two vectors of units).
struct LstmCellKernel {
  int chunk_units = 0;
  void (*step)(const LstmCellStep&) = nullptr;
};
/// The fused step of `tier` (the session's), or null when it has none: portable, or AVX2/AVX-512
/// without VNNI when the activations are not 7-bit (`a_within_7bit`: the quantizer's Clip(0, 127)).
const LstmCellKernel* LstmCellKernelFor(IsaTier tier, bool a_within_7bit);

}  // namespace nuphar::quant
