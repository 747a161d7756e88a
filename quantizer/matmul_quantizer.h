// Private: the state of one quantization run, shared by the MatMul pass
// (matmul_to_matmulinteger.cc) and its Gemm front-end (gemm_to_matmulinteger.cc).
//
// # Walk order
// The quantizer is a GraphPass run by the shared driver (graph/pass.h) with
// SubgraphOrder::kAfterKeptNode: nodes in their original order, a candidate replaced by its
// quantized chain, and a kept node's subgraphs (Scan/Loop body, If branches, any depth) walked
// right after the node itself, as the original (which cleared the node list and re-added
// nodes) did. Name counters therefore advance in the original's order.
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
#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/pass.h"
#include "quantizer/quantizer.h"
#include "quantizer/weight_quant.h"

namespace nuphar::quant {

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

class MatMulQuantizer final : public GraphPass {
 public:
  MatMulQuantizer(onnx::ModelProto* model, const QuantizeOptions& options, int64_t opset, bool upgrade_to_opset10);

  std::string Name() const override { return "quantize"; }
  /// MatMul and Gemm; Slice and TopK too when the opset is raised past 10 (their old forms).
  std::vector<std::string> TargetOpTypes() const override;
  SubgraphOrder Order() const override { return SubgraphOrder::kAfterKeptNode; }
  bool AnyDomain() const override { return true; }
  bool ChecksArity() const override { return false; }  // QuantizeMatMul/Gemm skip with a note
  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override;
  /// Removes float weights (and same-named graph inputs) that nothing reads any more.
  Status Finish(onnx::ModelProto& model) override;

  QuantizeReport TakeReport() { return std::move(report_); }

 private:
  /// Replaces `node` with its quantized chain; false (with a skip note) when it cannot.
  Expected<bool> QuantizeMatMul(const onnx::NodeProto& node, const GraphScope& scope, NodeBuilder& emit,
                                InputTable* inputs);
  Expected<bool> QuantizeGemm(const onnx::NodeProto& node, const GraphScope& scope, NodeBuilder& emit,
                              InputTable* inputs);

  /// The weight side of one MatMul or Gemm: null `weight` when the node stays float (noted).
  struct WeightChoice {
    NodeQuantConfig cfg;
    const ConvertedWeight* weight = nullptr;
    bool reused = false;  ///< converted for an earlier node
  };
  /// The steps MatMul and Gemm share, in the original's order: the weight's other consumers,
  /// the qcfg, the initializer (`w_label` names it in the note), the type of `float_input`
  /// (when given), then the weight's conversion (`transposed`: W^T).
  Expected<WeightChoice> ChooseWeight(const onnx::NodeProto& node, const GraphScope& scope, const std::string& w_name,
                                      const char* w_label, bool transposed, const std::string& float_input);

  // Shared steps, in the order the original runs them.
  WeightRef FindInitializer(const GraphScope& scope, const std::string& name);
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
  /// Graph inputs and node outputs of `graph` as the walk found it: names that shadow outer
  /// initializers (computed on first use; the driver splices a graph only after its walk).
  const std::unordered_set<std::string>& RuntimeValues(const onnx::GraphProto* graph);

  onnx::ModelProto* model_;
  const QuantizeOptions& options_;
  OpsetForms forms_;
  bool upgrade_to_opset10_;
  NameTable* names_ = nullptr;  ///< the driver's: every name of the model, the run's counters (E5)
  QuantizeReport report_;
  std::unordered_map<std::string, size_t> node_config_index_;
  UseCounts uses_;  ///< with consumers, by tensor name, every graph, before any rewrite
  std::unordered_map<const onnx::GraphProto*, std::unordered_set<std::string>> runtime_values_;
  std::unordered_map<const onnx::GraphProto*, InputTable> input_tables_;  ///< one per graph
  std::map<std::string, ConvertedWeight> converted_;        ///< key: graph address + name
  std::unordered_map<std::string, std::string> transposed_inputs_;  ///< Gemm A -> A_trans
  std::vector<std::pair<const onnx::GraphProto*, std::string>> removable_;  ///< replaced float weights
};

std::string GraphKey(const onnx::GraphProto* graph, const std::string& name);

}  // namespace nuphar::quant
