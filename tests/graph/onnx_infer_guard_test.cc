// graph/onnx_infer_guard: attributes and declared dims that make libonnx 1.12's inference functions
// divide by zero (SIGFPE), read or write out of bounds, or loop for hours. Without the guard 15 of
// the 18 table cases kill or hang this test (checked one by one); SpaceToDepth wraps a dim, Gemm-6's
// unchecked read happened to land, and the copied-zero Reshape wrapped to a product libonnx refuses.
// With the guard libonnx reports the guard's error for the node (strict mode).
#include "graph/onnx_infer_guard.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/modellib/model_builder.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

struct TrapCase {
  const char* what;
  std::function<void(ModelBuilder&)> build;  // builds the node under test, output "y"
  const char* error;                          // what the guard's error must say
  int opset = 13;
};

// An initializer whose raw_data holds `bytes` bytes, whatever its dims say.
void RawInitializer(ModelBuilder& b, const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                    size_t bytes) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(bytes, '\x01'));
}

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
      // Found by reading libonnx 1.12 (each crashes or corrupts memory without the guard):
      {"Reshape with a 4-byte raw int64 shape (ParseData copies into a 0-element vector)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4"});
         RawInitializer(b, "shape", onnx::TensorProto::INT64, {1}, 4);
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       "has 4 bytes of raw data for 1 elements"},
      {"TopK with an empty raw K (reads element 0 of nothing)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"8"});
         RawInitializer(b, "k", onnx::TensorProto::INT64, {1}, 0);
         b.Node("TopK", {"x", "k"}, {"y", "i"});
         b.Output("i");
       },
       "has 0 bytes of raw data for 1 elements"},
      {"Range with scalar bounds without data",
       [](ModelBuilder& b) {
         for (const char* n : {"start", "limit", "delta"}) {
           auto* t = b.graph().add_initializer();
           t->set_name(n);
           t->set_data_type(onnx::TensorProto::INT64);
         }
         b.Node("Range", {"start", "limit", "delta"}, {"y"});
       },
       "has 0 data entries for 1 elements"},
      {"Einsum 'iJ' without '->' (a stack write at 'J' - 'a')",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"2", "3"});
         AttrString(b.Node("Einsum", {"x"}, {"y"}), "equation", "iJ");
       },
       "with the label 'J'"},
      {"GatherND batch_dims -5 (reads data dims before the first)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4", "4"});
         b.Input("i", onnx::TensorProto::INT64, {"2", "1"});
         AttrInt(b.Node("GatherND", {"x", "i"}, {"y"}), "batch_dims", -5);
       },
       "batch_dims -5 is outside"},
      {"GatherND with indices declared [1, -3]",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4", "4"});
         auto* vi = b.graph().add_input();
         vi->set_name("i");
         auto* shape = vi->mutable_type()->mutable_tensor_type();
         shape->set_elem_type(onnx::TensorProto::INT64);
         shape->mutable_shape()->add_dim()->set_dim_value(1);
         shape->mutable_shape()->add_dim()->set_dim_value(-3);
         b.Node("GatherND", {"x", "i"}, {"y"});
       },
       "is declared with the negative dim -3"},
      {"Gemm-6 on a rank-1 A",
       [](ModelBuilder& b) {
         b.Input("a", kFloat, {"5"});
         b.Input("w", kFloat, {"5", "3"});
         b.Input("c", kFloat, {"3"});
         b.Node("Gemm", {"a", "w", "c"}, {"y"});
       },
       "input 0 has rank 1; at least 2 is needed", 6},
      {"LSTM-1 on a rank-1 X",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"5"});
         b.Input("w", kFloat, {"1", "8", "5"});
         b.Input("r", kFloat, {"1", "8", "2"});
         AttrInt(b.Node("LSTM", {"x", "w", "r"}, {"y"}), "hidden_size", 2);
       },
       "input 0 has rank 1; at least 2 is needed", 6},
      {"MaxUnpool whose indices have no shape",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "2", "2"});
         auto* vi = b.graph().add_input();
         vi->set_name("i");
         vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
         AttrInts(b.Node("MaxUnpool", {"x", "i"}, {"y"}), "kernel_shape", {2, 2});
       },
       "input I has no shape"},
      {"MaxRoiPool with an empty pooled_shape on a rank-2 X",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1"});
         b.Input("rois", kFloat, {"3", "5"});
         AttrInts(b.Node("MaxRoiPool", {"x", "rois"}, {"y"}), "pooled_shape", {});
       },
       "pooled_shape has 0 entries"},
      {"Reshape copying a zero into an output product of 2^62 * 2 (wraps)",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4611686018427387904", "1"});
         b.InitInt64("shape", {3}, {0, 2, -1});
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       "the target shape multiplies past"},
  };
  for (const auto& c : cases) {
    ModelBuilder b(c.opset);
    c.build(b);
    b.Output("y");
    const std::string error = GuardedInferenceError(b.model());
    EXPECT_NE(error.find(c.error), std::string::npos) << c.what << ": the error was '" << error << "'";
  }
}

// SplitToSequence decides "scalar" from input 1's declared type, not from the initializer's
// dims; shape_infer's node inference gives libonnx the declared types and the initializer's data
// separately, so a declared scalar with a 1-D [0] initializer reaches `dim % 0` (SIGFPE).
TEST(OnnxInferGuard, SplitToSequenceScalarIsJudgedByTheDeclaredType) {
  onnx::NodeProto node;
  node.set_op_type("SplitToSequence");
  node.add_input("x");
  node.add_input("split");
  node.add_output("y");
  onnx::TypeProto x_type, split_type;
  x_type.mutable_tensor_type()->set_elem_type(kFloat);
  x_type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(6);
  split_type.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  split_type.mutable_tensor_type()->mutable_shape();  // rank 0
  onnx::TensorProto split;
  split.set_name("split");
  split.set_data_type(onnx::TensorProto::INT64);
  split.add_dims(1);
  split.add_int64_data(0);
  std::unordered_map<std::string, onnx::TypeProto*> types = {{"x", &x_type}, {"split", &split_type}};
  std::unordered_map<std::string, const onnx::TensorProto*> data = {{"split", &split}};
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse;
  onnx::shape_inference::InferenceContextImpl ctx(node, types, data, sparse);
  const onnx::OpSchema* schema = GuardedSchemaRegistry()->GetSchema("SplitToSequence", 13, "");
  ASSERT_NE(schema, nullptr);
  std::string error;
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("the scalar split 0 is not positive"), std::string::npos) << error;
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
