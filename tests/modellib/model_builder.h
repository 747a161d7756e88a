// Small helpers for building ONNX models in tests (STYLE R15: tests build models in code).
#pragma once

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor_data.h"

namespace nuphar::testing {

/// A dim is a fixed size or a symbol name.
using Dim = std::variant<int64_t, std::string>;

inline onnx::ValueInfoProto MakeValueInfo(const std::string& name, DType dtype, const std::vector<Dim>& dims) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
    else dim->set_dim_param(std::get<std::string>(d));
  }
  return vi;
}

inline onnx::NodeProto& AddNode(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g.node_size()) : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

inline void SetAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

inline onnx::ModelProto MakeModel(const onnx::GraphProto& g, int opset, int ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  *m.mutable_graph() = g;
  return m;
}

}  // namespace nuphar::testing
