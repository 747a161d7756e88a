// shape_infer_bench: speed of symbolic shape inference (issue 4 acceptance 4, spec S2 / §6 item 12).
//   1. a 4000-node chain stored in reverse topological order (the original took 14 s);
//   2. a 12-layer BERT-base-shaped encoder with symbolic batch and sequence, built in code
//      (weights are static-shaped graph inputs, so no weight data is materialized).
// Prints the time of each and whether it is under the 1 s target; never fails on timing.
#include <onnx/onnx_pb.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "shape_infer/shape_infer.h"

namespace {

struct Builder {
  onnx::ModelProto model;
  int counter = 0;
  explicit Builder(int opset) {
    model.set_ir_version(8);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
  }
  onnx::GraphProto& g() { return *model.mutable_graph(); }
  void Input(const std::string& name, int32_t elem, const std::vector<std::string>& dims) {
    auto* t = g().add_input();
    t->set_name(name);
    auto* tt = t->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (const auto& d : dims) {
      if (d.find_first_not_of("0123456789") == std::string::npos) s->add_dim()->set_dim_value(std::stoll(d));
      else s->add_dim()->set_dim_param(d);
    }
  }
  void Ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  void Scalar(const std::string& name, float v) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
  }
  std::string Node(const std::string& op, const std::vector<std::string>& in, const char* attr = nullptr,
                   std::vector<int64_t> ints = {}) {
    auto* n = g().add_node();
    n->set_op_type(op);
    for (const auto& i : in) n->add_input(i);
    std::string out = op + "_" + std::to_string(counter++);
    n->add_output(out);
    if (attr) {
      auto* a = n->add_attribute();
      a->set_name(attr);
      if (ints.size() == 1 && std::string(attr) == "axis") {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(ints[0]);
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (auto x : ints) a->add_ints(x);
      }
    }
    return out;
  }
  std::string Weight(const std::vector<std::string>& dims) {
    std::string name = "w" + std::to_string(counter++);
    Input(name, onnx::TensorProto::FLOAT, dims);
    return name;
  }
};

onnx::ModelProto ReversedChain(int n) {
  Builder b(13);
  b.Input("x", onnx::TensorProto::FLOAT, {"batch", "seq", "64"});
  std::string prev = "x";
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto node;
    node.set_op_type(i % 2 ? "Relu" : "Neg");
    node.add_input(prev);
    prev = "t" + std::to_string(i);
    node.add_output(prev);
    nodes.push_back(node);
  }
  for (int i = n - 1; i >= 0; --i) *b.g().add_node() = nodes[static_cast<size_t>(i)];
  b.g().add_output()->set_name(prev);
  return b.model;
}

// Self-attention heads are split through the Shape -> Gather -> Concat -> Reshape value path.
std::string Heads(Builder& b, const std::string& x) {
  std::string shp = b.Node("Shape", {x});
  std::string head = b.Node("Slice", {shp, "c0", "c2"});
  std::string target = b.Node("Concat", {head, "c12_64"}, "axis", {0});
  std::string r = b.Node("Reshape", {x, target});
  return b.Node("Transpose", {r}, "perm", {0, 2, 1, 3});
}

std::string LayerNorm(Builder& b, const std::string& x) {
  std::string mean = b.Node("ReduceMean", {x}, "axes", {-1});
  std::string d = b.Node("Sub", {x, mean});
  std::string var = b.Node("ReduceMean", {b.Node("Mul", {d, d})}, "axes", {-1});
  std::string norm = b.Node("Div", {d, b.Node("Sqrt", {b.Node("Add", {var, "eps"})})});
  return b.Node("Add", {b.Node("Mul", {norm, b.Weight({"768"})}), b.Weight({"768"})});
}

onnx::ModelProto BertBase(int layers) {
  Builder b(13);
  b.Input("input", onnx::TensorProto::FLOAT, {"batch", "seq", "768"});
  b.Input("mask", onnx::TensorProto::FLOAT, {"batch", "1", "1", "seq"});
  b.Ints("c0", {0});
  b.Ints("c2", {2});
  b.Ints("c12_64", {12, 64});
  b.Ints("c768", {-1, 768});
  b.Scalar("eps", 1e-5f);
  b.Scalar("scale", 8.f);
  std::string x = "input";
  for (int l = 0; l < layers; ++l) {
    auto proj = [&](const std::string& in, const char* k, const char* n) {
      return b.Node("Add", {b.Node("MatMul", {in, b.Weight({k, n})}), b.Weight({n})});
    };
    std::string q = Heads(b, proj(x, "768", "768"));
    std::string k = Heads(b, proj(x, "768", "768"));
    std::string v = Heads(b, proj(x, "768", "768"));
    std::string kt = b.Node("Transpose", {k}, "perm", {0, 1, 3, 2});
    std::string scores = b.Node("Add", {b.Node("Div", {b.Node("MatMul", {q, kt}), "scale"}), "mask"});
    std::string probs = b.Node("Softmax", {scores}, "axis", {-1});
    std::string ctx = b.Node("Transpose", {b.Node("MatMul", {probs, v})}, "perm", {0, 2, 1, 3});
    std::string shp = b.Node("Shape", {x});
    std::string merged = b.Node("Reshape", {ctx, b.Node("Concat", {b.Node("Slice", {shp, "c0", "c2"}), "c768_tail"}, "axis", {0})});
    std::string attn = LayerNorm(b, b.Node("Add", {x, proj(merged, "768", "768")}));
    std::string ff = proj(attn, "768", "3072");
    std::string gelu = b.Node("Mul", {ff, b.Node("Sigmoid", {b.Node("Mul", {ff, "scale"})})});
    x = LayerNorm(b, b.Node("Add", {attn, proj(gelu, "3072", "768")}));
  }
  b.Ints("c768_tail", {768});
  b.g().add_output()->set_name(x);
  return b.model;
}

double TimeInference(onnx::ModelProto model, const char* name) {
  auto start = std::chrono::steady_clock::now();
  auto r = nuphar::InferShapes(&model, {});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const char* outcome = !r.ok() ? "error" : (r->outcome == nuphar::InferOutcome::kComplete ? "complete" : "incomplete");
  std::printf("%-32s nodes %6d  %8.3f s  %s  (%s, target < 1 s)\n", name, model.graph().node_size(), s,
              s < 1.0 ? "OK" : "SLOW", outcome);
  if (r.ok() && r->outcome == nuphar::InferOutcome::kComplete) {
    const auto& out = model.graph().output(0).type().tensor_type().shape();
    std::printf("  output shape:");
    for (const auto& d : out.dim()) std::printf(" %s", d.has_dim_value() ? std::to_string(d.dim_value()).c_str() : d.dim_param().c_str());
    std::printf("\n");
  }
  return s;
}

}  // namespace

int main() {
  TimeInference(ReversedChain(4000), "chain-4000 (reverse order)");
  TimeInference(BertBase(12), "bert-base 12 layers (b, s)");
  return 0;
}
