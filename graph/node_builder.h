// Node builder: new nodes, initializers and value_infos with deterministic, collision-free names.
//
// # Naming (spec Decision E5)
// A NameTable holds every node and tensor name of the model (all graphs) and the per-run
// counters. Auto names follow the original tool's schemes, so without collisions they equal
// what the original produced in a fresh process:
//   node      <prefix><Op>_<n>        (its single output gets the same name)
//   constant  <prefix>_Const_<n>
// A taken auto name advances its counter; a taken fixed name (e.g. "split_i") gets "_<k>" with
// the smallest free k >= 1. Nothing depends on hash order, addresses or earlier runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <google/protobuf/repeated_ptr_field.h>
#include <onnx/onnx_pb.h>  // the templates below build TensorProtos inline

#include "graph/onnx_fwd.h"
#include "graph/tensor_data.h"

namespace nuphar {

class NameTable {
 public:
  NameTable() = default;
  explicit NameTable(const onnx::ModelProto& model);

  bool Contains(const std::string& name) const { return names_.count(name) > 0; }
  void Reserve(const std::string& name) { names_.insert(name); }
  /// `base` if free, else base_1, base_2, ...; the result is reserved.
  std::string Fixed(const std::string& base);
  /// <prefix><op>_<n> with the per-run node counter; reserved.
  std::string NodeName(const std::string& prefix, std::string_view op);
  /// <prefix>_Const_<n> with the per-run constant counter; reserved.
  std::string ConstName(const std::string& prefix);

 private:
  std::unordered_set<std::string> names_;
  int64_t node_count_ = 0;
  int64_t const_count_ = 0;
};

/// One value_info dim: a size (>= 0), a symbol, or unknown (size -1 and empty symbol).
struct DimSpec {
  int64_t value = -1;
  std::string param;
  static DimSpec Of(int64_t v) { return {v, ""}; }
  static DimSpec Sym(std::string p) { return {-1, std::move(p)}; }
};

void SetAttr(onnx::NodeProto& node, const std::string& name, int64_t v);
void SetAttr(onnx::NodeProto& node, const std::string& name, float v);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::string& v);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& v);
/// Moves `g` into a GRAPH attribute.
void SetAttr(onnx::NodeProto& node, const std::string& name, onnx::GraphProto&& g);
/// Free-standing attributes, for emitters that pass a node's attributes as a list.
onnx::AttributeProto IntAttr(const std::string& name, int64_t value);
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values);
onnx::AttributeProto FloatAttr(const std::string& name, float value);
/// Attribute lookup; nullptr when absent. The getters below are the one set of attribute
/// readers of the graph tools and the runtime (NodeInfo::GetInt, ... delegate here): a missing
/// attribute gives `def`; the type is not checked; the first of same-named attributes counts.
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name);
int64_t AttrInt(const onnx::NodeProto& node, const std::string& name, int64_t def);
float AttrFloat(const onnx::NodeProto& node, const std::string& name, float def);
std::string AttrString(const onnx::NodeProto& node, const std::string& name, const std::string& def);
/// The values of an INTS / FLOATS / STRINGS attribute; nullopt when absent.
std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& node, const std::string& name);
std::optional<std::vector<float>> AttrFloats(const onnx::NodeProto& node, const std::string& name);
std::optional<std::vector<std::string>> AttrStrings(const onnx::NodeProto& node, const std::string& name);

/// Emits nodes into `sink` and initializers/value_infos into `graph`, naming them through a
/// shared NameTable. `opset` is the final default-domain opset, used by graph/opset_emit.h.
class NodeBuilder {
 public:
  using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
  NodeBuilder(onnx::GraphProto* graph, NodeList* sink, NameTable* names, int64_t opset, std::string prefix = "");
  /// Nodes appended straight to `graph`.
  NodeBuilder(onnx::GraphProto* graph, NameTable* names, int64_t opset, std::string prefix = "");

  int64_t opset() const { return opset_; }
  onnx::GraphProto* graph() const { return graph_; }
  NameTable& names() const { return *names_; }
  const std::string& prefix() const { return prefix_; }
  void set_prefix(std::string p) { prefix_ = std::move(p); }

  /// Appends a node. `outputs` empty = one output named like the node. Empty input names are
  /// kept (optional inputs). Returns the node for attributes; pointers stay valid.
  onnx::NodeProto& Add(std::string_view op, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs = {});
  /// Add() returning the first output's name.
  std::string Op(std::string_view op, const std::vector<std::string>& inputs, const std::string& output = "");
  /// Op() with attributes (in this order) and a domain ("" = default). Callers include
  /// <onnx/onnx_pb.h>: the attribute list needs the complete type.
  std::string Op(std::string_view op, const std::vector<std::string>& inputs,
                 const std::vector<onnx::AttributeProto>& attributes, const std::string& output = "",
                 const std::string& domain = "");

  /// Adds `t` (its name is replaced) as an initializer of this builder's graph; returns the name.
  std::string Const(onnx::TensorProto&& t, const std::string& fixed_name = "");
  template <class T>
  std::string Const(const std::vector<int64_t>& dims, const std::vector<T>& values, const std::string& fixed_name = "") {
    return Const(MakeTensor<T>("", dims, values), fixed_name);
  }
  /// Scalars and 1-D constants, the common cases.
  std::string ScalarF(float v) { return Const<float>({}, {v}); }
  std::string Ints64(const std::vector<int64_t>& v) { return Const<int64_t>({static_cast<int64_t>(v.size())}, v); }

  /// Adds a tensor value_info to graph().value_info (or to `list` when given).
  onnx::ValueInfoProto& AddValueInfo(const std::string& name, DType dtype, const std::vector<DimSpec>& dims,
                                     google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list = nullptr);

 private:
  onnx::GraphProto* graph_;
  NodeList* sink_;
  NameTable* names_;
  int64_t opset_;
  std::string prefix_;
};

}  // namespace nuphar
