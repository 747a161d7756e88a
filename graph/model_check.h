// Structural check of a loaded model: the stage between parsing (model_io) and any tool or the
// runtime, so every one of them refuses a broken model with the same message naming the graph,
// node and value, instead of failing later in its own words (or not at all).
//
// Checked, in every graph and subgraph: opset imports (no version 0, no default-domain opset
// newer than the ONNX this build knows), unique value names (node outputs; initializers unless
// repeated identically and graph inputs listed twice are tolerated, as the original
// model_editor writes them), node inputs and graph outputs that name a value in scope (the
// graph's own or an enclosing graph's), no cycle among the nodes, a non-empty op_type,
// attribute types against the op's schema, non-negative declared dims, and initializers whose
// payload matches their dims. Not checked here: op semantics (input types, attribute values,
// shapes), which each consumer checks where it knows the op.
#pragma once

#include <string>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

/// Returns the first problem found as a Diag naming `origin`, the graph, the node and the value.
Status CheckModelStructure(const onnx::ModelProto& model, const std::string& origin);

}  // namespace nuphar
