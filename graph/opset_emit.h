// Opset-aware emission: the node form each op needs at the model's final opset (spec E2).
//
//   op                   below threshold          at/above threshold            threshold
//   Slice                starts/ends/axes attrs   int64 inputs                  10
//   Clip                 min/max attrs            scalar inputs                 11
//   Split                split attr               int64 `split` input           13
//   Squeeze/Unsqueeze    axes attr                int64 `axes` input            13
//   ReduceSum            axes attr                int64 `axes` input            13
//
// Emitters take the builder (which knows the final opset) and return the output name.
// EnsureOpset raises the model's default-domain opset and IR version before a pass emits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

class NodeBuilder;

std::string EmitSqueeze(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes,
                        const std::string& output = "");
std::string EmitUnsqueeze(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes,
                          const std::string& output = "");
/// `outputs` gives the names (one per part); empty names are auto-named.
std::vector<std::string> EmitSplit(NodeBuilder& b, const std::string& x, int64_t axis, const std::vector<int64_t>& splits,
                                   std::vector<std::string> outputs = {});
std::string EmitSlice(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& starts,
                      const std::vector<int64_t>& ends, const std::vector<int64_t>& axes, const std::string& output = "");
std::string EmitClip(NodeBuilder& b, const std::string& x, float lo, float hi, const std::string& output = "");
std::string EmitReduceSum(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes, bool keepdims,
                          const std::string& output = "");

/// Version of `domain` ("" = default ONNX domain; "ai.onnx" counts as default) in the model, 0 if absent.
int64_t GetOpset(const onnx::ModelProto& model, const std::string& domain = "");

/// The IR version released with `opset` (9 -> 4, 10 -> 5, 11 -> 6, 12..14 -> 7, 15..18 -> 8, 19..20 -> 9, 21 -> 10).
int64_t IrVersionForOpset(int64_t opset);

/// Raises the default-domain opset to at least `min_opset` (adding an entry with domain "" if
/// there is none) and ir_version to max(current, IrVersionForOpset(final), 4). Refuses, naming
/// the nodes, when an existing node's schema changed between the old and the new version.
/// Returns the final opset.
Expected<int64_t> EnsureOpset(onnx::ModelProto& model, int64_t min_opset);

}  // namespace nuphar
