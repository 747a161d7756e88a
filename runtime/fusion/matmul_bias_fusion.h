// Fuses a float MatMul against a constant matrix and the Add of a constant bias row after it
// into one node, run by the MatMul kernel (runtime/kernels/nn/nn_matmul.cc), which adds the bias
// as it stores the product instead of in a second pass over the output.
#pragma once

#include <memory>

#include "runtime/core/graph_rewrite.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// Op of the fused node (domain kFusedDomain; never written to a model file):
/// Z = MatMulAddBias(A, B, bias) = MatMul(A, B) + bias, B a constant float [K, N], bias a
/// constant float [N].
inline constexpr const char* kMatMulAddBiasOp = "MatMulAddBias";

/// Rewrites every match in `graph` (this level only; bodies are rewritten when compiled).
/// Returns the number of fused nodes emitted.
int FuseMatMulAddBias(onnx::GraphProto* graph, const ConstantLookup& lookup, int onnx_opset);

/// The fusion as a runtime pass (graph_rewrite.h).
std::unique_ptr<GraphPass> CreateMatMulAddBiasFusion();

}  // namespace nuphar
