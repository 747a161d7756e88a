// What the kernels of the fused dynamic-quantized nodes share (DynQuantMatMul in
// fused_dynamic_quant_matmul.cc, DynQuantLstmCell in fused_dq_lstm_cell.cc): the node's inputs 1-5
// and attributes read and packed once at load.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"

namespace nuphar {

/// The weights, constants and settings of DynQuantMatMul(X, Wq, step, base, rowsum[, add]).
/// Not movable: `weights` points into the object.
struct DynQuantMatMulState {
  DynQuantMatMulState() = default;
  DynQuantMatMulState(const DynQuantMatMulState&) = delete;
  DynQuantMatMulState& operator=(const DynQuantMatMulState&) = delete;

  /// Reads the scheme and constants, packs Wq (input 1) and copies step, base and rowsum; an
  /// error names what is wrong with the node.
  Status Init(const NodeInfo& node);
  /// The Add operand's row stride in a direct call (DirectCall), from its element count: 0 for one
  /// row of n, else n (Compute accepted the shapes before).
  int64_t DirectAddStride(int64_t add_size) const { return add_size == n ? 0 : n; }

  ngemm::DynQuantScheme scheme = ngemm::DynQuantScheme::kAsymm8;
  int64_t k = 0, n = 0;
  Tensor packed_storage;
  ngemm::PackedInt8Weights packed;
  std::vector<float> step, base, rowsum;
  ngemm::DynQuantWeights weights;
  ngemm::DynQuantConstants constants;
  ngemm::NgemmTiles tiles;
  bool has_add = false;  ///< input 5: the absorbed following Add's operand
};

/// Row stride of the Add operand for ngemm::DynQuantMatMul (0: one row of N added to every row
/// of Y; N: one value per element of Y), widening *y_shape to the broadcast result's rank when the
/// operand has leading 1s. A model whose declared shapes were wrong gets an error.
Expected<int64_t> AddOperandStride(const std::vector<int64_t>& add_shape, int64_t n, std::vector<int64_t>* y_shape);

/// Registered by RegisterFusedKernels (fused_dynamic_quant_matmul.cc).
void RegisterDynQuantLstmCellKernel(KernelRegistry& r);

}  // namespace nuphar
