// graph/onnx_infer_guard: models that make libonnx 1.12's inference functions divide by zero
// (SIGFPE), read or write out of bounds, or loop for hours; each is one named test. Without the
// guard 13 of the 16 refusal cases and all 3 payload cases kill or hang the test binary (checked one
// by one on 2026-11-26); SpaceToDepth wraps a dim, the copied-zero Reshape wraps to a product
// libonnx refuses itself, and Gemm-6's unchecked read happened to land. With the guard, a refused
// node comes back as the guard's error (strict mode) and a malformed payload as an input without
// data. Ordinary models infer exactly as without the guard.
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
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

struct GuardCase {
  const char* name;                          // the test's name
  std::function<void(ModelBuilder&)> build;  // builds the node under test, output "y"
  const char* error;                         // what the guard's error must say
  int opset = 13;
};

std::ostream& operator<<(std::ostream& os, const GuardCase& c) { return os << c.name; }

// An initializer whose raw_data holds `bytes` bytes, whatever its dims say.
void RawInitializer(ModelBuilder& b, const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                    size_t bytes) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(bytes, '\x01'));
}

// A graph input whose declared dims may be negative (ModelBuilder's strings cannot say -1).
void InputWithDims(ModelBuilder& b, const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  auto* vi = b.graph().add_input();
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// libonnx's whole-model inference in strict mode through `registry`; the error it reports ("" when
// none).
std::string InferenceError(onnx::ModelProto& model, const onnx::ISchemaRegistry* registry = GuardedSchemaRegistry()) {
  try {
    onnx::shape_inference::InferShapes(model, registry, onnx::ShapeInferenceOptions(false, 1));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

const std::vector<GuardCase>& RefusedCases() {
  static const std::vector<GuardCase> cases = {
      {"DepthToSpaceBlocksize2Pow62",  // fuzz_graph_tools: squares to 0, SIGFPE
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "8", "2", "3"});
         AttrInt(b.Node("DepthToSpace", {"x"}, {"y"}), "blocksize", int64_t{1} << 62);
       },
       "blocksize 4611686018427387904 is outside"},
      {"SpaceToDepthBlocksize2Pow32",  // C * blocksize^2 wraps to 0 channels
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "8", "2", "4"});
         AttrInt(b.Node("SpaceToDepth", {"x"}, {"y"}), "blocksize", int64_t{1} << 32);
       },
       "blocksize 4294967296 is outside"},
      {"MaxPoolStride0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "9"});
         auto& n = b.Node("MaxPool", {"x"}, {"y"});
         AttrInts(n, "kernel_shape", {2});
         AttrInts(n, "strides", {0});
       },
       "stride 0 is not positive"},
      {"ConvStride0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "9"});
         b.Input("w", kFloat, {"1", "1", "3"});
         AttrInts(b.Node("Conv", {"x", "w"}, {"y"}), "strides", {0});
       },
       "stride 0 is not positive"},
      {"AveragePoolSameUpperOverDim2Pow40",  // a 2^39-step loop
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "1099511627776"});
         auto& n = b.Node("AveragePool", {"x"}, {"y"});
         AttrInts(n, "kernel_shape", {2});
         AttrInts(n, "strides", {2});
         AttrString(n, "auto_pad", "SAME_UPPER");
       },
       "is past what padding is inferred for"},
      {"MaxPoolNotsetWithoutPadsOverDim2Pow40",  // libonnx loops for any auto_pad but VALID
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "1099511627776"});
         auto& n = b.Node("MaxPool", {"x"}, {"y"});
         AttrInts(n, "kernel_shape", {2});
         AttrInts(n, "strides", {2});
         AttrString(n, "auto_pad", "NOTSET");
       },
       "is past what padding is inferred for"},
      {"ReshapeOf2Pow63ElementsTo3TimesMinus1",  // INT64_MIN % -1
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"2147483648", "4294967296"});
         b.InitInt64("shape", {3}, {-1, 3, 6148914691236517205});
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       "the input's dims multiply past"},
      {"ReshapeCopyingAZeroPast2Pow62",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4611686018427387904", "1"});
         b.InitInt64("shape", {3}, {0, 2, -1});
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       "the target shape multiplies past"},
      {"EinsumUpperCaseLabelWithoutArrow",  // a stack write at 'J' - 'a'
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"2", "3"});
         AttrString(b.Node("Einsum", {"x"}, {"y"}), "equation", "iJ");
       },
       "with the label 'J'"},
      {"GatherNdBatchDimsMinus5",  // reads data dims before the first
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4", "4"});
         b.Input("i", kInt64, {"2", "1"});
         AttrInt(b.Node("GatherND", {"x", "i"}, {"y"}), "batch_dims", -5);
       },
       "batch_dims -5 is outside"},
      {"GatherNdIndicesLastDimMinus3",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4", "4"});
         InputWithDims(b, "i", kInt64, {1, -3});
         b.Node("GatherND", {"x", "i"}, {"y"});
       },
       "the indices' last dim is declared -3"},
      {"Gemm6OnARank1A",
       [](ModelBuilder& b) {
         b.Input("a", kFloat, {"5"});
         b.Input("w", kFloat, {"5", "3"});
         b.Input("c", kFloat, {"3"});
         b.Node("Gemm", {"a", "w", "c"}, {"y"});
       },
       "input 0 has rank 1; at least 2 is needed", 6},
      {"Lstm1OnARank1X",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"5"});
         b.Input("w", kFloat, {"1", "8", "5"});
         b.Input("r", kFloat, {"1", "8", "2"});
         AttrInt(b.Node("LSTM", {"x", "w", "r"}, {"y"}), "hidden_size", 2);
       },
       "input 0 has rank 1; at least 2 is needed", 6},
      {"MaxUnpoolIndicesWithoutShape",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1", "2", "2"});
         auto* vi = b.graph().add_input();
         vi->set_name("i");
         vi->mutable_type()->mutable_tensor_type()->set_elem_type(kInt64);
         AttrInts(b.Node("MaxUnpool", {"x", "i"}, {"y"}), "kernel_shape", {2, 2});
       },
       "input I has no shape"},
      {"MaxRoiPoolEmptyPooledShapeOnRank2X",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"1", "1"});
         b.Input("rois", kFloat, {"3", "5"});
         AttrInts(b.Node("MaxRoiPool", {"x", "rois"}, {"y"}), "pooled_shape", {});
       },
       "pooled_shape has 0 entries"},
      {"SplitToSequenceScalarSplit0",
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"6"});
         b.InitInt64("split", {}, {0});
         b.Node("SplitToSequence", {"x", "split"}, {"y"});
       },
       "the scalar split 0 is not positive"},
  };
  return cases;
}

class OnnxInferGuardRefuses : public ::testing::TestWithParam<GuardCase> {};

TEST_P(OnnxInferGuardRefuses, TheNodeWithItsReason) {
  const GuardCase& c = GetParam();
  ModelBuilder b(c.opset);
  c.build(b);
  b.Output("y");
  const std::string error = InferenceError(b.model());
  EXPECT_NE(error.find(c.error), std::string::npos) << "the error was '" << error << "'";
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxInferGuardRefuses, ::testing::ValuesIn(RefusedCases()),
                         [](const ::testing::TestParamInfo<GuardCase>& info) { return std::string(info.param.name); });

// A constant input whose payload is not what its dims say reaches libonnx as an input without data:
// the node still gets its output type, and no error.
const std::vector<GuardCase>& PayloadCases() {
  static const std::vector<GuardCase> cases = {
      {"ReshapeShapeWith4RawBytesForOneInt64",  // ParseData copied 4 bytes into a 0-element vector
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"4"});
         RawInitializer(b, "shape", kInt64, {1}, 4);
         b.Node("Reshape", {"x", "shape"}, {"y"});
       },
       ""},
      {"TopKWithEmptyRawK",  // read element 0 of nothing
       [](ModelBuilder& b) {
         b.Input("x", kFloat, {"8"});
         RawInitializer(b, "k", kInt64, {1}, 0);
         b.Node("TopK", {"x", "k"}, {"y", "i"});
         b.Output("i");
       },
       ""},
      {"RangeOfScalarsWithoutData",
       [](ModelBuilder& b) {
         for (const char* n : {"start", "limit", "delta"}) {
           auto* t = b.graph().add_initializer();
           t->set_name(n);
           t->set_data_type(onnx::TensorProto::FLOAT);
         }
         b.Node("Range", {"start", "limit", "delta"}, {"y"});
       },
       ""},
  };
  return cases;
}

class OnnxInferGuardWithholds : public ::testing::TestWithParam<GuardCase> {};

TEST_P(OnnxInferGuardWithholds, AMalformedPayload) {
  const GuardCase& c = GetParam();
  ModelBuilder b(c.opset);
  c.build(b);
  b.Output("y");
  EXPECT_EQ(InferenceError(b.model()), "");
  int32_t y_type = 0;
  for (const auto& vi : b.graph().value_info())
    if (vi.name() == "y") y_type = vi.type().tensor_type().elem_type();
  EXPECT_EQ(y_type, kFloat) << "the output keeps its inferred type";
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxInferGuardWithholds, ::testing::ValuesIn(PayloadCases()),
                         [](const ::testing::TestParamInfo<GuardCase>& info) { return std::string(info.param.name); });

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
  split_type.mutable_tensor_type()->set_elem_type(kInt64);
  split_type.mutable_tensor_type()->mutable_shape();  // rank 0
  onnx::TensorProto split;
  split.set_name("split");
  split.set_data_type(kInt64);
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

// Ordinary models, some in forms the checks look at closely (a declared -1, copied zeros, upper-case
// Einsum labels, the typed fields of each element type, a weight without its payload), infer
// exactly as with libonnx's own registry.
TEST(OnnxInferGuard, OrdinaryModelsInferAsWithoutTheGuard) {
  auto build = [](int opset) {
    ModelBuilder b(opset);
    InputWithDims(b, "x", kFloat, {-1, 3, 4, 4});  // an exporter's "unknown" batch
    b.InitInt64("flat", {2}, {0, -1});
    b.Node("Reshape", {"x", "flat"}, {"flat_x"});
    b.Input("img", kFloat, {"1", "8", "4", "6"});
    AttrInt(b.Node("DepthToSpace", {"img"}, {"d2s"}), "blocksize", 2);
    auto& pool = b.Node("AveragePool", {"d2s"}, {"pooled"});
    AttrInts(pool, "kernel_shape", {3, 3});
    AttrInts(pool, "strides", {2, 2});
    AttrString(pool, "auto_pad", "SAME_UPPER");
    b.InitFloat("w", {4, 2, 3, 3});
    auto& conv = b.Node("Conv", {"d2s", "w"}, {"conv"});
    AttrString(conv, "auto_pad", "NOTSET");
    AttrInts(conv, "pads", {1, 1, 1, 1});
    b.Input("p", kFloat, {"2", "3", "4"});
    b.Input("q", kFloat, {"2", "4", "5"});
    AttrString(b.Node("Einsum", {"p", "q"}, {"pq"}), "equation", "BIJ, BJK -> BIK");
    b.Input("data", kFloat, {"2", "3", "4"});
    InputWithDims(b, "idx", kInt64, {-1, 2});
    b.Node("GatherND", {"data", "idx"}, {"gathered"});
    b.Input("bidx", kInt64, {"2", "1"});
    AttrInt(b.Node("GatherND", {"data", "bidx"}, {"bgathered"}), "batch_dims", 1);
    b.Input("a", kFloat, {"5", "4"});
    b.InitFloat("gw", {4, 3});
    b.Node("Gemm", {"a", "gw"}, {"gemm"});
    // Payloads in each typed field, and an int8 weight without one (a caller's stripped copy).
    auto add = [&](const char* name, int32_t type, std::function<void(onnx::TensorProto*)> fill) {
      auto* t = b.graph().add_initializer();
      t->set_name(name);
      t->set_data_type(type);
      t->add_dims(2);
      fill(t);
      b.Node("Identity", {name}, {std::string(name) + "_out"});
    };
    add("f16", onnx::TensorProto::FLOAT16, [](onnx::TensorProto* t) { t->add_int32_data(1); t->add_int32_data(2); });
    add("flag", onnx::TensorProto::BOOL, [](onnx::TensorProto* t) { t->add_int32_data(1); t->add_int32_data(0); });
    add("u64", onnx::TensorProto::UINT64, [](onnx::TensorProto* t) { t->add_uint64_data(1); t->add_uint64_data(2); });
    add("c64", onnx::TensorProto::COMPLEX64, [](onnx::TensorProto* t) { for (int i = 0; i < 4; ++i) t->add_float_data(1); });
    add("text", onnx::TensorProto::STRING, [](onnx::TensorProto* t) { t->add_string_data("a"); t->add_string_data("b"); });
    auto* stripped = b.graph().add_initializer();
    stripped->set_name("w8");
    stripped->set_data_type(onnx::TensorProto::INT8);
    stripped->add_dims(4);
    stripped->add_dims(3);
    b.Input("a8", onnx::TensorProto::UINT8, {"5", "4"});
    b.Node("MatMulInteger", {"a8", "w8"}, {"mmi"});
    for (const char* out : {"flat_x", "pooled", "conv", "pq", "gathered", "bgathered", "gemm", "f16_out", "flag_out",
                            "u64_out", "c64_out", "text_out", "mmi"})
      b.Output(out);
    return b;
  };
  ModelBuilder guarded = build(13), plain = build(13);
  ASSERT_EQ(InferenceError(guarded.model()), "");
  ASSERT_EQ(InferenceError(plain.model(), onnx::OpSchemaRegistry::Instance()), "");
  ASSERT_EQ(guarded.graph().value_info_size(), plain.graph().value_info_size());
  EXPECT_GE(guarded.graph().value_info_size(), 13);
  for (int i = 0; i < guarded.graph().value_info_size(); ++i)
    EXPECT_EQ(guarded.graph().value_info(i).SerializeAsString(), plain.graph().value_info(i).SerializeAsString())
        << guarded.graph().value_info(i).DebugString() << "\nvs\n" << plain.graph().value_info(i).DebugString();
}

}  // namespace
}  // namespace nuphar::testing
