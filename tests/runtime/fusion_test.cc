// The fused dynamic-quantized MatMul kernel equals the unfused reference execution bit for bit
// (issue 6 acceptance 2; spec runtime.md R3), on the original quantizer's own output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "runtime/session.h"

namespace nuphar {
namespace {

struct Fixture {
  const char* file;
  int expected_patterns;  // MatMulIntegers the quantizer emitted (per Scan body, both directions)
};

class FusionTest : public ::testing::TestWithParam<Fixture> {};

Tensor RandomInput(int64_t seq, int64_t batch, int64_t dim, uint32_t seed, bool constant_rows) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t(DType::kFloat, {seq, batch, dim});
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(gen);
  // All-zero and constant rows take the delta == 0 path.
  for (int64_t row = 0; constant_rows && row < std::min<int64_t>(2, seq * batch); ++row)
    for (int64_t d = 0; d < dim; ++d) t.data<float>()[row * dim + d] = row == 0 ? 0.0f : 0.75f;
  return t;
}

TEST_P(FusionTest, FusedEqualsUnfusedBitForBit) {
  const std::string path = std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/" + GetParam().file;
  SessionOptions fused_opts, ref_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto fused = Session::Create(path, fused_opts);
  ASSERT_TRUE(fused.ok()) << fused.message();
  auto reference = Session::Create(path, ref_opts);
  ASSERT_TRUE(reference.ok()) << reference.message();
  EXPECT_EQ((*fused)->fused_pattern_count(), GetParam().expected_patterns);
  EXPECT_EQ((*reference)->fused_pattern_count(), 0);

  const std::string input_name = (*fused)->inputs()[0].name;
  for (int64_t seq : {1, 7}) {
    for (bool constant_rows : {false, true}) {
      Tensor x = RandomInput(seq, 1, 32, static_cast<uint32_t>(seq), constant_rows);
      auto a = (*fused)->Run({{input_name, x}});
      auto b = (*reference)->Run({{input_name, x}});
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      ASSERT_EQ(a->size(), b->size());
      for (size_t k = 0; k < a->size(); ++k) {
        ASSERT_EQ((*a)[k].shape(), (*b)[k].shape());
        EXPECT_EQ(std::memcmp((*a)[k].raw(), (*b)[k].raw(), (*a)[k].bytes()), 0)
            << "output " << k << " differs, seq " << seq << (constant_rows ? " with constant rows" : "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(QuantizerFixtures, FusionTest,
                         ::testing::Values(Fixture{"only_for_scan.onnx", 4}, Fixture{"all.onnx", 8},
                                           Fixture{"symm16_all.onnx", 8}),
                         [](const auto& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace nuphar
