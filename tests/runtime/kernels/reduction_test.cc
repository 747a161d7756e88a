// Reduction kernels against plain references: every axis subset (also negative axes), both
// keepdims, the opset-13 axes input with noop_with_empty_axes, empty inputs, LogSumExp
// overflow, Softmax's opset-11 2-D coercion vs opset-13 single axis, Arg*/TopK tie rules and
// CumSum's exclusive/reverse.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::RunSingleNode;
using testing::SetAttr;
using testing::SingleNode;
using testing::Values;
using Shape = std::vector<int64_t>;

Tensor Sample234() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>((i * 7) % 11) - 4.5f;
  return Tensor::FromVector<float>({2, 3, 4}, v);
}

// Naive reduction of a [2,3,4] tensor over the axes in `mask` (bit d = axis d).
std::vector<float> NaiveReduce(const Tensor& x, unsigned mask, bool is_max) {
  const int64_t d0 = x.dim(0), d1 = x.dim(1), d2 = x.dim(2);
  const int64_t o0 = mask & 1 ? 1 : d0, o1 = mask & 2 ? 1 : d1, o2 = mask & 4 ? 1 : d2;
  std::vector<float> out(static_cast<size_t>(o0 * o1 * o2), is_max ? -INFINITY : 0.0f);
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j)
      for (int64_t k = 0; k < d2; ++k) {
        const int64_t o = ((mask & 1 ? 0 : i) * o1 + (mask & 2 ? 0 : j)) * o2 + (mask & 4 ? 0 : k);
        const float v = x.data<float>()[(i * d1 + j) * d2 + k];
        out[o] = is_max ? std::max(out[o], v) : out[o] + v;
      }
  return out;
}

TEST(ReductionTest, EveryAxisSubsetMatchesNaive) {
  const Tensor x = Sample234();
  for (unsigned mask = 1; mask < 8; ++mask) {
    std::vector<int64_t> axes;
    for (int d = 0; d < 3; ++d)
      if (mask & (1u << d)) axes.push_back(d == 2 ? -1 : d);  // also exercises a negative axis
    for (bool keepdims : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "mask " << mask << " keepdims " << keepdims);
      Shape expected_shape;
      for (int d = 0; d < 3; ++d)
        if (!(mask & (1u << d))) expected_shape.push_back(x.dim(d));
        else if (keepdims) expected_shape.push_back(1);
      auto max = RunSingleNode({.op = "ReduceMax", .opset = 13, .inputs = {x}, .attributes = [&](onnx::NodeProto& n) {
                                  SetAttr(n, "axes", axes);
                                  SetAttr(n, "keepdims", int64_t{keepdims});
                                }});
      ASSERT_TRUE(max.ok()) << max.message();
      EXPECT_EQ((*max)[0].shape(), expected_shape);
      EXPECT_EQ(Values<float>((*max)[0]), NaiveReduce(x, mask, true));
      Tensor axes_t = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
      auto sum = RunSingleNode({.op = "ReduceSum", .opset = 13, .inputs = {x, axes_t}, .attributes = [&](onnx::NodeProto& n) {
                                  SetAttr(n, "keepdims", int64_t{keepdims});
                                }});
      ASSERT_TRUE(sum.ok()) << sum.message();
      EXPECT_EQ((*sum)[0].shape(), expected_shape);
      const auto ref = NaiveReduce(x, mask, false);
      const auto got = Values<float>((*sum)[0]);
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5);
    }
  }
}

TEST(ReductionTest, EmptyAxesReduceAllOrPassThroughWithNoop) {
  const Tensor x = Sample234();
  auto all = RunSingleNode({.op = "ReduceSum", .opset = 13, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "keepdims", int64_t{0});
                            }});
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ((*all)[0].shape(), Shape{});
  EXPECT_NEAR((*all)[0].data<float>()[0], NaiveReduce(x, 7, false)[0], 1e-4);
  Tensor no_axes = Tensor::FromVector<int64_t>({0}, {});
  auto noop = RunSingleNode({.op = "ReduceSum", .opset = 13, .inputs = {x, no_axes}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "noop_with_empty_axes", int64_t{1});
                             }});
  ASSERT_TRUE(noop.ok()) << noop.message();
  EXPECT_EQ((*noop)[0].shape(), x.shape());
  EXPECT_EQ(Values<float>((*noop)[0]), Values<float>(x));
}

TEST(ReductionTest, DuplicateAxisIsAnError) {
  auto out = RunSingleNode({.op = "ReduceMin", .opset = 13, .inputs = {Sample234()}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "axes", std::vector<int64_t>{1, -2});
                            }});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("twice"), std::string::npos) << out.message();
}

TEST(ReductionTest, ReducingAnEmptyAxisGivesTheIdentity) {
  Tensor x = Tensor::FromVector<float>({0, 3}, {});
  auto sum = RunSingleNode({.op = "ReduceSum", .opset = 11, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "axes", std::vector<int64_t>{0});
                              SetAttr(n, "keepdims", int64_t{0});
                            }});
  ASSERT_TRUE(sum.ok()) << sum.message();
  EXPECT_EQ(Values<float>((*sum)[0]), (std::vector<float>{0, 0, 0}));
  auto prod = RunSingleNode({.op = "ReduceProd", .opset = 11, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "axes", std::vector<int64_t>{0});
                             }});
  ASSERT_TRUE(prod.ok()) << prod.message();
  EXPECT_EQ((*prod)[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(Values<float>((*prod)[0]), (std::vector<float>{1, 1, 1}));
}

TEST(ReductionTest, LogSumExpDoesNotOverflow) {
  Tensor x = Tensor::FromVector<float>({2, 2}, {1000, 1000, -1000, -1001});
  auto out = RunSingleNode({.op = "ReduceLogSumExp", .opset = 13, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "axes", std::vector<int64_t>{1});
                            }});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_NEAR((*out)[0].data<float>()[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_NEAR((*out)[0].data<float>()[1], -1000 + std::log1p(std::exp(-1.0)), 1e-3);
}

// Softmax over `n` values at stride `stride`.
std::vector<float> NaiveSoftmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner) {
  std::vector<float> y(static_cast<size_t>(x.size()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t r = 0; r < n; ++r) sum += std::exp(static_cast<double>(x.data<float>()[(o * n + r) * inner + i]));
      for (int64_t r = 0; r < n; ++r) {
        const int64_t at = (o * n + r) * inner + i;
        y[at] = static_cast<float>(std::exp(static_cast<double>(x.data<float>()[at])) / sum);
      }
    }
  return y;
}

TEST(ReductionTest, SoftmaxCoercesTo2DBeforeOpset13AndUsesOneAxisAfter) {
  const Tensor x = Sample234();
  auto attrs = [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{1}); };
  auto old = RunSingleNode({.op = "Softmax", .opset = 11, .inputs = {x}, .attributes = attrs});
  auto now = RunSingleNode({.op = "Softmax", .opset = 13, .inputs = {x}, .attributes = attrs});
  ASSERT_TRUE(old.ok() && now.ok());
  const auto ref_old = NaiveSoftmax(x, 2, 12, 1), ref_now = NaiveSoftmax(x, 2, 3, 4);
  for (size_t i = 0; i < ref_old.size(); ++i) {
    EXPECT_NEAR((*old)[0].data<float>()[i], ref_old[i], 1e-6) << i;
    EXPECT_NEAR((*now)[0].data<float>()[i], ref_now[i], 1e-6) << i;
  }
  auto log_now = RunSingleNode({.op = "LogSoftmax", .opset = 13, .inputs = {x}, .attributes = attrs});
  ASSERT_TRUE(log_now.ok()) << log_now.message();
  for (size_t i = 0; i < ref_now.size(); ++i) EXPECT_NEAR((*log_now)[0].data<float>()[i], std::log(ref_now[i]), 1e-5);
}

TEST(ReductionTest, HardmaxPicksTheFirstMaximum) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 3, 3, -1, -2, -1});
  auto out = RunSingleNode({.op = "Hardmax", .opset = 13, .inputs = {x}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 0, 1, 0, 0}));
}

TEST(ReductionTest, ArgMaxTiesGoFirstOrLastPerAttribute) {
  Tensor x = Tensor::FromVector<int32_t>({2, 3}, {5, 1, 5, 2, 2, 0});
  auto first = RunSingleNode({.op = "ArgMax", .opset = 13, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                                SetAttr(n, "axis", int64_t{-1});
                                SetAttr(n, "keepdims", int64_t{0});
                              }});
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(Values<int64_t>((*first)[0]), (std::vector<int64_t>{0, 0}));
  auto last = RunSingleNode({.op = "ArgMax", .opset = 13, .inputs = {x}, .attributes = [](onnx::NodeProto& n) {
                               SetAttr(n, "axis", int64_t{1});
                               SetAttr(n, "select_last_index", int64_t{1});
                             }});
  ASSERT_TRUE(last.ok()) << last.message();
  EXPECT_EQ((*last)[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(Values<int64_t>((*last)[0]), (std::vector<int64_t>{2, 1}));
  auto argmin = RunSingleNode({.op = "ArgMin", .opset = 13, .inputs = {x}});
  ASSERT_TRUE(argmin.ok()) << argmin.message();
  EXPECT_EQ(Values<int64_t>((*argmin)[0]), (std::vector<int64_t>{1, 0, 1}));
}

TEST(ReductionTest, TopKOrdersTiesByLowerIndex) {
  Tensor x = Tensor::FromVector<float>({2, 4}, {3, 1, 3, 2, 0, 0, 1, 0});
  Tensor k = Tensor::FromVector<int64_t>({1}, {3});
  auto largest = RunSingleNode({.op = "TopK", .opset = 11, .inputs = {x, k}, .num_outputs = 2});
  ASSERT_TRUE(largest.ok()) << largest.message();
  EXPECT_EQ(Values<float>((*largest)[0]), (std::vector<float>{3, 3, 2, 1, 0, 0}));
  EXPECT_EQ(Values<int64_t>((*largest)[1]), (std::vector<int64_t>{0, 2, 3, 2, 0, 1}));
  auto k_above_dim = RunSingleNode({.op = "TopK", .opset = 11, .inputs = {x, k}, .num_outputs = 2,
                                 .attributes = [](onnx::NodeProto& n) {
                                   SetAttr(n, "largest", int64_t{0});
                                   SetAttr(n, "axis", int64_t{0});
                                 }});
  EXPECT_FALSE(k_above_dim.ok());  // k = 3 > dim 0 = 2
  auto smallest = RunSingleNode({.op = "TopK", .opset = 11, .inputs = {x, Tensor::FromVector<int64_t>({1}, {2})},
                                .num_outputs = 2, .attributes = [](onnx::NodeProto& n) {
                                  SetAttr(n, "largest", int64_t{0});
                                  SetAttr(n, "axis", int64_t{0});
                                }});
  ASSERT_TRUE(smallest.ok()) << smallest.message();
  EXPECT_EQ(Values<float>((*smallest)[0]), (std::vector<float>{0, 0, 1, 0, 3, 1, 3, 2}));
  EXPECT_EQ(Values<int64_t>((*smallest)[1]), (std::vector<int64_t>{1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(ReductionTest, CumSumExclusiveReverseAlongNegativeAxis) {
  Tensor x = Tensor::FromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axis = Tensor::Scalar<int64_t>(-1);
  auto out = RunSingleNode({.op = "CumSum", .opset = 14, .inputs = {x, axis}, .attributes = [](onnx::NodeProto& n) {
                              SetAttr(n, "exclusive", int64_t{1});
                              SetAttr(n, "reverse", int64_t{1});
                            }});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{5, 3, 0, 11, 6, 0}));
  auto axis0 = RunSingleNode({.op = "CumSum", .opset = 14, .inputs = {x, Tensor::Scalar<int32_t>(0)}});
  ASSERT_TRUE(axis0.ok()) << axis0.message();
  EXPECT_EQ(Values<int32_t>((*axis0)[0]), (std::vector<int32_t>{1, 2, 3, 5, 7, 9}));
}

}  // namespace
}  // namespace nuphar
