// The original tool's quantized fixtures and our quantizer's outputs give bit-identical results
// on the runtime, with and without the fused NGEMM kernel (issue 5 acceptance 2).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <random>

#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "runtime/session.h"

namespace nuphar {
namespace {

const std::string kDir = std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/";

struct Row {
  const char* fixture;
  bool only_for_scan;
  bool share_input;
  const char* preset;  // "" = default
};

class RuntimeEquivalenceTest : public ::testing::TestWithParam<Row> {};

std::vector<Tensor> RunModel(const onnx::ModelProto& model, const std::string& mode, const Tensor& x) {
  SessionOptions options;
  options.settings = "nuphar_execution_mode:" + mode;
  auto session = Session::CreateFromModel(model, options);
  EXPECT_TRUE(session.ok()) << session.message();
  if (!session.ok()) return {};
  auto out = (*session)->Run({{"input", x}});
  EXPECT_TRUE(out.ok()) << out.message();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST_P(RuntimeEquivalenceTest, FixtureAndOursAgreeBitForBit) {
  const Row& row = GetParam();
  onnx::ModelProto source, fixture;
  ASSERT_TRUE(LoadModel(kDir + "lstm_scan.onnx", &source).ok());
  ASSERT_TRUE(LoadModel(kDir + row.fixture, &fixture).ok());
  quant::QuantizeOptions options;
  options.only_for_scan = row.only_for_scan;
  options.share_input_quantization = row.share_input;
  if (*row.preset) {
    auto preset = quant::PresetConfig(row.preset);
    ASSERT_TRUE(preset.ok());
    options.default_config = *preset;
  }
  auto report = quant::Quantize(&source, options);
  ASSERT_TRUE(report.ok()) << report.message();

  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  Tensor x(DType::kFloat, {9, 1, 32});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = dist(gen);
  for (const char* mode : {"reference", "jit"}) {
    auto ours = RunModel(source, mode, x);
    auto theirs = RunModel(fixture, mode, x);
    ASSERT_EQ(ours.size(), theirs.size());
    ASSERT_FALSE(ours.empty());
    for (size_t k = 0; k < ours.size(); ++k) {
      ASSERT_EQ(ours[k].shape(), theirs[k].shape());
      EXPECT_EQ(std::memcmp(ours[k].raw(), theirs[k].raw(), ours[k].bytes()), 0)
          << row.fixture << " output " << k << " in mode " << mode;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RuntimeEquivalenceTest,
                         ::testing::Values(Row{"only_for_scan.onnx", true, false, ""}, Row{"all.onnx", false, false, ""},
                                           Row{"shared_input.onnx", false, true, ""},
                                           Row{"symm16_all.onnx", false, false, "symm16_param3_input3"}),
                         [](const auto& info) {
                           std::string n = info.param.fixture;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace nuphar

namespace nuphar {
namespace {

TEST(QuantizeOptionsTest, DefaultConfigIsTheDefaultPreset) {
  auto preset = quant::PresetConfig(quant::kDefaultPreset);
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(quant::QuantizeOptions{}.default_config == *preset);
}

}  // namespace
}  // namespace nuphar
