// Symbolic shape inference (spec symbolic_shape_infer.md): fills value_info for every value of
// every graph (If/Loop/Scan bodies included) with literal or symbolic dims such as "2*s + 1".
//
// Usage:
//   ShapeInferOptions opt;  opt.auto_merge = true;
//   NUPHAR_ASSIGN_OR_RETURN(ShapeInferResult r, InferShapes(&model, opt));
//   if (r.outcome != InferOutcome::kComplete) ... r.unknown_values, r.first_incomplete_node ...
//
// The model is mutated the way the original tool does (spec S3 "Model mutation"): value_info is
// replaced by the inferred one, graph-input None dims get names, auto_merge rewrites graph inputs,
// declared output shapes are overwritten.
//
// A returned error (Status) means an invalid model: a cyclic graph, an If whose branches disagree
// on element types, or (with `strict`) a node that could not be inferred.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

struct ShapeInferOptions {
  /// Record and apply merges when two dims must be equal but differ (broadcast, MatMul, Concat).
  bool auto_merge = false;
  /// Literals >= int_max (or <= -int_max) are "boundless" (Slice ends, Min/Max folding).
  int64_t int_max = 2147483647;
  /// For ops unknown to ONNX, give outputs the rank and element type of input 0.
  bool guess_output_rank = false;
  /// 0 silent; >0 warnings; >2 per-node trace. They go to graph/diagnostics.h (tools print them on
  /// stderr; embedders capture them with ScopedDiagnosticSink).
  int verbose = 0;
  /// Abort (error) at the first node that needs fresh symbols instead of continuing.
  bool strict = false;
  /// Keep the model's original value_info entries that inference does not produce.
  bool keep_value_info = false;
};

enum class InferOutcome {
  kComplete,           ///< every value has an element type and a full shape
  kIncomplete,         ///< some values were left unknown (see ShapeInferResult)
  kUnsupportedOpset,   ///< default-domain opset missing or < 7; the model is untouched
};

struct ShapeInferResult {
  InferOutcome outcome = InferOutcome::kComplete;
  /// Values (graph-qualified for subgraphs: "body/x") whose type or shape stayed unknown.
  std::vector<std::string> unknown_values;
  /// "name (OpType)" of the first node whose outputs could not be completed.
  std::string first_incomplete_node;
  int passes = 0;
};

/// Infers shapes in place. See the file comment for what is mutated.
Expected<ShapeInferResult> InferShapes(onnx::ModelProto* model, const ShapeInferOptions& options);

}  // namespace nuphar
