// Elementwise kernels: broadcast corners against a naive reference, integer edge cases that
// must not trap, Cast's NaN rule (R3), Sum's evaluation order, legacy (opset < 7) broadcasting
// and load-time refusals. The ONNX backend node tests cover the ordinary cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::RunSingleNode;
using testing::SetAttr;
using testing::SingleNode;
using testing::Values;
using Shape = std::vector<int64_t>;

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

template <class T>
Tensor Iota(const Shape& shape, T start, T step) {
  std::vector<T> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(start + static_cast<T>(i) * step);
  return Tensor::FromVector<T>(shape, v);
}

// Element of `t` (shape `in`) that output element `flat` (shape `out`) reads under numpy rules.
template <class T>
T BroadcastRead(const Tensor& t, const Shape& out, int64_t flat) {
  const Shape& in = t.shape();
  int64_t offset = 0, stride = 1;
  for (int i = static_cast<int>(out.size()) - 1; i >= 0; --i) {
    const int64_t coord = flat % out[i];
    flat /= out[i];
    const int j = i - static_cast<int>(out.size() - in.size());
    if (j < 0) continue;
    if (in[j] != 1) offset += coord * stride;
    stride *= in[j];
  }
  return t.data<T>()[offset];
}

struct BroadcastCase {
  Shape a, b, out;
};

class BinaryBroadcastTest : public ::testing::TestWithParam<BroadcastCase> {};

TEST_P(BinaryBroadcastTest, SubMatchesNaiveForFloatAndInt) {
  const auto& c = GetParam();
  {
    Tensor a = Iota<float>(c.a, 0.5f, 1.25f), b = Iota<float>(c.b, -3.0f, 0.75f);
    auto out = RunSingleNode({.op = "Sub", .inputs = {a, b}});
    ASSERT_TRUE(out.ok()) << out.message();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.shape(), c.out);
    for (int64_t i = 0; i < y.size(); ++i)
      EXPECT_EQ(y.data<float>()[i], BroadcastRead<float>(a, c.out, i) - BroadcastRead<float>(b, c.out, i)) << i;
  }
  {
    Tensor a = Iota<int32_t>(c.a, 7, 3), b = Iota<int32_t>(c.b, -2, 5);
    auto out = RunSingleNode({.op = "Less", .inputs = {a, b}});
    ASSERT_TRUE(out.ok()) << out.message();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.dtype(), DType::kBool);
    for (int64_t i = 0; i < y.size(); ++i)
      EXPECT_EQ(y.data<bool>()[i], BroadcastRead<int32_t>(a, c.out, i) < BroadcastRead<int32_t>(b, c.out, i)) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Corners, BinaryBroadcastTest,
                         ::testing::Values(BroadcastCase{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
                                           BroadcastCase{{2, 3, 4}, {}, {2, 3, 4}},
                                           BroadcastCase{{}, {2, 3, 4}, {2, 3, 4}},
                                           BroadcastCase{{5, 17}, {17}, {5, 17}},
                                           BroadcastCase{{5, 17}, {5, 1}, {5, 17}},
                                           BroadcastCase{{2, 1, 4}, {3, 1}, {2, 3, 4}},
                                           BroadcastCase{{4, 1}, {1, 4}, {4, 4}},
                                           BroadcastCase{{3, 1, 2, 1, 2}, {2, 1, 2, 1}, {3, 2, 2, 2, 2}},
                                           BroadcastCase{{0, 3}, {3}, {0, 3}},
                                           BroadcastCase{{1}, {}, {1}}));

TEST(ElementwiseTest, IncompatibleShapesFailAtRunTimeWithBothShapes) {
  auto out = RunSingleNode({.op = "Add", .inputs = {Iota<float>({2, 3}, 0, 1), Iota<float>({4}, 0, 1)}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("[2,3]"), std::string::npos) << out.message();
  EXPECT_NE(out.message().find("node_under_test"), std::string::npos) << out.message();
}

TEST(ElementwiseTest, IntegerDivisionAndModByZeroGiveZeroInsteadOfTrapping) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  Tensor a = Tensor::FromVector<int32_t>({4}, {7, kMin, -7, 9});
  Tensor b = Tensor::FromVector<int32_t>({4}, {0, -1, 2, 0});
  auto div = RunSingleNode({.op = "Div", .inputs = {a, b}});
  ASSERT_TRUE(div.ok()) << div.message();
  EXPECT_EQ(Values<int32_t>((*div)[0]), (std::vector<int32_t>{0, kMin, -3, 0}));  // truncation, as ORT
  auto mod = RunSingleNode({.op = "Mod", .inputs = {a, b}});
  ASSERT_TRUE(mod.ok()) << mod.message();
  EXPECT_EQ(Values<int32_t>((*mod)[0]), (std::vector<int32_t>{0, 0, 1, 0}));
}

TEST(ElementwiseTest, ModSignFollowsDivisorOrDividendPerFmod) {
  Tensor a = Tensor::FromVector<int64_t>({4}, {-7, 7, -7, 7});
  Tensor b = Tensor::FromVector<int64_t>({4}, {3, -3, -3, 3});
  auto floor_mod = RunSingleNode({.op = "Mod", .inputs = {a, b}});
  ASSERT_TRUE(floor_mod.ok()) << floor_mod.message();
  EXPECT_EQ(Values<int64_t>((*floor_mod)[0]), (std::vector<int64_t>{2, -2, -1, 1}));
  auto trunc_mod = RunSingleNode({.op = "Mod", .inputs = {a, b}, .attributes = [](onnx::NodeProto& n) {
                                    SetAttr(n, "fmod", int64_t{1});
                                  }});
  ASSERT_TRUE(trunc_mod.ok()) << trunc_mod.message();
  EXPECT_EQ(Values<int64_t>((*trunc_mod)[0]), (std::vector<int64_t>{-1, 1, -1, 1}));
}

TEST(ElementwiseTest, FloatModWithoutFmodIsRefusedAtLoad) {
  auto out = RunSingleNode({.op = "Mod", .inputs = {Iota<float>({2}, 1, 1), Iota<float>({2}, 1, 1)}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("fmod"), std::string::npos) << out.message();
}

TEST(ElementwiseTest, BitShiftByWidthOrMoreGivesZero) {
  Tensor x = Tensor::FromVector<uint8_t>({4}, {0xff, 0xff, 0x81, 1});
  Tensor s = Tensor::FromVector<uint8_t>({4}, {8, 200, 1, 7});
  auto left = RunSingleNode({.op = "BitShift", .inputs = {x, s}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "direction", std::string("LEFT"));
                             }});
  ASSERT_TRUE(left.ok()) << left.message();
  EXPECT_EQ(Values<uint8_t>((*left)[0]), (std::vector<uint8_t>{0, 0, 0x02, 0x80}));
}

TEST(ElementwiseTest, CastOfNanAndInfToIntegersIsZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor::FromVector<float>({6}, {nan, inf, -inf, 3.9f, -3.9f, -1.0f});
  for (DType to : {DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64}) {
    auto out = RunSingleNode({.op = "Cast", .inputs = {x}, .attributes = [to](onnx::NodeProto& n) {
                                SetAttr(n, "to", static_cast<int64_t>(to));
                              }});
    ASSERT_TRUE(out.ok()) << out.message();
    auto v = (*out)[0].ToInt64Vector();
    ASSERT_TRUE(v.ok());
    const int64_t minus_one = to == DType::kUint8 ? 255 : -1;  // wraps, as numpy
    EXPECT_EQ(*v, (std::vector<int64_t>{0, 0, 0, 3, to == DType::kUint8 ? 253 : -3, minus_one})) << DTypeName(to);
  }
}

TEST(ElementwiseTest, CastFloat16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between float16 1.0 and 1.0009765625: ties to even gives 1.0.
  Tensor x = Tensor::FromVector<float>({3}, {1.0f + 1.0f / 2048, 65504.0f, -0.5f});
  auto half = RunSingleNode({.op = "Cast", .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "to", static_cast<int64_t>(DType::kFloat16));
                             }});
  ASSERT_TRUE(half.ok()) << half.message();
  auto back = RunSingleNode({.op = "Cast", .inputs = {(*half)[0]}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "to", static_cast<int64_t>(DType::kFloat));
                             }});
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(Values<float>((*back)[0]), (std::vector<float>{1.0f, 65504.0f, -0.5f}));
}

TEST(ElementwiseTest, CastOpset1TakesTheTypeByName) {
  auto out = RunSingleNode({.op = "Cast", .opset = 1, .inputs = {Tensor::FromVector<float>({2}, {2.7f, -1.5f})},
                            .attributes = [](onnx::NodeProto& n) { SetAttr(n, "to", std::string("INT32")); }});
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ((*out)[0].dtype(), DType::kInt32);
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{2, -1}));
}

TEST(ElementwiseTest, CastToStringIsRefusedAtLoad) {
  auto out = RunSingleNode({.op = "Cast", .inputs = {Iota<float>({2}, 0, 1)}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "to", static_cast<int64_t>(DType::kString));
                            }});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("string"), std::string::npos) << out.message();
}

TEST(ElementwiseTest, SumFoldsLeftToRight) {
  // ((1e8 + 1) + -1e8) + 1 = 1 in float; any other order gives 0 or 2.
  Tensor a = Tensor::FromVector<float>({1}, {1e8f}), b = Tensor::FromVector<float>({1}, {1.0f});
  Tensor c = Tensor::FromVector<float>({1}, {-1e8f}), d = Tensor::FromVector<float>({1}, {1.0f});
  auto out = RunSingleNode({.op = "Sum", .inputs = {a, b, c, d}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].data<float>()[0], ((1e8f + 1.0f) + -1e8f) + 1.0f);
}

TEST(ElementwiseTest, VariadicMaxBroadcastsAndMeanDivides) {
  Tensor a = Tensor::FromVector<float>({2, 1}, {1, 5}), b = Tensor::FromVector<float>({3}, {0, 2, 4});
  Tensor c = Tensor::FromVector<float>({}, {3});
  auto max = RunSingleNode({.op = "Max", .inputs = {a, b, c}});
  ASSERT_TRUE(max.ok()) << max.message();
  EXPECT_EQ((*max)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>((*max)[0]), (std::vector<float>{3, 3, 4, 5, 5, 5}));
  auto mean = RunSingleNode({.op = "Mean", .inputs = {a, b}});
  ASSERT_TRUE(mean.ok()) << mean.message();
  EXPECT_EQ(Values<float>((*mean)[0]), (std::vector<float>{0.5f, 1.5f, 2.5f, 2.5f, 3.5f, 4.5f}));
}

TEST(ElementwiseTest, Opset6BroadcastAlignsBAtAxis) {
  Tensor a = Iota<float>({2, 3, 2}, 0, 1), b = Tensor::FromVector<float>({3}, {100, 200, 300});
  auto out = RunSingleNode({.op = "Add", .opset = 6, .inputs = {a, b}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "broadcast", int64_t{1});
                              SetAttr(n, "axis", int64_t{1});
                            }});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311}));
  auto no_broadcast = RunSingleNode({.op = "Add", .opset = 6, .inputs = {a, b}});
  EXPECT_FALSE(no_broadcast.ok());
}

TEST(ElementwiseTest, ClipBoundsFromAttributesOrOptionalInputs) {
  Tensor x = Tensor::FromVector<float>({4}, {-5, 0.5f, 5, std::numeric_limits<float>::quiet_NaN()});
  auto attrs = RunSingleNode({.op = "Clip", .opset = 6, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                                SetAttr(n, "min", -1.0f);
                                SetAttr(n, "max", 1.0f);
                              }});
  ASSERT_TRUE(attrs.ok()) << attrs.message();
  auto v = Values<float>((*attrs)[0]);
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_TRUE(std::isnan(v[3]));  // NaN passes through (and a later Cast makes it 0)
  auto max_only = RunSingleNode({.op = "Clip", .opset = 13, .inputs = {x, Tensor(), Tensor::Scalar<float>(2.0f)}});
  ASSERT_TRUE(max_only.ok()) << max_only.message();
  EXPECT_EQ((*max_only)[0].data<float>()[0], -5.0f);
  EXPECT_EQ((*max_only)[0].data<float>()[2], 2.0f);
  Tensor xi = Tensor::FromVector<int32_t>({3}, {-9, 3, 9});
  auto ints = RunSingleNode(
      {.op = "Clip", .opset = 13, .inputs = {xi, Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(5)}});
  ASSERT_TRUE(ints.ok()) << ints.message();
  EXPECT_EQ(Values<int32_t>((*ints)[0]), (std::vector<int32_t>{0, 3, 5}));
}

TEST(ElementwiseTest, WhereBroadcastsAllThreeInputs) {
  Tensor cond = Tensor::FromVector<bool>({2, 1}, {true, false});
  Tensor x = Tensor::FromVector<int64_t>({3}, {1, 2, 3});
  Tensor y = Tensor::FromVector<int64_t>({}, {-1});
  auto out = RunSingleNode({.op = "Where", .inputs = {cond, x, y}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
}

TEST(ElementwiseTest, FloatOnlyOpRefusesIntegerInputAtLoad) {
  auto out = RunSingleNode({.op = "Sqrt", .inputs = {Tensor::FromVector<int32_t>({1}, {4})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("int32"), std::string::npos) << out.message();
  EXPECT_NE(out.message().find("node_under_test"), std::string::npos) << out.message();
}

TEST(ElementwiseTest, ActivationsMatchTheirFormulas) {
  Tensor x = Tensor::FromVector<float>({5}, {-3, -0.5f, 0, 0.5f, 30});
  auto sigmoid = RunSingleNode({.op = "Sigmoid", .inputs = {x}});
  auto softplus = RunSingleNode({.op = "Softplus", .inputs = {x}});
  auto hardswish = RunSingleNode({.op = "HardSwish", .inputs = {x}});
  auto selu = RunSingleNode({.op = "Selu", .inputs = {x}});
  ASSERT_TRUE(sigmoid.ok() && softplus.ok() && hardswish.ok() && selu.ok());
  for (int i = 0; i < 5; ++i) {
    const float v = x.data<float>()[i];
    EXPECT_NEAR((*sigmoid)[0].data<float>()[i], 1.0 / (1.0 + std::exp(-static_cast<double>(v))), 3e-7);
    EXPECT_NEAR((*softplus)[0].data<float>()[i], std::log1p(std::exp(static_cast<double>(v))), 1e-5);
    EXPECT_FLOAT_EQ((*hardswish)[0].data<float>()[i], v * std::max(0.0f, std::min(1.0f, v / 6 + 0.5f)));
    const double selu_ref = v > 0 ? 1.0507009873554805 * v : 1.0507009873554805 * 1.6732632423543772 * (std::exp(v) - 1);
    EXPECT_NEAR((*selu)[0].data<float>()[i], selu_ref, 1e-5);
  }
}

TEST(ElementwiseTest, PowWithExponentTwoIsTheExactSquare) {
  const std::vector<float> xs = {-3.5f, -0.0f, 1e-20f, 1.1f, 3e19f, std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN()};
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = Tensor::FromVector<float>({n}, xs);
  // One exponent of each type takes the kernel's square loop; a [1, 1] exponent also raises the
  // rank; an exponent per element takes the element loop.
  for (const Tensor& e : {Tensor::FromVector<float>({1}, {2.0f}), Tensor::FromVector<int64_t>({1}, {2}),
                          Tensor::FromVector<int32_t>({}, {2}), Tensor::FromVector<float>({1, 1}, {2.0f}),
                          Tensor::FromVector<float>({n}, std::vector<float>(xs.size(), 2.0f))}) {
    auto out = RunSingleNode({.op = "Pow", .inputs = {x, e}});
    ASSERT_TRUE(out.ok()) << out.message();
    EXPECT_EQ((*out)[0].shape(), e.rank() == 2 ? (std::vector<int64_t>{1, n}) : (std::vector<int64_t>{n}));
    for (int64_t i = 0; i < n; ++i) {
      const float want = xs[size_t(i)] * xs[size_t(i)];
      if (std::isnan(want)) EXPECT_TRUE(std::isnan((*out)[0].data<float>()[i]));
      else EXPECT_EQ((*out)[0].data<float>()[i], want) << xs[size_t(i)];
    }
  }
  auto cube = RunSingleNode({.op = "Pow", .inputs = {x, Tensor::FromVector<float>({1}, {3.0f})}});
  ASSERT_TRUE(cube.ok());
  EXPECT_EQ((*cube)[0].data<float>()[3], std::pow(1.1f, 3.0f));  // other exponents stay on powf
}

TEST(ElementwiseTest, SessionReusesOutputAcrossShapes) {
  SingleNode spec{.op = "Mul", .inputs = {Iota<float>({2, 8}, 0, 1), Iota<float>({8}, 1, 0)}};
  auto session = Session::CreateFromModel(testing::BuildSingleNodeModel(spec));
  ASSERT_TRUE(session.ok()) << session.message();
  // The graph input declares [2, 8]; run it twice and check the results stay independent.
  for (int rep = 0; rep < 3; ++rep) {
    Tensor a = Iota<float>({2, 8}, static_cast<float>(rep), 1), b = Iota<float>({8}, 2, 0);
    auto out = (*session)->Run({{"in0", a}, {"in1", b}});
    ASSERT_TRUE(out.ok()) << out.message();
    for (int64_t i = 0; i < 16; ++i) EXPECT_EQ((*out)[0].data<float>()[i], 2.0f * (rep + i));
  }
}

}  // namespace
}  // namespace nuphar
