// Vectorized Sigmoid/Tanh (runtime/kernels/math/vector_math.h) on every path the CPU has, against
// double-precision references: absolute error everywhere, relative error near zero, the
// saturated tails, the non-multiple-of-8 tail, in-place and out-of-place calls, and the
// Sigmoid/Tanh op kernels (float32 through these functions, float64 through libm).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/math/vector_math.h"
#include "runtime/platform/cpu_features.h"
#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

double SigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<float> Sweep() {
  std::vector<float> x;
  for (float v = -30; v <= 30; v += 0.0137f) x.push_back(v);
  for (float v : {-1000.f, -100.f, -88.f, -1e-8f, -1e-30f, 0.f, 1e-30f, 1e-8f, 88.f, 100.f, 1000.f}) x.push_back(v);
  for (float v = -0.1f; v <= 0.1f; v += 0.00037f) x.push_back(v);  // both sides of the 1/16 switch
  x.push_back(1.5f);  // an odd count exercises the tail
  return x;
}

class VectorMathTest : public ::testing::TestWithParam<VectorMathPath> {
 protected:
  void SetUp() override {
    if (GetParam() == VectorMathPath::kAvx512 && !HostCpu().Supports(IsaTier::kAvx512))
      GTEST_SKIP() << "this CPU lacks the avx512 tier";
    SetVectorMathPathForTesting(GetParam());
  }
  void TearDown() override { SetVectorMathPathForTesting(VectorMathPath::kAuto); }
};

TEST_P(VectorMathTest, SigmoidAndTanhAreAccurate) {
  const std::vector<float> x = Sweep();
  std::vector<float> s = x, t = x;
  SigmoidInPlace(s.data(), int64_t(s.size()));
  TanhInPlace(t.data(), int64_t(t.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_NEAR(s[i], SigmoidRef(x[i]), 3e-7) << x[i];
    const double tanh_ref = std::tanh(double(x[i]));
    ASSERT_NEAR(t[i], tanh_ref, 3e-7) << x[i];
    if (std::abs(x[i]) < 0.1f) ASSERT_LE(std::abs(t[i] - tanh_ref), 1e-6 * std::abs(tanh_ref)) << x[i];
  }
}

// Log over positive normals and subnormals of every exponent (relative error), and the special
// values exactly: log(0) = -inf, log(inf) = inf, NaN for NaN and for x < 0, log(1) = 0.
TEST_P(VectorMathTest, LogIsAccurateAndKeepsTheSpecialValues) {
  std::vector<float> x;
  for (float v = 1e-38f; v < 3e38f; v *= 1.37f) x.push_back(v);
  for (float v = 0.5f; v <= 2.0f; v += 0.00113f) x.push_back(v);  // around the sqrt(1/2) switch and 1
  for (float v : {1.4e-45f, 3e-42f, 1.1754942e-38f, 0.70710677f, 0.70710683f, 1.0f, 1.0000001f, 0.99999994f})
    x.push_back(v);
  std::vector<float> y(x.size());
  GetVectorMath().log_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::log(static_cast<double>(x[i]));
    ASSERT_LE(std::abs(y[i] - want), 2e-7 * std::abs(want) + 1e-7) << x[i];
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f, -0.0f, inf, -1.0f, -inf, std::nanf(""), 1.0f};
  std::vector<float> s(special.size());
  GetVectorMath().log_f32(special.data(), s.data(), static_cast<int64_t>(special.size()));
  EXPECT_EQ(s[0], -inf);
  EXPECT_EQ(s[1], -inf);
  EXPECT_EQ(s[2], inf);
  EXPECT_TRUE(std::isnan(s[3]) && std::isnan(s[4]) && std::isnan(s[5]));
  EXPECT_EQ(s[6], 0.0f);
}

TEST_P(VectorMathTest, OutOfPlaceEqualsInPlaceForEveryLength) {
  const std::vector<float> x = Sweep();
  for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33}) {
    std::vector<float> in_place(x.begin(), x.begin() + n), out(static_cast<size_t>(n) + 1, -7.0f);
    GetVectorMath().tanh_f32(x.data(), out.data(), n);
    TanhInPlace(in_place.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[i], in_place[i]) << n << " " << i;
    EXPECT_EQ(out[n], -7.0f) << "wrote past the end, n=" << n;
  }
}

TEST_P(VectorMathTest, SoftmaxMatchesDoublePrecisionForEveryLength) {
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 33, 6625}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 1, -7.0f);
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * 12.0f;
    GetVectorMath().softmax_f32(x.data(), y.data(), n);
    double max = x[0], sum = 0;
    for (float v : x) max = std::max<double>(max, v);
    for (float v : x) sum += std::exp(v - max);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], std::exp(x[i] - max) / sum, 1e-6 * (std::exp(x[i] - max) / sum) + 1e-9) << n << " " << i;
    EXPECT_EQ(y[n], -7.0f) << "wrote past the end, n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, VectorMathTest,
                         ::testing::Values(VectorMathPath::kRef, VectorMathPath::kAvx2, VectorMathPath::kAvx512),
                         [](const auto& info) {
                           return info.param == VectorMathPath::kRef ? "ref" : info.param == VectorMathPath::kAvx2 ? "avx2" : "avx512";
                         });

// The zmm build runs each lane through the same ops as the ymm build: identical results.
TEST(VectorMathTiersTest, Avx512EqualsAvx2BitForBit) {
  if (!HostCpu().Supports(IsaTier::kAvx512)) GTEST_SKIP() << "this CPU lacks the avx512 tier";
  const std::vector<float> x = Sweep();
  std::vector<float> positive;
  for (float v : x) positive.push_back(std::abs(v) + 1e-30f);
  for (auto fn : {&VectorMath::sigmoid_f32, &VectorMath::tanh_f32, &VectorMath::log_f32}) {
    const std::vector<float>& in = fn == &VectorMath::log_f32 ? positive : x;
    std::vector<float> y2(in.size()), y512(in.size());
    (VectorMathAvx2().*fn)(in.data(), y2.data(), static_cast<int64_t>(in.size()));
    (VectorMathAvx512().*fn)(in.data(), y512.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(y2[i], y512[i]) << in[i];
  }
}

TEST(VectorMathOpsTest, SigmoidAndTanhOpsUseTheVectorPathForFloatAndLibmForDouble) {
  const std::vector<float> xs = {-20.f, -3.f, -0.01f, 0.f, 1e-7f, 0.5f, 4.f, 20.f, 90.f};
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<double> xd(xs.begin(), xs.end());
  for (const char* op : {"Sigmoid", "Tanh"}) {
    auto f = testing::RunSingleNode({.op = op, .inputs = {Tensor::FromVector<float>({n}, xs)}});
    auto d = testing::RunSingleNode({.op = op, .inputs = {Tensor::FromVector<double>({n}, xd)}});
    ASSERT_TRUE(f.ok() && d.ok()) << op;
    std::vector<float> expected = xs;
    (GetVectorMath().*(std::string(op) == "Tanh" ? &VectorMath::tanh_f32 : &VectorMath::sigmoid_f32))(xs.data(),
                                                                                                   expected.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ((*f)[0].data<float>()[i], expected[i]) << op << " " << xs[i];
      const double ref = std::string(op) == "Tanh" ? std::tanh(xd[i]) : SigmoidRef(xd[i]);
      EXPECT_EQ((*d)[0].data<double>()[i], ref) << op << " " << xd[i];
    }
  }
}

}  // namespace
}  // namespace nuphar
