// The inference driver for one graph (main graph or an If/Loop/Scan body), spec §2.3.
//
// One GraphInferencer per graph and pass. It owns the per-pass state of the original
// (known_vi_, sympy_data_, the Constant outputs) and looks names it does not define up in
// its parent, which replaces the original's copying of every parent value into each subgraph
// (spec §6 item 12). State shared by all graphs of a model lives in RootState.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/error.h"
#include "shape_infer/infer_types.h"
#include "shape_infer/shape_infer.h"
#include "shape_infer/symbol_table.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TensorProto;
class TypeProto;
class ValueInfoProto;
}  // namespace onnx

namespace nuphar::shape_infer {

struct RootState {
  ShapeInferOptions options;
  SymbolTable symbols;
  std::unordered_map<std::string, int> opsets;  ///< domain ("" for ONNX) -> version
  int subgraph_counter = 0;                     ///< k of "_g<k>", reset every pass
  bool merges_changed = false;                  ///< a merge was recorded during this pass
  std::vector<std::string> unknown_values;
  std::string first_incomplete_node;

  int Opset(const std::string& domain = "") const;
};

/// Reads a tensor TypeProto's shape: nullopt when the type has no shape field (unknown rank).
std::optional<SymShape> ShapeOfType(const onnx::TypeProto& type, SymbolTable& symbols);
/// Writes elem type + dims (literal -> dim_value, clamped at 0; expression -> dim_param).
void WriteTensorType(onnx::TypeProto* type, int32_t elem_type, const std::optional<SymShape>& shape,
                     SymbolTable& symbols, int verbose);

class GraphInferencer {
 public:
  /// `tag` is "" for the main graph and "_g<k>" for subgraphs (symbol names, S3).
  GraphInferencer(RootState* root, onnx::GraphProto* graph, const GraphInferencer* parent, std::string tag,
                  std::string path);
  ~GraphInferencer();

  /// Names None dims of graph inputs and registers input symbols; `state_inputs` lists
  /// input positions whose symbols are non-negative (Loop-carried / Scan state, S3).
  void SeedInputs(const std::vector<size_t>& state_inputs = {});
  /// Infers every node once (Kahn order) and writes value_info and outputs back into the graph.
  Status RunPass();

  // ---- lookups through the parent chain ----
  const onnx::ValueInfoProto* FindValueInfo(const std::string& name) const;
  const TrackedValue* FindTracked(const std::string& name) const;
  const onnx::TensorProto* FindConstant(const std::string& name) const;

  // ---- used by NodeContext ----
  onnx::ValueInfoProto& MutableValueInfo(const std::string& name);
  void SetTracked(const std::string& name, TrackedValue v) { tracked_[name] = std::move(v); }
  void SetConstant(const std::string& name, const onnx::TensorProto& t);
  /// Infers a body graph of node `node_index` as a child of this graph.
  Expected<std::unique_ptr<GraphInferencer>> InferSubgraph(onnx::GraphProto* body,
                                                           const std::vector<size_t>& state_inputs);
  RootState& root() const { return *root_; }
  onnx::GraphProto& graph() const { return *graph_; }
  const std::string& tag() const { return tag_; }
  const std::string& path() const { return path_; }

 private:
  Status InferNode(size_t node_index);
  void RunOnnxInference(const onnx::NodeProto& node);
  bool RunSchemaInference(const onnx::NodeProto& node);
  void CompleteOutputs(const onnx::NodeProto& node, size_t node_index, bool has_handler, bool* incomplete);
  void WriteBack();

  RootState* root_;
  onnx::GraphProto* graph_;
  const GraphInferencer* parent_;
  std::string tag_;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<onnx::ValueInfoProto>> known_vi_;
  std::vector<std::string> produced_;  ///< node outputs in inference order (value_info order)
  std::unordered_set<std::string> produced_set_;
  std::unordered_map<std::string, TrackedValue> tracked_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  mutable std::unordered_map<std::string, std::optional<TrackedValue>> initializer_values_;
  std::unordered_map<std::string, std::unique_ptr<onnx::TensorProto>> constants_;
};

/// Exact rational of a float (spec §4.6), nullopt for NaN/Inf or values that overflow.
std::optional<sym::Rational> ExactRational(double v);

/// The tracked value of a constant tensor (ints and floats up to `max_elements`).
std::optional<TrackedValue> TrackedFromTensor(const onnx::TensorProto& t, size_t max_elements = 1 << 16);

}  // namespace nuphar::shape_infer
