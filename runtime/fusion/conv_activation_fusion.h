// Fuses a float Conv with constant weights and the elementwise chain after it into one
// FusedConv node (runtime/kernels/conv/conv.h), run by the conv family's direct/GEMM kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/fusion/dynamic_quant_matmul_fusion.h"  // ConstantLookup, kFusedDomain

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// What FuseConvActivation did.
struct ConvFusionReport {
  int convs = 0;           ///< FusedConv nodes emitted
  int absorbed_nodes = 0;  ///< epilogue nodes taken into them
  /// One line per Conv left alone: "<node>: <reason>".
  std::vector<std::string> refused;
};

/// Rewrites every float Conv with constant W (and B) in `graph` (this level only; bodies are
/// rewritten when compiled). Returns the number of FusedConv nodes emitted.
int FuseConvActivation(onnx::GraphProto* graph, const ConstantLookup& lookup, ConvFusionReport* report = nullptr);

/// The pass as a session rewrite (runtime/core/graph_rewrite.h).
/// The fusion as a runtime pass (graph_rewrite.h).
std::unique_ptr<GraphPass> CreateConvActivationFusion();

}  // namespace nuphar
