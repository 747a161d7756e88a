// Test helper: structural comparison of two ONNX graphs for the fixture tests (acceptance 1 of
// issue 5): initializers bit for bit (name, dtype, dims, bytes, order), the node sequence with
// names, op types, domains, attributes and wiring, graph inputs/outputs and value_info names,
// recursively through subgraph attributes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace nuphar::quant::testing {

/// Every difference as one line "<path>: <what>"; empty when the graphs are equal.
std::vector<std::string> CompareGraphs(const onnx::GraphProto& expected, const onnx::GraphProto& actual,
                                       const std::string& path = "main");

}  // namespace nuphar::quant::testing
