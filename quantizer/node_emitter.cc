// Node and constant emission with per-run counters and model-wide unique names (E5).
#include "quantizer/node_emitter.h"

#include "graph/tensor_data.h"

namespace nuphar::quant {

ModelNames::ModelNames(const onnx::GraphProto& main_graph) { AddGraph(main_graph); }

void ModelNames::AddGraph(const onnx::GraphProto& g) {
  for (const auto& v : g.input()) names_.insert(v.name());
  for (const auto& v : g.output()) names_.insert(v.name());
  for (const auto& v : g.value_info()) names_.insert(v.name());
  for (const auto& t : g.initializer()) names_.insert(t.name());
  for (const auto& t : g.sparse_initializer()) names_.insert(t.values().name());
  for (const auto& n : g.node()) {
    names_.insert(n.name());
    for (const auto& i : n.input()) names_.insert(i);
    for (const auto& o : n.output()) names_.insert(o);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) AddGraph(a.g());
      for (const auto& sub : a.graphs()) AddGraph(sub);
    }
  }
  names_.erase("");
}

std::string ModelNames::ReserveFixed(const std::string& base) {
  std::string name = base;
  for (int k = 1; Taken(name); ++k) name = base + "_" + std::to_string(k);
  Add(name);
  return name;
}

onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

std::string NodeEmitter::NextNodeName(const std::string& op_type) {
  std::string name;
  do {
    name = prefix_ + op_type + "_" + std::to_string(counters_->node++);
  } while (names_->Taken(name));
  names_->Add(name);
  return name;
}

std::string NodeEmitter::NextConstName() {
  std::string name;
  do {
    name = prefix_ + "_Const_" + std::to_string(counters_->constant++);
  } while (names_->Taken(name));
  names_->Add(name);
  return name;
}

onnx::NodeProto* NodeEmitter::AddNode(const std::string& op_type, const std::string& name,
                                      const std::vector<std::string>& inputs,
                                      const std::vector<onnx::AttributeProto>& attributes,
                                      const std::string& domain) {
  onnx::NodeProto* node = out_nodes_->Add();
  node->set_op_type(op_type);
  node->set_name(name);
  if (!domain.empty()) node->set_domain(domain);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& a : attributes) *node->add_attribute() = a;
  return node;
}

std::string NodeEmitter::Emit(const std::string& op_type, const std::vector<std::string>& inputs,
                              const std::vector<onnx::AttributeProto>& attributes,
                              const std::string& output, const std::string& domain) {
  const std::string name = NextNodeName(op_type);
  onnx::NodeProto* node = AddNode(op_type, name, inputs, attributes, domain);
  const std::string& out = output.empty() ? name : output;
  names_->Add(out);
  node->add_output(out);
  return out;
}

void NodeEmitter::EmitMulti(const std::string& op_type, const std::vector<std::string>& inputs,
                            const std::vector<onnx::AttributeProto>& attributes,
                            const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = AddNode(op_type, NextNodeName(op_type), inputs, attributes, "");
  for (const auto& o : outputs) node->add_output(o);
}

std::string NodeEmitter::ScalarF32(float value) {
  const std::string name = NextConstName();
  *graph_->add_initializer() = MakeTensor<float>(name, {}, std::vector<float>{value});
  return name;
}

std::string NodeEmitter::Int64Vector(const std::vector<int64_t>& values) {
  const std::string name = NextConstName();
  *graph_->add_initializer() = MakeTensor<int64_t>(name, {static_cast<int64_t>(values.size())}, values);
  return name;
}

}  // namespace nuphar::quant
