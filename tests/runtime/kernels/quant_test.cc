// quant kernels against plain references: MatMulInteger for every u8/s8 combination with
// per-tensor, per-row and per-column zero points, MatMulInteger16 (plain and NGEMM paths, the
// nuphar_igemm_* tile settings of both), QuantizeLinear rounding and
// saturation, per-axis DequantizeLinear, DynamicQuantizeLinear of an all-zero input, ConvInteger.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/platform/cpu_features.h"
#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::RunSingleNode;
using testing::SingleNode;
using testing::Values;
using Shape = std::vector<int64_t>;

template <class T>
std::vector<T> RandomInts(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// C = (A - za[m]) (B - zb[n]) with za per row (size M or 1) and zb per column (size N or 1).
template <class TA, class TB>
std::vector<int32_t> NaiveMatMulInteger(const std::vector<TA>& a, const std::vector<TB>& b, int64_t M, int64_t K,
                                        int64_t N, const std::vector<TA>& za, const std::vector<TB>& zb) {
  std::vector<int32_t> c;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += (int64_t{a[m * K + k]} - za[za.size() == 1 ? 0 : m]) * (int64_t{b[k * N + n]} - zb[zb.size() == 1 ? 0 : n]);
      c.push_back(static_cast<int32_t>(acc));
    }
  return c;
}

template <class TA, class TB>
void CheckMatMulInteger(bool per_line_zero_points, bool constant_b) {
  const int64_t M = 3, K = 33, N = 17;
  const auto a = RandomInts<TA>(M * K, 1);
  const auto b = RandomInts<TB>(K * N, 2);
  const auto za = RandomInts<TA>(per_line_zero_points ? M : 1, 3);
  const auto zb = RandomInts<TB>(per_line_zero_points ? N : 1, 4);
  const Shape za_shape = per_line_zero_points ? Shape{M} : Shape{}, zb_shape = per_line_zero_points ? Shape{N} : Shape{};
  SingleNode node{.op = "MatMulInteger", .opset = 10,
                  .inputs = {Tensor::FromVector<TA>({M, K}, a), Tensor::FromVector<TB>({K, N}, b),
                             Tensor::FromVector<TA>(za_shape, za), Tensor::FromVector<TB>(zb_shape, zb)}};
  if (constant_b) node.constant_inputs = {1, 3};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].dtype(), DType::kInt32);
  EXPECT_EQ(Values<int32_t>((*out)[0]), (NaiveMatMulInteger<TA, TB>(a, b, M, K, N, za, zb)));
}

TEST(MatMulIntegerTest, AllOperandTypesAndZeroPointLayouts) {
  for (bool per_line : {false, true})
    for (bool constant_b : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "per_line " << per_line << " constant_b " << constant_b);
      CheckMatMulInteger<uint8_t, int8_t>(per_line, constant_b);
      CheckMatMulInteger<uint8_t, uint8_t>(per_line, constant_b);
      CheckMatMulInteger<int8_t, int8_t>(per_line, constant_b);
      CheckMatMulInteger<int8_t, uint8_t>(per_line, constant_b);
    }
}

TEST(MatMulIntegerTest, SaturatingOperandsStayExact) {
  // All 255 x -128: vpmaddubsw-style pair sums would saturate; the result must not.
  const int64_t K = 64;
  SingleNode node{.op = "MatMulInteger", .opset = 10,
                  .inputs = {Tensor::FromVector<uint8_t>({1, K}, std::vector<uint8_t>(K, 255)),
                             Tensor::FromVector<int8_t>({K, 2}, std::vector<int8_t>(2 * K, -128))},
                  .constant_inputs = {1}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{255 * -128 * K, 255 * -128 * K}));
}

TEST(MatMulIntegerTest, BatchedZeroPointsPerBatchRow) {
  // A [2, 2, 3] with a_zero_point [2, 2, 1]: each batch row has its own zero point.
  const std::vector<uint8_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<uint8_t> za = {1, 2, 3, 4};
  SingleNode node{.op = "MatMulInteger", .opset = 10,
                  .inputs = {Tensor::FromVector<uint8_t>({2, 2, 3}, a), Tensor::FromVector<uint8_t>({3, 1}, {1, 1, 1}),
                             Tensor::FromVector<uint8_t>({2, 2, 1}, za)}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  // Row sums minus 3 * zero point.
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{6 - 3, 15 - 6, 24 - 9, 33 - 12}));
}

TEST(MatMulInteger16Test, Int16TimesInt16ToInt32) {
  SingleNode node{.op = "MatMulInteger16", .domain = "com.microsoft", .opset = 13,
                  .inputs = {Tensor::FromVector<int16_t>({1, 2}, {-32768, 32767}),
                             Tensor::FromVector<int16_t>({2, 2}, {-32768, 1, 2, 32767})}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int32_t>((*out)[0]),
            (std::vector<int32_t>{static_cast<int32_t>(int64_t{32768} * 32768 + 2 * 32767),
                                  -32768 + 32767 * 32767}));
}

// MatMulInteger16 with a constant int16 B runs on NGEMM's s16 x s16 kernel (packed at load);
// uint16 A or a computed B take the plain loop. Every path must equal the int64 sum wrapped to
// int32, on NGEMM's portable and CPUID-chosen paths alike.
struct Int16Case {
  int64_t batch, M, K, N;
  enum Fill { kRandom, kAllMin, kMinMaxMix } fill;
};

template <class TA>
void CheckMatMulInteger16(const Int16Case& c, bool constant_b) {
  const int64_t rows = c.batch * c.M;
  std::vector<TA> a = RandomInts<TA>(static_cast<size_t>(rows * c.K), 21);
  std::vector<int16_t> b = RandomInts<int16_t>(static_cast<size_t>(c.K * c.N), 22);
  if (c.fill == Int16Case::kAllMin) {
    // vpmaddwd's one overflowing pair: (-32768 * -32768) * 2 = 2^31, and K * 2^30 wraps again.
    std::fill(a.begin(), a.end(), std::numeric_limits<TA>::lowest());
    std::fill(b.begin(), b.end(), int16_t{-32768});
  } else if (c.fill == Int16Case::kMinMaxMix) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i % 3 == 0 ? std::numeric_limits<TA>::max() : std::numeric_limits<TA>::lowest();
    for (size_t i = 0; i < b.size(); ++i) b[i] = i % 2 == 0 ? int16_t{-32768} : int16_t{32767};
  }
  const Shape a_shape = c.batch == 1 ? Shape{c.M, c.K} : Shape{c.batch, c.M, c.K};
  SingleNode node{.op = "MatMulInteger16", .domain = "com.microsoft", .opset = 13,
                  .inputs = {Tensor::FromVector<TA>(a_shape, a), Tensor::FromVector<int16_t>({c.K, c.N}, b)}};
  if (constant_b) node.constant_inputs = {1};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (NaiveMatMulInteger<TA, int16_t>(a, b, rows, c.K, c.N, {0}, {0})));
}

TEST(MatMulInteger16Test, ConstantInt16WeightsOnNgemmEqualThePlainLoop) {
  const Int16Case cases[] = {
      {1, 1, 1, 1, Int16Case::kRandom},    {1, 1, 7, 5, Int16Case::kRandom},     {1, 3, 33, 17, Int16Case::kRandom},
      {1, 4, 64, 32, Int16Case::kRandom},  {1, 5, 31, 40, Int16Case::kRandom},   {1, 17, 65, 33, Int16Case::kRandom},
      {2, 3, 9, 63, Int16Case::kRandom},   {1, 2, 2, 3, Int16Case::kAllMin},     {1, 6, 64, 9, Int16Case::kAllMin},
      {1, 3, 5, 34, Int16Case::kAllMin},   {1, 7, 129, 31, Int16Case::kMinMaxMix}, {3, 1, 16, 8, Int16Case::kMinMaxMix},
  };
  for (ngemm::NgemmPath path : {ngemm::NgemmPath::kRef, ngemm::NgemmPath::kAuto}) {
    ASSERT_TRUE(ngemm::SetNgemmPathForTesting(path));
    for (const Int16Case& c : cases)
      for (bool constant_b : {true, false}) {
        SCOPED_TRACE(::testing::Message() << ngemm::GetNgemmDispatch().name << " batch " << c.batch << " M " << c.M
                                          << " K " << c.K << " N " << c.N << " fill " << c.fill << " constant_b "
                                          << constant_b);
        CheckMatMulInteger16<int16_t>(c, constant_b);
        CheckMatMulInteger16<uint16_t>(c, constant_b);  // plain loop: uint16 is outside s16
      }
  }
  ngemm::SetNgemmPathForTesting(ngemm::NgemmPath::kAuto);
}

// The NGEMM kernels take the session's nuphar_igemm_* settings: a value NGEMM cannot use fails
// session creation naming the node and the key; a valid non-default blocking changes nothing.
Expected<std::vector<Tensor>> RunWithSettings(const SingleNode& node, const std::string& settings) {
  SessionOptions options;
  options.settings = settings;
  auto session = Session::CreateFromModel(testing::BuildSingleNodeModel(node), options);
  if (!session) return session.status();
  return (*session)->Run({{"in0", node.inputs[0]}});
}

TEST(NgemmTileSettingsTest, InvalidTileFailsCreationAndValidTilesKeepResults) {
  const int64_t M = 9, K = 33, N = 40;
  const auto a8 = RandomInts<uint8_t>(M * K, 31);
  const auto b8 = RandomInts<int8_t>(K * N, 32);
  const auto a16 = RandomInts<int16_t>(M * K, 33);
  const auto b16 = RandomInts<int16_t>(K * N, 34);
  const SingleNode nodes[] = {
      {.op = "MatMulInteger", .opset = 10,
       .inputs = {Tensor::FromVector<uint8_t>({M, K}, a8), Tensor::FromVector<int8_t>({K, N}, b8)},
       .constant_inputs = {1}},
      {.op = "MatMulInteger16", .domain = "com.microsoft", .opset = 13,
       .inputs = {Tensor::FromVector<int16_t>({M, K}, a16), Tensor::FromVector<int16_t>({K, N}, b16)},
       .constant_inputs = {1}},
  };
  const std::vector<int32_t> expected[] = {NaiveMatMulInteger<uint8_t, int8_t>(a8, b8, M, K, N, {0}, {0}),
                                           NaiveMatMulInteger<int16_t, int16_t>(a16, b16, M, K, N, {0}, {0})};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(nodes[i].op);
    for (const char* bad : {"nuphar_igemm_tile_m:0", "nuphar_igemm_tile_n:2000000", "nuphar_igemm_tile_k:0"}) {
      auto out = RunWithSettings(nodes[i], bad);
      ASSERT_FALSE(out.ok()) << bad;
      const std::string key = std::string(bad).substr(0, std::string(bad).find(':'));
      EXPECT_NE(out.message().find(key), std::string::npos) << out.message();
      EXPECT_NE(out.message().find("node_under_test"), std::string::npos) << out.message();
    }
    for (const char* good : {"", "nuphar_igemm_tile_m:2, nuphar_igemm_tile_n:8, nuphar_igemm_tile_k:4",
                             "nuphar_igemm_tile_m:3, nuphar_igemm_tile_n:16, nuphar_igemm_permute:all",
                             "nuphar_igemm_tile_k:8, nuphar_igemm_permute:outer"}) {
      auto out = RunWithSettings(nodes[i], good);
      ASSERT_TRUE(out.ok()) << good << ": " << out.message();
      EXPECT_EQ(Values<int32_t>((*out)[0]), expected[i]) << good;
    }
  }
}

// nuphar_codegen_target picks the NGEMM tier of a session: every tier this CPU has gives the
// plain loop's integers; an unknown name, or a tier the CPU lacks, fails creation naming the key.
TEST(NgemmTileSettingsTest, CodegenTargetRunsEveryTierBitIdentically) {
  const int64_t M = 19, K = 67, N = 45;
  const auto a8 = RandomInts<uint8_t>(M * K, 41);
  const auto b8 = RandomInts<int8_t>(K * N, 42);
  const SingleNode node{.op = "MatMulInteger", .opset = 10,
                        .inputs = {Tensor::FromVector<uint8_t>({M, K}, a8), Tensor::FromVector<int8_t>({K, N}, b8)},
                        .constant_inputs = {1}};
  const std::vector<int32_t> expected = NaiveMatMulInteger<uint8_t, int8_t>(a8, b8, M, K, N, {0}, {0});
  int tiers_run = 0;
  for (const char* tier : {"portable", "avx2", "avxvnni", "avx512", "avx512vnni"}) {
    const std::string settings = std::string("nuphar_codegen_target:") + tier;
    auto out = RunWithSettings(node, settings);
    if (!HostCpu().Supports(*ParseIsaTier(tier))) {
      ASSERT_FALSE(out.ok()) << tier;
      EXPECT_NE(out.message().find("nuphar_codegen_target"), std::string::npos) << out.message();
      std::printf("[ INFO ] this CPU lacks the %s tier: checked that it is refused\n", tier);
      continue;
    }
    ASSERT_TRUE(out.ok()) << settings << ": " << out.message();
    EXPECT_EQ(Values<int32_t>((*out)[0]), expected) << tier;
    ++tiers_run;
  }
  EXPECT_GE(tiers_run, 1);
  auto bad = RunWithSettings(node, "nuphar_codegen_target:sse9");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("nuphar_codegen_target"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("sse9"), std::string::npos) << bad.message();
}

TEST(QuantizeLinearTest, RoundsHalfToEvenAndSaturates) {
  SingleNode node{.op = "QuantizeLinear", .opset = 13,
                  .inputs = {Tensor::FromVector<float>({6}, {2.5f, 3.5f, -2.5f, 1000.0f, -1000.0f, 0.4f}),
                             Tensor::Scalar<float>(1.0f), Tensor::Scalar<int8_t>(1)}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int8_t>((*out)[0]), (std::vector<int8_t>{3, 5, -1, 127, -128, 1}));
  node.inputs.resize(2);  // no zero point: uint8 output
  auto unsigned_out = RunSingleNode(node);
  ASSERT_TRUE(unsigned_out.ok()) << unsigned_out.message();
  EXPECT_EQ((*unsigned_out)[0].dtype(), DType::kUint8);
  EXPECT_EQ(Values<uint8_t>((*unsigned_out)[0]), (std::vector<uint8_t>{2, 4, 0, 255, 0, 0}));
}

TEST(DequantizeLinearTest, PerAxisWithNegativeAxis) {
  SingleNode node{.op = "DequantizeLinear", .opset = 13,
                  .inputs = {Tensor::FromVector<int8_t>({2, 2}, {1, 2, 3, 4}), Tensor::FromVector<float>({2}, {1.0f, 0.5f}),
                             Tensor::FromVector<int8_t>({2}, {0, 2})},
                  .attributes = [](onnx::NodeProto& n) { testing::SetAttr(n, "axis", int64_t{-1}); }};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{1.0f, 0.0f, 3.0f, 1.0f}));
}

TEST(DynamicQuantizeLinearTest, AllZeroInputGivesZeroScaleWithoutNaN) {
  SingleNode node{.op = "DynamicQuantizeLinear", .opset = 11,
                  .inputs = {Tensor::FromVector<float>({3}, {0, 0, 0})}, .num_outputs = 3};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{0.0f}));
  EXPECT_EQ(Values<uint8_t>((*out)[2]), (std::vector<uint8_t>{0}));
}

TEST(ConvIntegerTest, PadsWithTheZeroPointAndUsesPerChannelWeightZeros) {
  // 1-D: x = [5, 6] with zero point 5 and pads 1 -> (x - 5) = [0, 0, 1, 0].
  SingleNode node{.op = "ConvInteger", .opset = 10,
                  .inputs = {Tensor::FromVector<uint8_t>({1, 1, 2}, {5, 6}), Tensor::FromVector<uint8_t>({2, 1, 2}, {1, 2, 3, 4}),
                             Tensor::Scalar<uint8_t>(5), Tensor::FromVector<uint8_t>({2}, {0, 1})},
                  .attributes = [](onnx::NodeProto& n) { testing::SetAttr(n, "pads", Shape{1, 1}); }};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  // channel 0 (w = [1,2]): windows [0,0],[0,1],[1,0] -> 0, 2, 1; channel 1 (w - 1 = [2,3]) -> 0, 3, 2.
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{0, 2, 1, 0, 3, 2}));
}

}  // namespace
}  // namespace nuphar
