// Recognizes the quantizer's per-row dynamic MatMulInteger pattern and replaces it by one
// fused node (spec runtime.md R3), run by the NGEMM fused kernel.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/graph_rewrite.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// Op of the fused node the pass emits (domain kFusedDomain; never written to a model file).
inline constexpr const char* kDynQuantMatMulOp = "DynQuantMatMul";

/// What one or more FuseDynamicQuantMatMul calls did (counts accumulate over calls).
struct DynQuantFusionReport {
  int patterns = 0;       ///< fused nodes emitted (the return value, summed)
  int absorbed_adds = 0;  ///< following Adds taken into a fused node (its 6th input)
  /// One line per Add that read a pattern's output but stayed a node: "<Sum/Mul node>: <reason>".
  std::vector<std::string> refused_adds;
};

/// Rewrites every match in `graph` (this level only; bodies are rewritten when compiled).
/// Returns the number of patterns fused; an absorbed Add is part of its pattern, not another one.
int FuseDynamicQuantMatMul(onnx::GraphProto* graph, const ConstantLookup& lookup,
                           DynQuantFusionReport* report = nullptr);

/// The pass as a session rewrite (runtime/core/graph_rewrite.h); it counts its patterns into
/// ModelContext::fused_patterns.
std::unique_ptr<GraphPass> CreateDynQuantMatMulFusion();

}  // namespace nuphar
