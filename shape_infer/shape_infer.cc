// Public entry: opset check, the pass loop with merges and its cap (spec §2.2, S3).
#include "shape_infer/shape_infer.h"

#include <onnx/onnx_pb.h>

#include "graph/diagnostics.h"


#include "shape_infer/graph_inferencer.h"

namespace nuphar {

Expected<ShapeInferResult> InferShapes(onnx::ModelProto* model, const ShapeInferOptions& options) {
  using shape_infer::GraphInferencer;
  using shape_infer::RootState;
  ShapeInferResult result;
  RootState root;
  root.options = options;
  for (const auto& op : model->opset_import()) {
    std::string domain = op.domain() == "ai.onnx" || op.domain() == "onnx" ? "" : op.domain();
    root.opsets[domain] = static_cast<int>(op.version());
  }
  if (root.Opset("") < 7) {
    result.outcome = InferOutcome::kUnsupportedOpset;
    return result;
  }
  onnx::GraphProto* graph = model->mutable_graph();
  while (true) {
    ++result.passes;
    root.merges_changed = false;
    root.subgraph_counter = 0;
    root.unknown_values.clear();
    root.first_incomplete_node.clear();
    root.symbols.BeginPass();
    GraphInferencer main_graph(&root, graph, nullptr, "", "");
    main_graph.SeedInputs();
    Status st = main_graph.RunPass();
    if (!st.ok()) return st;
    if (!(options.auto_merge && root.merges_changed)) break;
    // Each useful pass removes at least one symbol through a merge (S3 cap).
    if (static_cast<size_t>(result.passes) > 1 + root.symbols.NumSymbols()) {
      root.unknown_values.push_back("<pass cap reached: merges did not converge>");
      break;
    }
    if (options.verbose > 0) ReportDiagnostic(Severity::kNote, "shape_infer: merges recorded, re-running inference");
  }
  result.unknown_values = root.unknown_values;
  result.first_incomplete_node = root.first_incomplete_node;
  result.outcome = result.unknown_values.empty() ? InferOutcome::kComplete : InferOutcome::kIncomplete;
  return result;
}

}  // namespace nuphar
