// Recognizes the quantizer's per-row dynamic MatMulInteger pattern and replaces it by one
// fused node (spec runtime.md R3), run by the NGEMM fused kernel.
#pragma once

#include <functional>
#include <string>

#include "runtime/core/tensor.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// Domain and op of the fused node the pass emits (internal; never written to a model file).
inline constexpr const char* kFusedDomain = "com.nuphar.internal";
inline constexpr const char* kDynQuantMatMulOp = "DynQuantMatMul";

/// The value of a name when it is a constant (initializer, Constant node, outer-scope constant).
using ConstantLookup = std::function<const Tensor*(const std::string& name)>;

/// Rewrites every match in `graph` (this level only; bodies are rewritten when compiled).
/// Returns the number of patterns fused.
int FuseDynamicQuantMatMul(onnx::GraphProto* graph, const ConstantLookup& lookup);

}  // namespace nuphar
