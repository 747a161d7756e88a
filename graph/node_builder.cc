// Node builder and name table (graph/node_builder.h).
#include "graph/node_builder.h"

#include <onnx/onnx_pb.h>

#include "graph/graph_view.h"

namespace nuphar {

NameTable::NameTable(const onnx::ModelProto& model) : names_(CollectAllNames(model)) {}

std::string NameTable::Fixed(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

std::string NameTable::NodeName(const std::string& prefix, std::string_view op) {
  std::string name;
  do {
    name = prefix + std::string(op) + "_" + std::to_string(node_count_++);
  } while (names_.count(name));
  names_.insert(name);
  return name;
}

std::string NameTable::ConstName(const std::string& prefix) {
  std::string name;
  do {
    name = prefix + "_Const_" + std::to_string(const_count_++);
  } while (names_.count(name));
  names_.insert(name);
  return name;
}

static onnx::AttributeProto* NewAttr(onnx::NodeProto& node, const std::string& name,
                                     onnx::AttributeProto::AttributeType type) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void SetAttr(onnx::NodeProto& node, const std::string& name, int64_t v) {
  NewAttr(node, name, onnx::AttributeProto::INT)->set_i(v);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, float v) {
  NewAttr(node, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::string& v) {
  NewAttr(node, name, onnx::AttributeProto::STRING)->set_s(v);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& v) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, onnx::GraphProto&& g) {
  NewAttr(node, name, onnx::AttributeProto::GRAPH)->mutable_g()->Swap(&g);
}

static onnx::AttributeProto MakeAttr(const std::string& name, onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  return a;
}
onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  auto a = MakeAttr(name, onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  auto a = MakeAttr(name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}
onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  auto a = MakeAttr(name, onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t AttrInt(const onnx::NodeProto& node, const std::string& name, int64_t def) {
  const auto* a = FindAttr(node, name);
  return a ? a->i() : def;
}
float AttrFloat(const onnx::NodeProto& node, const std::string& name, float def) {
  const auto* a = FindAttr(node, name);
  return a ? a->f() : def;
}
std::string AttrString(const onnx::NodeProto& node, const std::string& name, const std::string& def) {
  const auto* a = FindAttr(node, name);
  return a ? a->s() : def;
}

std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = FindAttr(node, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>> AttrFloats(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = FindAttr(node, name);
  if (!a) return std::nullopt;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::optional<std::vector<std::string>> AttrStrings(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = FindAttr(node, name);
  if (!a) return std::nullopt;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

NodeBuilder::NodeBuilder(onnx::GraphProto* graph, NodeList* sink, NameTable* names, int64_t opset, std::string prefix)
    : graph_(graph), sink_(sink), names_(names), opset_(opset), prefix_(std::move(prefix)) {}

NodeBuilder::NodeBuilder(onnx::GraphProto* graph, NameTable* names, int64_t opset, std::string prefix)
    : NodeBuilder(graph, graph->mutable_node(), names, opset, std::move(prefix)) {}

onnx::NodeProto& NodeBuilder::Add(std::string_view op, const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = sink_->Add();
  node->set_op_type(std::string(op));
  node->set_name(names_->NodeName(prefix_, op));
  for (const auto& i : inputs) node->add_input(i);
  if (outputs.empty()) {
    node->add_output(node->name());
  } else {
    for (const auto& o : outputs) {
      if (!o.empty()) names_->Reserve(o);
      node->add_output(o);
    }
  }
  return *node;
}

std::string NodeBuilder::Op(std::string_view op, const std::vector<std::string>& inputs, const std::string& output) {
  auto& node = output.empty() ? Add(op, inputs) : Add(op, inputs, {output});
  return node.output(0);
}

std::string NodeBuilder::Op(std::string_view op, const std::vector<std::string>& inputs,
                            const std::vector<onnx::AttributeProto>& attributes, const std::string& output,
                            const std::string& domain) {
  auto& node = output.empty() ? Add(op, inputs) : Add(op, inputs, {output});
  if (!domain.empty()) node.set_domain(domain);
  for (const auto& a : attributes) *node.add_attribute() = a;
  return node.output(0);
}

std::string NodeBuilder::Const(onnx::TensorProto&& t, const std::string& fixed_name) {
  const std::string name = fixed_name.empty() ? names_->ConstName(prefix_) : names_->Fixed(fixed_name);
  auto* init = graph_->add_initializer();
  init->Swap(&t);
  init->set_name(name);
  return name;
}

onnx::ValueInfoProto& NodeBuilder::AddValueInfo(const std::string& name, DType dtype, const std::vector<DimSpec>& dims,
                                                google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) {
  auto* vi = list ? list->Add() : graph_->add_value_info();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
  return *vi;
}

}  // namespace nuphar
