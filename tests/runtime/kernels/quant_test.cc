// quant kernels against plain references: MatMulInteger for every u8/s8 combination with
// per-tensor, per-row and per-column zero points, MatMulInteger16, QuantizeLinear rounding and
// saturation, per-axis DequantizeLinear, DynamicQuantizeLinear of an all-zero input, ConvInteger.
#include <gtest/gtest.h>

#include <random>

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
