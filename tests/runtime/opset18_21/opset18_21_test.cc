// Opset 18-21 through every part (issue 11): each hand-built fixture model shape-infers
// completely, to ONNX Runtime's output shapes; the opset-18 recurrent model (Split num_outputs, LSTM inside If, ReduceMean with
// axes as input) runs, converts to Scan, shape-infers and quantizes (--only_for_scan), each
// within 1e-4 of ONNX Runtime 1.20.1; models above opset 21 are refused by name.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "editor/editor.h"
#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "shape_infer/shape_infer.h"
#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

const std::string kData = std::string(NUPHAR_SOURCE_DIR) + "/tests/runtime/testdata/opset18_21/";

Tensor ReadPb(const std::string& path, std::string* name = nullptr) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  onnx::TensorProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes.str())) << path;
  if (name) *name = proto.name();
  auto t = TensorFromProto(proto);
  EXPECT_TRUE(t.ok()) << path << ": " << t.message();
  return t.ok() ? *t : Tensor();
}

double MaxAbsDiff(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() != want.shape()) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < want.size(); ++i)
    m = std::max(m, std::abs(double(got.data<float>()[i]) - double(want.data<float>()[i])));
  return m;
}

std::vector<Tensor> RunModel(const onnx::ModelProto& model, const NamedTensors& feeds) {
  auto session = Session::CreateFromModel(model);
  EXPECT_TRUE(session.ok()) << session.message();
  if (!session.ok()) return {};
  auto out = (*session)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.message();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(Opset18To21Test, EveryFixtureModelShapeInfersCompletely) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    if (!entry.is_directory()) continue;
    ++cases;
    onnx::ModelProto model;
    ASSERT_TRUE(LoadModel(entry.path().string() + "/model.onnx", &model).ok()) << entry.path();
    auto result = InferShapes(&model, {});
    ASSERT_TRUE(result.ok()) << entry.path() << ": " << result.message();
    EXPECT_EQ(result->outcome, InferOutcome::kComplete)
        << entry.path().filename() << ": first incomplete node " << result->first_incomplete_node;
    // Literal dims of every graph output equal the shape ONNX Runtime produced.
    for (int k = 0; k < model.graph().output_size(); ++k) {
      const Tensor want = ReadPb(entry.path().string() + "/test_data_set_0/output_" + std::to_string(k) + ".pb");
      const auto& dims = model.graph().output(k).type().tensor_type().shape().dim();
      ASSERT_EQ(dims.size(), static_cast<int>(want.shape().size())) << entry.path().filename() << " output " << k;
      for (int i = 0; i < dims.size(); ++i)
        if (dims[i].has_dim_value())
          EXPECT_EQ(dims[i].dim_value(), want.shape()[static_cast<size_t>(i)])
              << entry.path().filename() << " output " << k << " dim " << i;
    }
  }
  EXPECT_GE(cases, 17);
}

// The opset-18 recurrent model: float, to_scan, shape inference and int8 --only_for_scan.
TEST(Opset18To21Test, RecurrentModelRunsConvertsAndQuantizes) {
  const std::string dir = kData + "recurrent18_lstm_in_if/";
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel(dir + "model.onnx", &model).ok());
  std::string in_name;
  NamedTensors feeds{{"", ReadPb(dir + "test_data_set_0/input_0.pb", &in_name)}};
  feeds[0].first = in_name;
  const Tensor want = ReadPb(dir + "test_data_set_0/output_0.pb");

  auto float_out = RunModel(model, feeds);
  ASSERT_EQ(float_out.size(), 1u);
  EXPECT_LE(MaxAbsDiff(float_out[0], want), 1e-4);

  onnx::ModelProto scan = model;
  ASSERT_TRUE(editor::RunEditor("to_scan", &scan, {}).ok());
  int lstm_left = 0;
  std::function<void(const onnx::GraphProto&)> count = [&](const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      lstm_left += n.op_type() == "LSTM";
      for (const auto& a : n.attribute())
        if (a.has_g()) count(a.g());
    }
  };
  count(scan.graph());
  EXPECT_EQ(lstm_left, 0) << "to_scan left LSTMs inside the If";
  auto si = InferShapes(&scan, {});
  ASSERT_TRUE(si.ok()) << si.message();
  EXPECT_EQ(si->outcome, InferOutcome::kComplete) << si->first_incomplete_node;
  auto scan_out = RunModel(scan, feeds);
  ASSERT_EQ(scan_out.size(), 1u);
  EXPECT_LE(MaxAbsDiff(scan_out[0], want), 1e-4);

  onnx::ModelProto int8 = scan;
  quant::QuantizeOptions q;
  q.only_for_scan = true;
  auto report = quant::Quantize(&int8, q);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_FALSE(report->quantized.empty());
  auto int8_out = RunModel(int8, feeds);
  ASSERT_EQ(int8_out.size(), 1u);
  // ONNX Runtime on the same quantized model (make_fixtures.py --quantized): the int8 math agrees.
  const std::string ort_int8 = dir + "ort_quantized_output_0.pb";
  if (std::filesystem::exists(ort_int8)) EXPECT_LE(MaxAbsDiff(int8_out[0], ReadPb(ort_int8)), 1e-4);
  EXPECT_LE(MaxAbsDiff(int8_out[0], want), 5e-2);  // int8 against float
}

TEST(Opset18To21Test, NewerOpsetIsRefusedByName) {
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel(kData + "mish18/model.onnx", &model).ok());
  model.mutable_opset_import(0)->set_version(22);
  auto session = Session::CreateFromModel(model);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.message().find("imports ONNX opset 22; nuphar-cpp knows opsets up to 21"), std::string::npos)
      << session.message();
  std::string bytes;
  model.SerializeToString(&bytes);
  onnx::ModelProto reloaded;
  Status st = LoadModelFromBytes(bytes.data(), bytes.size(), &reloaded, "m22.onnx");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("m22.onnx"), std::string::npos) << st.message();
}

// What the runtime does not run is refused at load, naming the node, the op and the reason.
TEST(Opset18To21Test, UnsupportedFormsAreRefusedByName) {
  struct Case {
    const char* op;
    int opset;
    std::vector<std::string> inputs;
    int outputs;
    std::function<void(onnx::NodeProto&)> attrs;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"Split", 18, {"x"}, 2, [](onnx::NodeProto& n) { testing::SetAttr(n, "num_outputs", int64_t{3}); },
       "num_outputs is 3 but the node has 2 outputs"},
      {"Split", 17, {"x"}, 2, [](onnx::NodeProto& n) { testing::SetAttr(n, "num_outputs", int64_t{2}); },
       "attribute 'num_outputs' exists from Split-18"},
      {"Pad", 18, {"x", "pads"}, 1, [](onnx::NodeProto& n) { testing::SetAttr(n, "mode", std::string("wrap")); },
       "(from opset 19) wrap"},
      {"Resize", 18, {"x", "", "scales"}, 1,
       [](onnx::NodeProto& n) {
         testing::SetAttr(n, "antialias", int64_t{1});
         testing::SetAttr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
       },
       "antialias with tf_crop_and_resize is not supported"},
      {"DeformConv", 19, {"x", "w", "off"}, 1, [](onnx::NodeProto&) {}, "DeformConv (opset 19) is not supported"},
      {"QuantizeLinear", 21, {"x", "scale"}, 1, [](onnx::NodeProto& n) { testing::SetAttr(n, "block_size", int64_t{2}); },
       "block_size"},
  };
  for (const Case& c : cases) {
    onnx::GraphProto g;
    g.set_name("main");
    *g.add_input() = testing::MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{4}});
    for (const char* init : {"pads", "scales", "w", "off", "scale"}) *g.add_input() = testing::MakeValueInfo(init, DType::kFloat, {int64_t{1}});
    g.mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DType::kInt64));
    std::vector<std::string> outs;
    for (int k = 0; k < c.outputs; ++k) outs.push_back("y" + std::to_string(k));
    auto& node = testing::AddNode(g, c.op, c.inputs, outs, "the_node");
    c.attrs(node);
    for (const auto& o : outs) *g.add_output() = testing::MakeValueInfo(o, DType::kFloat, {});
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    auto session = Session::CreateFromModel(testing::MakeModel(g, c.opset));
    ASSERT_FALSE(session.ok()) << c.op << "-" << c.opset;
    EXPECT_NE(session.message().find("the_node"), std::string::npos) << session.message();
    EXPECT_NE(session.message().find(c.reason), std::string::npos) << session.message();
  }
}

}  // namespace
}  // namespace nuphar
