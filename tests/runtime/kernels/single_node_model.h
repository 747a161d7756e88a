// Test helper for the nn and quant kernel tests: build a one-node model in code, run it on the
// reference runtime, and return its outputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/error.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar::testing {

/// n floats uniform in [-1, 1) from a seeded generator (reproducible test data).
inline std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct SingleNode {
  std::string op;
  std::string domain;  ///< "" for ONNX
  int opset = 17;
  /// Inputs in order; a default-constructed (undefined) tensor is an absent optional input.
  std::vector<Tensor> inputs;
  /// Indices of inputs that become initializers (constant at load time) instead of graph inputs.
  std::vector<size_t> constant_inputs;
  int num_outputs = 1;
  std::function<void(onnx::NodeProto&)> attributes;
};

inline onnx::ModelProto BuildSingleNodeModel(const SingleNode& spec) {
  onnx::GraphProto g;
  g.set_name("single_" + spec.op);
  std::vector<std::string> in_names, out_names;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Tensor& t = spec.inputs[i];
    if (!t.defined()) {
      in_names.emplace_back();
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    in_names.push_back(name);
    bool constant = false;
    for (size_t c : spec.constant_inputs) constant |= c == i;
    if (constant) {
      *g.add_initializer() = TensorToProto(t, name);
    } else {
      std::vector<Dim> dims(t.shape().begin(), t.shape().end());
      *g.add_input() = MakeValueInfo(name, t.dtype(), dims);
    }
  }
  for (int i = 0; i < spec.num_outputs; ++i) {
    out_names.push_back("out" + std::to_string(i));
    onnx::ValueInfoProto vi;
    vi.set_name(out_names.back());
    *g.add_output() = vi;
  }
  onnx::NodeProto& node = AddNode(g, spec.op, in_names, out_names, "node_under_test");
  if (!spec.domain.empty()) node.set_domain(spec.domain);
  if (spec.attributes) spec.attributes(node);
  onnx::ModelProto model = MakeModel(g, spec.opset);
  if (!spec.domain.empty()) {
    auto* op = model.add_opset_import();
    op->set_domain(spec.domain);
    op->set_version(1);
  }
  return model;
}

/// Creates a session for the node (load-time errors come back here) and runs it once.
inline Expected<std::vector<Tensor>> RunSingleNode(const SingleNode& spec) {
  auto session = Session::CreateFromModel(BuildSingleNodeModel(spec));
  if (!session) return session.status();
  NamedTensors feeds;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    bool constant = false;
    for (size_t c : spec.constant_inputs) constant |= c == i;
    if (spec.inputs[i].defined() && !constant) feeds.emplace_back("in" + std::to_string(i), spec.inputs[i]);
  }
  return (*session)->Run(feeds);
}

template <class T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

}  // namespace nuphar::testing
