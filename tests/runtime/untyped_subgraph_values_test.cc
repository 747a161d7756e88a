// Subgraph values whose TypeProto the exporter left empty (issue 11): Silero VAD v5 and
// silero_vad_16k_op15 keep their LSTM cells in If branches whose outputs are untyped. The runtime
// takes such values' types at run time, as ONNX Runtime infers them; both models load and match
// ORT 1.20.1's outputs (stored by testdata/silero_untyped/make_fixtures.py) within 1e-4. An
// explicitly non-tensor subgraph value is still refused.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

const std::string kData = std::string(NUPHAR_SOURCE_DIR) + "/tests/runtime/testdata/silero_untyped/";

Tensor ReadPb(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  onnx::TensorProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes.str())) << path;
  auto t = TensorFromProto(proto);
  EXPECT_TRUE(t.ok()) << path << ": " << t.message();
  return t.ok() ? *t : Tensor();
}

class SileroUntypedTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SileroUntypedTest, LoadsAndMatchesOnnxRuntime) {
  const std::string model = GetParam();
  auto session = Session::Create(std::string(NUPHAR_SHARED_DIR) + "/models/" + model + ".onnx");
  ASSERT_TRUE(session.ok()) << session.message();
  NamedTensors feeds;
  for (const char* name : {"input", "state", "sr"}) feeds.emplace_back(name, ReadPb(kData + "inputs/input_" + name + ".pb"));
  auto out = (*session)->Run(feeds);
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ(out->size(), 2u);
  const char* names[] = {"output", "stateN"};
  for (size_t k = 0; k < 2; ++k) {
    const Tensor want = ReadPb(kData + model + "_ort_" + names[k] + ".pb");
    const Tensor& got = (*out)[k];
    ASSERT_EQ(got.shape(), want.shape()) << names[k];
    double max_abs = 0;
    for (int64_t i = 0; i < want.size(); ++i)
      max_abs = std::max(max_abs, std::abs(double(got.data<float>()[i]) - double(want.data<float>()[i])));
    EXPECT_LE(max_abs, 1e-4) << names[k];
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SileroUntypedTest, ::testing::Values("silero_vad_v5", "silero_vad_16k_op15"));

// If whose then-branch output has an empty TypeProto runs; a sequence-typed one is refused.
TEST(UntypedSubgraphValuesTest, EmptyTypeRunsAndSequenceTypeIsRefused) {
  for (bool sequence : {false, true}) {
    onnx::GraphProto then_g, else_g, g;
    then_g.set_name("then");
    else_g.set_name("else");
    testing::AddNode(then_g, "Identity", {"x"}, {"t_out"}, "then_id");
    testing::AddNode(else_g, "Neg", {"x"}, {"e_out"}, "else_neg");
    auto* t_out = then_g.add_output();
    t_out->set_name("t_out");
    if (sequence) t_out->mutable_type()->mutable_sequence_type();
    else t_out->mutable_type();  // present but empty
    *else_g.add_output() = testing::MakeValueInfo("e_out", DType::kFloat, {int64_t{2}});
    g.set_name("main");
    *g.add_input() = testing::MakeValueInfo("cond", DType::kBool, {});
    *g.add_input() = testing::MakeValueInfo("x", DType::kFloat, {int64_t{2}});
    auto& node = testing::AddNode(g, "If", {"cond"}, {"y"}, "if_node");
    testing::SetAttr(node, "then_branch", then_g);
    testing::SetAttr(node, "else_branch", else_g);
    *g.add_output() = testing::MakeValueInfo("y", DType::kFloat, {int64_t{2}});
    auto session = Session::CreateFromModel(testing::MakeModel(g, 13));
    if (sequence) {
      ASSERT_FALSE(session.ok());
      EXPECT_NE(session.message().find("sequence"), std::string::npos) << session.message();
      continue;
    }
    ASSERT_TRUE(session.ok()) << session.message();
    Tensor cond(DType::kBool, {});
    cond.data<bool>()[0] = true;
    auto out = (*session)->Run({{"cond", cond}, {"x", Tensor::FromVector<float>({2}, {1.5f, -2.0f})}});
    ASSERT_TRUE(out.ok()) << out.message();
    EXPECT_EQ((*out)[0].data<float>()[0], 1.5f);
    EXPECT_EQ((*out)[0].data<float>()[1], -2.0f);
  }
}

}  // namespace
}  // namespace nuphar
