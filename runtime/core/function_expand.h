// Expansion of ONNX function ops: a node the runtime has no kernel for, whose ONNX schema
// defines it as a function of other ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss,
// windows, ...), is replaced by that function body before compilation.
#pragma once

#include <string>
#include <unordered_map>

#include "graph/error.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

struct ModelContext;

/// Opset versions for nodes that came from a function body (by node name): a body is written
/// against its function's opset, which may differ from the model's.
using OpsetOverrides = std::unordered_map<std::string, int>;

/// Rewrites `graph` (this level only; subgraphs are expanded when they are compiled). Returns
/// the number of nodes expanded. Nodes without a kernel and without a function are left for
/// the compiler to refuse with its usual message.
Expected<int> ExpandFunctionNodes(onnx::GraphProto* graph, const ModelContext& model, OpsetOverrides* overrides);

}  // namespace nuphar
