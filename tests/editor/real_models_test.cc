// to_scan on the trained models of ../shared/models (issue 3 acceptance 4): no recurrent node left,
// outputs within 1e-5 of the original on the reference runtime for random inputs.
#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "editor/editor.h"
#include "graph/model_io.h"
#include "tests/editor/editor_test_util.h"

namespace nuphar::editor::testing {
namespace {

class RealModel : public ::testing::TestWithParam<const char*> {};

TEST_P(RealModel, ToScanKeepsOutputs) {
  onnx::ModelProto original;
  const std::string path = std::string(NUPHAR_SHARED_DIR) + "/models/" + GetParam() + ".onnx";
  ASSERT_TRUE(LoadModel(path, &original).ok());
  ASSERT_GT(CountRecurrentOps(original), 0);
  onnx::ModelProto converted = original;
  EditorOptions options;
  options.log = [](const std::string&) {};
  Status s = RunEditor("to_scan", &converted, options);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(CountRecurrentOps(converted), 0);
  auto session = Session::CreateFromModel(original);
  ASSERT_TRUE(session.ok()) << session.message();
  NamedTensors inputs;
  uint32_t seed = 11;
  for (const auto& in : (*session)->inputs()) {
    bool backed = false;
    for (const auto& t : original.graph().initializer()) backed |= t.name() == in.name;
    if (backed) continue;
    std::vector<int64_t> dims = in.dims;
    for (auto& d : dims)
      if (d < 0) d = 640;  // silero_vad_v3.1's symbolic `sequence`
    inputs.emplace_back(in.name, RandomTensor(dims, seed++));
  }
  ExpectSameOutputs(original, converted, inputs, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shared, RealModel,
                         ::testing::Values("dtln_model_1", "gtcrn_simple", "silero_vad_openvino_16k",
                                           "silero_vad_v3.1"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (auto& c : s)
                             if (c == '.') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace nuphar::editor::testing
