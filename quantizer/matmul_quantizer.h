// Private: the state of one quantization run, shared by the MatMul pass
// (matmul_to_matmulinteger.cc) and its Gemm front-end (gemm_to_matmulinteger.cc).
//
// # Walk order
// Graphs are rebuilt node by node in their original order, like the original, which cleared
// the node list and re-added nodes: a candidate is replaced by its quantized chain, any other
// node is moved over, and a node's subgraphs (Scan/Loop body, If branches, any depth) are
// walked right after the node itself. Counters therefore advance in the original's order.
//
// # Weight life cycle
// A weight is quantized once per (defining graph, name[, transposed]); its new initializers go
// to the main graph so every graph sees them. The float weight is removed only after the walk,
// and only if nothing anywhere still reads it (B21).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "quantizer/dynamic_quant.h"
#include "graph/node_builder.h"
#include "quantizer/quantizer.h"
#include "quantizer/weight_quant.h"

namespace nuphar::quant {

struct GraphScope {
  onnx::GraphProto* graph = nullptr;
  const GraphScope* parent = nullptr;
  std::string path;          ///< "main", "main/<node>.body", ...
  bool in_loop_body = false;  ///< this graph is, or is nested in, a Scan/Loop body
  /// Graph inputs and node outputs of this graph: names that shadow outer initializers.
  std::unordered_set<std::string> runtime_values;
};

/// A float initializer found from some scope.
struct WeightRef {
  onnx::GraphProto* graph = nullptr;  ///< defining graph
  const onnx::TensorProto* tensor = nullptr;
};

struct ConvertedWeight {
  QuantizedWeightNames names;
  QuantizeConfig w_cfg;
  bool symmetric = false;
  int64_t n = 0;
  WeightError error;
};

/// How one input X was quantized in a graph, for --share_input_quantization.
using InputTable = std::unordered_map<std::string, QuantizedInput>;

class MatMulQuantizer {
 public:
  MatMulQuantizer(onnx::ModelProto* model, const QuantizeOptions& options, int64_t opset, bool upgrade_to_opset10);
  Expected<QuantizeReport> Run();

 private:
  Status WalkGraph(GraphScope& scope);
  /// Replaces `node` with its quantized chain; false (with a skip note) when it cannot.
  Expected<bool> QuantizeMatMul(const onnx::NodeProto& node, const GraphScope& scope, NodeBuilder& emit,
                                InputTable* inputs);
  Expected<bool> QuantizeGemm(const onnx::NodeProto& node, const GraphScope& scope, NodeBuilder& emit,
                              InputTable* inputs);

  // Shared steps, in the order the original runs them.
  WeightRef FindInitializer(const GraphScope& scope, const std::string& name) const;
  /// Why `weight` must stay float for every consumer, or "" when all consumers allow it.
  std::string ConsumerProblem(const std::string& weight) const;
  Expected<NodeQuantConfig> ConfigFor(const std::string& output);
  /// Quantizes (or reuses) a weight. `transposed` quantizes W^T under `<w>_trans`.
  /// Returns null with `*skip` set when the weight cannot be quantized.
  Expected<const ConvertedWeight*> ConvertWeight(const WeightRef& weight, bool transposed,
                                                 const NodeQuantConfig& cfg, std::string* skip);
  /// Input quantization (or its shared copy) + integer MatMul + dequantization into `y`.
  void EmitQuantized(NodeBuilder& emit, const std::string& prefix, const std::string& x,
                     const ConvertedWeight& w, const NodeQuantConfig& cfg, const std::string& y,
                     InputTable* inputs);
  void RecordQuantized(const onnx::NodeProto& node, const GraphScope& scope, const std::string& weight,
                       const ConvertedWeight& w, const NodeQuantConfig& cfg, bool reused);
  void Skip(const onnx::NodeProto& node, const GraphScope& scope, const std::string& reason);
  /// Removes float weights (and same-named graph inputs) that nothing reads any more.
  void RemoveUnusedWeights();

  onnx::ModelProto* model_;
  const QuantizeOptions& options_;
  OpsetForms forms_;
  bool upgrade_to_opset10_;
  NameTable names_;  ///< every name of the model, and the run's node and constant counters (E5)
  QuantizeReport report_;
  std::unordered_map<std::string, size_t> node_config_index_;
  struct Use {
    std::string op_type;
    int input_index;
  };
  std::unordered_map<std::string, std::vector<Use>> uses_;  ///< by tensor name, every graph
  std::map<std::string, ConvertedWeight> converted_;        ///< key: graph address + name
  std::unordered_map<std::string, std::string> transposed_inputs_;  ///< Gemm A -> A_trans
  std::vector<std::pair<onnx::GraphProto*, std::string>> removable_;  ///< replaced float weights
};

std::string GraphKey(const onnx::GraphProto* graph, const std::string& name);

}  // namespace nuphar::quant
