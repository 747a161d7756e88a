// Shared helpers of the editor tests: run models on the reference runtime and compare, count ops
// across subgraphs, build the ONNX-checker "full check" (checker + strict shape inference).
#pragma once

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/graph_view.h"
#include "runtime/session.h"

namespace nuphar::editor::testing {

inline int CountOps(const onnx::GraphProto& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.node()) {
    n += node.op_type() == op;
    for (const auto* sub : Subgraphs(node)) n += CountOps(*sub, op);
  }
  return n;
}

inline int CountRecurrentOps(const onnx::ModelProto& m) {
  return CountOps(m.graph(), "LSTM") + CountOps(m.graph(), "GRU") + CountOps(m.graph(), "RNN");
}

/// onnx.checker.check_model(full_check=True): the checker plus strict shape inference.
inline std::string FullCheck(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto copy = model;
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// U(-1, 1) floats with a fixed seed.
inline Tensor RandomTensor(const std::vector<int64_t>& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return Tensor::FromVector<float>(shape, v);
}

/// Which executor runs a model: the generated code (the product path, ~0.1 s of compilation per
/// session) or the reference executor (the oracle).
enum class Engine { kJit, kReference };

inline Expected<std::vector<Tensor>> RunOnRuntime(const onnx::ModelProto& model, const NamedTensors& inputs,
                                                  const std::vector<std::string>& outputs = {},
                                                  Engine engine = Engine::kJit) {
  SessionOptions options;
  options.settings = engine == Engine::kJit ? "nuphar_execution_mode:jit" : "nuphar_execution_mode:reference";
  auto session = Session::CreateFromModel(model, options);
  if (!session.ok()) return session.status();
  return (*session)->Run(inputs, outputs);
}

/// Max abs difference, or +inf on a shape/dtype mismatch.
inline double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != DType::kFloat || b.dtype() != DType::kFloat) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
  return worst;
}

/// Runs both models on the same inputs and expects every graph output of `original` to match.
/// The original runs on the reference executor (its LSTM/GRU/RNN ops are reference kernels on
/// either engine); the converted model on `converted_engine`.
inline void ExpectSameOutputs(const onnx::ModelProto& original, const onnx::ModelProto& converted,
                              const NamedTensors& inputs, double atol = 1e-5,
                              Engine converted_engine = Engine::kJit) {
  std::vector<std::string> names;
  for (const auto& o : original.graph().output()) names.push_back(o.name());
  auto want = RunOnRuntime(original, inputs, names, Engine::kReference);
  ASSERT_TRUE(want.ok()) << "original: " << want.message();
  auto got = RunOnRuntime(converted, inputs, names, converted_engine);
  ASSERT_TRUE(got.ok()) << "converted: " << got.message();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_LE(MaxAbsDiff((*want)[i], (*got)[i]), atol) << "output " << names[i];
}

}  // namespace nuphar::editor::testing
