// Opset and IR version for the quantized model (spec E2, §1.2, §1.3, §3.10).
//
// The quantizer needs default-domain opset >= 10 (MatMulInteger) and com.microsoft 1
// (MatMulInteger16). A raise is checked against every existing node in every graph: ops whose
// schema changed between the two versions are refused with an error naming them, except the
// two the original converted (Slice and TopK attribute forms, see UpgradeNodeToOpset10) and a
// short list whose change only extends types or adds attributes with a backward-compatible
// default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/node_builder.h"

namespace nuphar::quant {

struct OpsetRaise {
  int64_t old_version = 0;  ///< 0 when the model had no default-domain opset_import
  int64_t new_version = 0;
  bool raised() const { return new_version != old_version; }
};

/// Raises (or adds, with domain "") the default-domain opset to at least `min_version` after
/// checking every node, and ensures com.microsoft >= 1. Does not touch ir_version.
Expected<OpsetRaise> RaiseOpsetForQuantization(onnx::ModelProto* model, int64_t min_version);

/// The IR version released with `opset` (ONNX's release table), never below 4.
int64_t RequiredIrVersion(int64_t opset);

/// Converts a 1-input Slice (opset < 10) or 1-input TopK (opset 1) into its opset-10 form,
/// emitting it through `emit` (prefix = the node's name). Returns false for any other node.
/// A Slice without `axes` gets axes 0..len(starts)-1 (B24).
bool UpgradeNodeToOpset10(const onnx::NodeProto& node, NodeBuilder& emit);

}  // namespace nuphar::quant
