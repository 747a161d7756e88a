// graph/onnx_infer_guard: attributes and declared dims that make libonnx 1.12's inference functions
// divide by zero (SIGFPE) or loop for hours. Without the guard each case kills or hangs this test;
// with it libonnx reports the guard's error for the node (strict mode), and other nodes go on.
#include "graph/onnx_infer_guard.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/modellib/model_builder.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

struct TrapCase {
  const char* what;
  std::function<void(ModelBuilder&)> build;  // builds the node under test, output "y"
  const char* error;                          // what the guard's error must say
};

// Runs libonnx's whole-model inference in strict mode through the guarded registry and returns
// the error it reports ("" when none).
std::string GuardedInferenceError(onnx::ModelProto& model) {
  try {
    onnx::shape_inference::InferShapes(model, GuardedSchemaRegistry(), onnx::ShapeInferenceOptions(false, 1));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxInferGuard, TrappingAttributesAndDimsAreRefused) {
  const std::vector<TrapCase> cases = {
      {"DepthToSpace blocksize 2^62 (fuzz_graph_tools: it squares to 0)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "8", "2", "3"});
         AttrInt(b.Node("DepthToSpace", {"x"}, {"y"}), "blocksize", int64_t{1} << 62);
       },
       "blocksize 4611686018427387904 is outside"},
      {"SpaceToDepth blocksize 2^32 (C * blocksize^2 wraps to 0 channels)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "8", "2", "4"});
         AttrInt(b.Node("SpaceToDepth", {"x"}, {"y"}), "blocksize", int64_t{1} << 32);
       },
       "blocksize 4294967296 is outside"},
      {"MaxPool stride 0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "9"});
         auto& n = b.Node("MaxPool", {"x"}, {"y"});
         AttrInts(n, "kernel_shape", {2});
         AttrInts(n, "strides", {0});
       },
       "stride 0 is not positive"},
      {"Conv stride 0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "9"});
         b.Input("w", kFloat, {"1", "1", "3"});
         AttrInts(b.Node("Conv", {"x", "w"}, {"y"}), "strides", {0});
       },
       "stride 0 is not positive"},
      {"AveragePool SAME_UPPER over a dim of 2^40 (a 2^39-step loop)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "1099511627776"});
         auto& n = b.Node("AveragePool", {"x"}, {"y"});
         AttrInts(n, "kernel_shape", {2});
         AttrInts(n, "strides", {2});
         AttrString(n, "auto_pad", "SAME_UPPER");
       },
       "is past what SAME padding is inferred for"},
      {"SplitToSequence scalar split 0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"6"});
         b.InitInt64("split", {}, {0});
         b.Node("SplitToSequence", {"x", "split"}, {"y"});
       },
       "the scalar split 0 is not positive"},
      {"Reshape of 2^63 elements to [-1, 3, 6148914691236517205] (INT64_MIN / -1)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"2147483648", "4294967296"});
         b.InitInt64("shape", {3}, {-1, 3, 6148914691236517205});
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       "the input's dims multiply past"},
  };
  for (const auto& c : cases) {
    ModelBuilder b(13);
    c.build(b);
    b.Output("y");
    const std::string error = GuardedInferenceError(b.model());
    EXPECT_NE(error.find(c.error), std::string::npos) << c.what << ": the error was '" << error << "'";
  }
}

// The limits are past every real model: the same ops at ordinary sizes infer as before.
TEST(OnnxInferGuard, OrdinaryAttributesInferAsBefore) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"1", "8", "4", "6"});
  AttrInt(b.Node("DepthToSpace", {"x"}, {"d"}), "blocksize", 2);
  auto& pool = b.Node("AveragePool", {"d"}, {"p"});
  AttrInts(pool, "kernel_shape", {3, 3});
  AttrInts(pool, "strides", {2, 2});
  AttrString(pool, "auto_pad", "SAME_UPPER");
  b.InitInt64("shape", {2}, {-1, 6});
  b.Node("Reshape", {"p", "shape"}, {"y"});
  b.Output("y");
  ASSERT_EQ(GuardedInferenceError(b.model()), "");
  const auto& vi = b.graph().value_info();
  auto shape_of = [&](const std::string& name) {
    std::string dims;
    for (const auto& v : vi)
      if (v.name() == name)
        for (const auto& d : v.type().tensor_type().shape().dim()) dims += std::to_string(d.dim_value()) + ",";
    return dims;
  };
  EXPECT_EQ(shape_of("d"), "1,2,8,12,");
  EXPECT_EQ(shape_of("p"), "1,2,4,6,");
  EXPECT_EQ(shape_of("y"), "8,6,");
}

}  // namespace
}  // namespace nuphar::testing
