// The quantizer's node factory (spec §1.1 NodeFactory with the E5 naming fixes). Private to
// quantizer/; kept small until graph/node_builder.h exists.
//
// # Naming
// - Node: `<prefix><Op>_<n>`; its single output gets the node's name unless one is given.
// - Constant: `<prefix>_Const_<n>`, an initializer of the graph being rewritten.
// - One node counter and one constant counter per Quantize() run (not per process, E5); both
//   start at 0, so without collisions names equal the original's in a fresh process.
// - Every name is checked against ModelNames, which holds all node and tensor names of every
//   graph. A taken auto-name advances its counter; a taken fixed name gets `_<k>`, smallest k>=1.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace nuphar::quant {

/// All node and tensor names of a model, in every graph (E5).
class ModelNames {
 public:
  explicit ModelNames(const onnx::GraphProto& main_graph);
  bool Taken(const std::string& name) const { return names_.count(name) != 0; }
  void Add(const std::string& name) { names_.insert(name); }
  /// `base` if free, else `base_<k>` with the smallest free k >= 1; the result is reserved.
  std::string ReserveFixed(const std::string& base);

 private:
  void AddGraph(const onnx::GraphProto& g);
  std::unordered_set<std::string> names_;
};

struct NameCounters {
  int64_t node = 0;
  int64_t constant = 0;
};

onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values);
onnx::AttributeProto IntAttr(const std::string& name, int64_t value);
onnx::AttributeProto FloatAttr(const std::string& name, float value);

/// Emits nodes into `out_nodes` (the rebuilt node list of `graph`) and constants into `graph`.
class NodeEmitter {
 public:
  NodeEmitter(onnx::GraphProto* graph, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out_nodes,
              ModelNames* names, NameCounters* counters)
      : graph_(graph), out_nodes_(out_nodes), names_(names), counters_(counters) {}

  /// The prefix is replaced, not appended (NodeFactory.scoped_prefix).
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  const std::string& prefix() const { return prefix_; }

  /// Reserves the next auto node name `<prefix><op>_<n>` without emitting a node.
  std::string NextNodeName(const std::string& op_type);
  /// Appends a node; returns its (first) output name. `output` empty = the node's name.
  std::string Emit(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<onnx::AttributeProto>& attributes = {},
                   const std::string& output = "", const std::string& domain = "");
  /// Like Emit with several explicit outputs.
  void EmitMulti(const std::string& op_type, const std::vector<std::string>& inputs,
                 const std::vector<onnx::AttributeProto>& attributes,
                 const std::vector<std::string>& outputs);
  /// Scalar float32 constant `<prefix>_Const_<n>` in the current graph.
  std::string ScalarF32(float value);
  /// int64 constant `<prefix>_Const_<n>` with dims {values.size()} in the current graph.
  std::string Int64Vector(const std::vector<int64_t>& values);

  onnx::GraphProto* graph() const { return graph_; }
  ModelNames* names() const { return names_; }

 private:
  std::string NextConstName();
  onnx::NodeProto* AddNode(const std::string& op_type, const std::string& name,
                           const std::vector<std::string>& inputs,
                           const std::vector<onnx::AttributeProto>& attributes, const std::string& domain);

  onnx::GraphProto* graph_;
  google::protobuf::RepeatedPtrField<onnx::NodeProto>* out_nodes_;
  ModelNames* names_;
  NameCounters* counters_;
  std::string prefix_;
};

}  // namespace nuphar::quant
