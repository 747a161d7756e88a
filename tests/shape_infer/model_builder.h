// Test-only helpers: build small ONNX models in code and read inferred shapes back as text.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "shape_infer/shape_infer.h"

namespace nuphar::testing {

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

inline void AttrInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void AttrInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void AttrString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void AttrGraph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}
inline void AttrTensor(onnx::NodeProto& n, const std::string& name, const onnx::TensorProto& t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

inline const onnx::ValueInfoProto* FindValue(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name) return &vi;
  for (const auto& vi : g.output())
    if (vi.name() == name) return &vi;
  for (const auto& vi : g.input())
    if (vi.name() == name) return &vi;
  return nullptr;
}

/// "b,s,32" (literals plain, dim_params as printed, unknown "?"); "<none>" / "<norank>".
inline std::string ShapeStr(const onnx::GraphProto& g, const std::string& name) {
  const onnx::ValueInfoProto* vi = FindValue(g, name);
  if (!vi || !vi->type().has_tensor_type()) return "<none>";
  if (!vi->type().tensor_type().has_shape()) return "<norank>";
  std::string s;
  for (const auto& d : vi->type().tensor_type().shape().dim()) {
    if (!s.empty()) s += ",";
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : (d.has_dim_param() ? d.dim_param() : "?");
  }
  return s;
}

inline int32_t ElemType(const onnx::GraphProto& g, const std::string& name) {
  const onnx::ValueInfoProto* vi = FindValue(g, name);
  return vi && vi->type().has_tensor_type() ? vi->type().tensor_type().elem_type() : -1;
}

inline ShapeInferResult MustInfer(onnx::ModelProto& m, ShapeInferOptions opt = {}) {
  auto r = InferShapes(&m, opt);
  if (!r.ok()) {
    ShapeInferResult bad;
    bad.outcome = InferOutcome::kIncomplete;
    bad.unknown_values = {"<error: " + r.message() + ">"};
    return bad;
  }
  return *r;
}

}  // namespace nuphar::testing
