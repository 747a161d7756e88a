// The one model builder of the tests (STYLE R15: tests build models in code): free helpers
// (MakeValueInfo, AddNode, SetAttr, MakeModel) and the fluent ModelBuilder. Used by the graph-tool
// and runtime tests alike; tests/shape_infer/shape_check.h adds the shape-reading helpers.
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

namespace detail {
inline onnx::AttributeProto* NewAttr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
}  // namespace detail

inline void SetAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  detail::NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, float v) {
  detail::NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  detail::NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = detail::NewAttr(n, name, onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  *detail::NewAttr(n, name, onnx::AttributeProto::GRAPH)->mutable_g() = g;
}
inline void SetAttr(onnx::NodeProto& n, const std::string& name, const onnx::TensorProto& t) {
  *detail::NewAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}

// The names the shape inference tests use (same attributes as SetAttr).
inline void AttrInt(onnx::NodeProto& n, const std::string& name, int64_t v) { SetAttr(n, name, v); }
inline void AttrInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) { SetAttr(n, name, v); }
inline void AttrString(onnx::NodeProto& n, const std::string& name, const std::string& v) { SetAttr(n, name, v); }
inline void AttrGraph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) { SetAttr(n, name, g); }
inline void AttrTensor(onnx::NodeProto& n, const std::string& name, const onnx::TensorProto& t) { SetAttr(n, name, t); }

inline onnx::ModelProto MakeModel(const onnx::GraphProto& g, int opset, int ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  *m.mutable_graph() = g;
  return m;
}

/// Dims as text: "3" is a literal, "" unknown, anything else a dim_param.
using Dims = std::vector<std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }
  ModelBuilder& Opset(const std::string& domain, int v) {
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(v);
    return *this;
  }
  static void SetType(onnx::ValueInfoProto* vi, int32_t elem, const Dims* dims) {
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    if (!dims) return;
    auto* s = t->mutable_shape();
    for (const auto& d : *dims) {
      auto* dim = s->add_dim();
      if (d.empty()) continue;
      if (d.find_first_not_of("0123456789") == std::string::npos) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }
  ModelBuilder& Input(const std::string& name, int32_t elem, const Dims& dims) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    SetType(vi, elem, &dims);
    return *this;
  }
  ModelBuilder& Output(const std::string& name, int32_t elem = 0, const Dims* dims = nullptr) {
    auto* vi = graph().add_output();
    vi->set_name(name);
    if (elem) SetType(vi, elem, dims);
    return *this;
  }
  ModelBuilder& InitInt64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto x : v) t->add_int64_data(x);
    return *this;
  }
  ModelBuilder& InitFloat(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v = {}) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (auto d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(v.empty() ? 0.f : v[static_cast<size_t>(i) % v.size()]);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& domain = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_domain(domain);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return *n;
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

 private:
  onnx::ModelProto model_;
};

}  // namespace nuphar::testing
