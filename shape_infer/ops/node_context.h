// What an op handler sees of the driver: one node, its input/output types and tracked values,
// attributes, fresh symbols and merges. Handlers run after ONNX's own per-node inference
// (spec §2.3 b-c) and overwrite outputs they know better.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/error.h"
#include "shape_infer/graph_inferencer.h"
#include "shape_infer/infer_types.h"

namespace onnx {
class AttributeProto;
}

namespace nuphar::shape_infer {

class NodeContext {
 public:
  NodeContext(GraphInferencer& graph, const onnx::NodeProto& node, size_t node_index)
      : graph_(graph), node_(node), node_index_(node_index) {}

  const onnx::NodeProto& node() const { return node_; }
  size_t node_index() const { return node_index_; }
  GraphInferencer& graph() const { return graph_; }
  const ShapeInferOptions& options() const { return graph_.root().options; }
  int Opset() const;  ///< default-domain opset

  size_t NumInputs() const;
  bool HasInput(size_t i) const;
  const std::string& InputName(size_t i) const;
  size_t NumOutputs() const;
  bool HasOutput(size_t j) const;

  /// nullopt when the input is absent or its rank is unknown.
  std::optional<SymShape> InputShape(size_t i) const;
  int32_t InputElemType(size_t i) const;
  const onnx::TypeProto* InputType(size_t i) const;
  std::optional<SymShape> OutputShape(size_t j) const;
  int32_t OutputElemType(size_t j) const;

  void SetOutput(size_t j, int32_t elem_type, const std::optional<SymShape>& shape);
  void SetOutputType(size_t j, const onnx::TypeProto& type);

  const TrackedValue* InputValue(size_t i) const;
  /// All-literal integer values (floats truncated toward zero are NOT accepted).
  std::optional<std::vector<int64_t>> InputInts(size_t i) const;
  /// Integer-valued expressions of a tracked 0-D/1-D value.
  std::optional<std::vector<sym::Expr>> InputExprs(size_t i) const;
  void SetOutputValue(size_t j, TrackedValue v);

  /// `<Op><idx>[_g<k>]_o<j>__d<axis>` (spec §2.5, S3), or its merge target.
  sym::Expr NewSymbol(size_t j, size_t axis) const;
  SymShape NewSymbols(size_t j, size_t rank) const;

  /// Highest rank given fresh symbols from a shape input's length: ranks in real models are a
  /// handful, and a declared length of 2^40 (or -1 in an unchecked model) must not make this
  /// many symbols (found by tests/fuzz: ConstantOfShape hung). Above it the output stays unknown.
  static constexpr int64_t kMaxSymbolicRank = 64;
  /// The length of 1-D input i (a shape tensor) when known and in [0, kMaxSymbolicRank].
  std::optional<size_t> ShapeInputLength(size_t i) const;

  const onnx::AttributeProto* Attr(const std::string& name) const;
  int64_t AttrInt(const std::string& name, int64_t def) const;
  float AttrFloat(const std::string& name, float def) const;
  std::string AttrString(const std::string& name, const std::string& def) const;
  std::optional<std::vector<int64_t>> AttrInts(const std::string& name) const;

  /// merge_symbols (§2.7): equal dims -> that dim; a literal with auto_merge -> the literal.
  SymDim MergeDims(const std::vector<SymDim>& dims) const;
  /// Right-aligned broadcast of two shapes (§2.7); conflicts suggest merges under auto_merge.
  SymShape Broadcast(const SymShape& a, const SymShape& b) const;
  void SuggestMerge(const std::vector<sym::Expr>& dims) const;

  /// The body graph held by attribute `name` (If/Loop/Scan), editable in place; nullptr if absent.
  onnx::GraphProto* MutableGraphAttr(const std::string& name) const;

  void Warn(const std::string& msg) const;
  Status Error(const std::string& msg) const;

 private:
  GraphInferencer& graph_;
  const onnx::NodeProto& node_;
  size_t node_index_;
};

/// Handles negative axes; nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

/// Applies `fn` to every symbolic-algebra step and turns a SymOverflow into nullopt.
template <class Fn>
auto GuardOverflow(Fn fn) -> std::optional<decltype(fn())> {
  try {
    return fn();
  } catch (const sym::SymOverflow&) {
    return std::nullopt;
  }
}

}  // namespace nuphar::shape_infer
