// nn kernels against plain references: the Eigen GEMM on both ISA paths, MatMul broadcasting and
// 1-D operands, Gemm's C broadcast, Einsum corners, Conv/ConvTranspose against direct loops,
// pooling indices, LayerNormalization statistics, and load-time refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/kernels/math/gemm_eigen.h"
#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::RunSingleNode;
using testing::SingleNode;
using testing::Values;
using Shape = std::vector<int64_t>;

using testing::RandomFloats;

int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Tensor RandomTensor(const Shape& shape, uint32_t seed) {
  return Tensor::FromVector<float>(shape, RandomFloats(static_cast<size_t>(Count(shape)), seed));
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

// ---------------------------------------------------------------- GEMM on both ISA paths

class GemmPathTest : public ::testing::TestWithParam<GemmPath> {
 protected:
  void SetUp() override { SetGemmPathForTesting(GetParam()); }
  void TearDown() override { SetGemmPathForTesting(GemmPath::kAuto); }
};

TEST_P(GemmPathTest, MatchesNaiveForEdgeSizesTransposesAndStrides) {
  for (int64_t M : {1, 2, 7, 33})
    for (int64_t N : {1, 5, 64})
      for (int64_t K : {1, 3, 65})
        for (int trans = 0; trans < 4; ++trans) {
          const bool ta = trans & 1, tb = trans & 2;
          const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
          const auto A = RandomFloats(static_cast<size_t>((ta ? K : M) * lda), 1);
          const auto B = RandomFloats(static_cast<size_t>((tb ? N : K) * ldb), 2);
          const float alpha = 0.5f, beta = trans == 3 ? 0.0f : -2.0f;
          std::vector<float> C = RandomFloats(static_cast<size_t>(M * ldc), 3), want = C;
          if (beta == 0.0f) std::fill(C.begin(), C.end(), std::numeric_limits<float>::quiet_NaN());  // must not be read
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
              double acc = 0;
              for (int64_t k = 0; k < K; ++k)
                acc += static_cast<double>(ta ? A[k * lda + m] : A[m * lda + k]) * (tb ? B[n * ldb + k] : B[k * ldb + n]);
              float& w = want[static_cast<size_t>(m * ldc + n)];
              w = static_cast<float>(alpha * acc + (beta == 0.0f ? 0.0 : beta * w));
            }
          GemmF32(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n)
              ASSERT_NEAR(C[m * ldc + n], want[m * ldc + n], 1e-4f) << M << "x" << N << "x" << K << " trans " << trans;
        }
}

INSTANTIATE_TEST_SUITE_P(Paths, GemmPathTest, ::testing::Values(GemmPath::kRef, GemmPath::kAuto));

// ---------------------------------------------------------------- MatMul

// numpy.matmul reference for 1-D operands and broadcast batches (rank <= 4).
std::vector<float> NaiveMatMul(const Tensor& a, const Tensor& b, Shape* out) {
  Shape as = a.shape(), bs = b.shape();
  const bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  while (as.size() < 4) as.insert(as.begin(), 1);
  while (bs.size() < 4) bs.insert(bs.begin(), 1);
  const int64_t M = as[2], K = as[3], N = bs[3];
  const int64_t B0 = std::max(as[0], bs[0]), B1 = std::max(as[1], bs[1]);
  std::vector<float> y;
  for (int64_t i = 0; i < B0; ++i)
    for (int64_t j = 0; j < B1; ++j)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) {
            const int64_t ai = (((as[0] == 1 ? 0 : i) * as[1] + (as[1] == 1 ? 0 : j)) * M + m) * K + k;
            const int64_t bi = (((bs[0] == 1 ? 0 : i) * bs[1] + (bs[1] == 1 ? 0 : j)) * K + k) * N + n;
            acc += static_cast<double>(a.data<float>()[ai]) * b.data<float>()[bi];
          }
          y.push_back(static_cast<float>(acc));
        }
  const size_t rank = std::max(a.shape().size(), b.shape().size());
  Shape full{B0, B1, M, N};
  out->assign(full.end() - static_cast<int64_t>(std::max<size_t>(rank, 2)), full.end());
  if (av) out->erase(out->end() - 2);
  if (bv) out->pop_back();
  return y;
}

TEST(MatMulTest, BroadcastBatchesAndOneDimensionalOperands) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3, 4}, {3, 4, 5}}, {{4}, {2, 4, 5}}, {{2, 3, 4}, {4}}, {{4}, {4}}, {{3, 4}, {2, 1, 4, 6}},
      {{1, 4}, {4, 300}},  // GEMV shape of a batch-1 recurrence
      {{6, 2, 4}, {4, 3}},  // shared B: one [12,4] x [4,3] product
  };
  for (const auto& [sa, sb] : cases) {
    SingleNode node{.op = "MatMul", .opset = 13, .inputs = {RandomTensor(sa, 5), RandomTensor(sb, 6)}};
    auto out = RunSingleNode(node);
    ASSERT_TRUE(out.ok()) << out.message();
    Shape want_shape;
    auto want = NaiveMatMul(node.inputs[0], node.inputs[1], &want_shape);
    EXPECT_EQ((*out)[0].shape(), want_shape) << ShapeToString(sa) << " x " << ShapeToString(sb);
    ExpectNear(Values<float>((*out)[0]), want);
  }
}

TEST(MatMulTest, Int64AndMismatchedInnerDims) {
  SingleNode node{.op = "MatMul", .opset = 13,
                  .inputs = {Tensor::FromVector<int64_t>({2, 2}, {1, 2, 3, 4}), Tensor::FromVector<int64_t>({2}, {5, 6})}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{17, 39}));
  node.inputs[1] = Tensor::FromVector<int64_t>({3}, {1, 2, 3});
  auto bad = RunSingleNode(node);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("inner dimensions differ"), std::string::npos) << bad.message();
}

// ---------------------------------------------------------------- Gemm

TEST(GemmTest, ColumnBiasBroadcastsAndOldOpsetNeedsExactC) {
  const Tensor a = RandomTensor({3, 2}, 7), b = RandomTensor({4, 2}, 8);  // transB: B is [N, K]
  const Tensor c = Tensor::FromVector<float>({3, 1}, {1, 2, 3});
  SingleNode node{.op = "Gemm", .opset = 13, .inputs = {a, b, c}, .attributes = [](onnx::NodeProto& n) {
    testing::SetAttr(n, "transB", int64_t{1});
    testing::SetAttr(n, "alpha", 2.0f);
    testing::SetAttr(n, "beta", 0.5f);
  }};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  std::vector<float> want;
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 4; ++n) {
      float acc = 0;
      for (int k = 0; k < 2; ++k) acc += a.data<float>()[m * 2 + k] * b.data<float>()[n * 2 + k];
      want.push_back(2 * acc + 0.5f * c.data<float>()[m]);
    }
  ExpectNear(Values<float>((*out)[0]), want);
  node.opset = 6;  // broadcast=0 (default) before opset 7: C must be exactly [M, N]
  auto bad = RunSingleNode(node);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("does not broadcast"), std::string::npos) << bad.message();
}

// ---------------------------------------------------------------- Einsum

TEST(EinsumTest, DiagonalImplicitOutputAndEllipsisBroadcast) {
  const Tensor sq = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  auto run = [](const std::string& eq, std::vector<Tensor> in) {
    SingleNode node{.op = "Einsum", .opset = 12, .inputs = std::move(in),
                    .attributes = [eq](onnx::NodeProto& n) { testing::SetAttr(n, "equation", eq); }};
    return RunSingleNode(node);
  };
  auto diag = run("ii->i", {sq});
  ASSERT_TRUE(diag.ok()) << diag.message();
  EXPECT_EQ(Values<float>((*diag)[0]), (std::vector<float>{1, 4}));
  auto trace = run("ii", {sq});  // implicit: repeated label summed -> scalar
  ASSERT_TRUE(trace.ok()) << trace.message();
  EXPECT_EQ((*trace)[0].rank(), 0);
  EXPECT_EQ(Values<float>((*trace)[0]), (std::vector<float>{5}));
  auto transpose = run("ba", {sq});  // implicit output is alphabetical: a transpose
  ASSERT_TRUE(transpose.ok()) << transpose.message();
  EXPECT_EQ(Values<float>((*transpose)[0]), (std::vector<float>{1, 3, 2, 4}));
  const Tensor a = RandomTensor({2, 1, 3, 4}, 9), b = RandomTensor({3, 4, 5}, 10);
  auto batched = run("...ij,...jk->...ik", {a, b});
  ASSERT_TRUE(batched.ok()) << batched.message();
  Shape want_shape;
  auto want = NaiveMatMul(a, b, &want_shape);
  EXPECT_EQ((*batched)[0].shape(), want_shape);
  ExpectNear(Values<float>((*batched)[0]), want);
}

// ---------------------------------------------------------------- Conv / ConvTranspose

struct ConvCase {
  Shape x, w;
  Shape strides, dilations, pads;
  int64_t group;
};

// Direct convolution over 1-3 spatial dims (dims padded to 3 with size 1).
std::vector<float> NaiveConv(const Tensor& x, const Tensor& w, const ConvCase& c, Shape* out_shape) {
  const size_t r = c.x.size() - 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[3] = {0, 0, 0}, o[3] = {1, 1, 1};
  *out_shape = {c.x[0], c.w[0]};
  for (size_t i = 0; i < r; ++i) {
    in[i] = c.x[i + 2], k[i] = c.w[i + 2], s[i] = c.strides[i], d[i] = c.dilations[i], p[i] = c.pads[i];
    o[i] = (in[i] + c.pads[i] + c.pads[i + r] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
    out_shape->push_back(o[i]);
  }
  const int64_t C = c.x[1], M = c.w[0], Cg = C / c.group, Mg = M / c.group;
  std::vector<float> y;
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o0 = 0; o0 < o[0]; ++o0)
        for (int64_t o1 = 0; o1 < o[1]; ++o1)
          for (int64_t o2 = 0; o2 < o[2]; ++o2) {
            double acc = 0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - p[0] + k0 * d[0], i1 = o1 * s[1] - p[1] + k1 * d[1],
                                  i2 = o2 * s[2] - p[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const int64_t cx = (m / Mg) * Cg + ci;
                    acc += static_cast<double>(x.data<float>()[(((n * C + cx) * in[0] + i0) * in[1] + i1) * in[2] + i2]) *
                           w.data<float>()[(((m * Cg + ci) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                  }
            y.push_back(static_cast<float>(acc));
          }
  return y;
}

TEST(ConvTest, GroupsDilationsStridesAndAsymmetricPadsMatchDirectLoops) {
  const std::vector<ConvCase> cases = {
      {{2, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {2, 1}, {1, 0, 2, 1}, 2},
      {{1, 3, 10}, {4, 3, 3}, {3}, {1}, {2, 1}, 1},
      {{1, 2, 4, 5, 3}, {2, 2, 2, 3, 1}, {1, 2, 1}, {1, 1, 2}, {0, 1, 0, 1, 0, 0}, 1},
      {{1, 8, 5, 5}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 8},  // depthwise
      {{1, 3, 4, 4}, {5, 3, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},  // 1x1: no im2col
  };
  for (const auto& c : cases) {
    const Tensor x = RandomTensor(c.x, 11), w = RandomTensor(c.w, 12);
    SingleNode node{.op = "Conv", .opset = 11, .inputs = {x, w}, .constant_inputs = {1},
                    .attributes = [&c](onnx::NodeProto& n) {
                      testing::SetAttr(n, "strides", c.strides);
                      testing::SetAttr(n, "dilations", c.dilations);
                      testing::SetAttr(n, "pads", c.pads);
                      testing::SetAttr(n, "group", c.group);
                    }};
    auto out = RunSingleNode(node);
    ASSERT_TRUE(out.ok()) << out.message();
    Shape want_shape;
    auto want = NaiveConv(x, w, c, &want_shape);
    EXPECT_EQ((*out)[0].shape(), want_shape);
    ExpectNear(Values<float>((*out)[0]), want);
  }
}

TEST(ConvTransposeTest, GroupsStridesAndOutputPaddingMatchScatterReference) {
  const Tensor x = RandomTensor({1, 4, 3, 2}, 13), w = RandomTensor({4, 3, 3, 2}, 14);  // group 2: M = 6
  SingleNode node{.op = "ConvTranspose", .opset = 11, .inputs = {x, w}, .attributes = [](onnx::NodeProto& n) {
    testing::SetAttr(n, "group", int64_t{2});
    testing::SetAttr(n, "strides", Shape{2, 3});
    testing::SetAttr(n, "pads", Shape{1, 0, 0, 1});
    testing::SetAttr(n, "output_padding", Shape{1, 0});
  }};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  // out = s*(in-1) + op + k - pads: H = 2*2+1+3-1 = 7, W = 3*1+0+2-1 = 4
  const int64_t H = 7, W = 4;
  ASSERT_EQ((*out)[0].shape(), (Shape{1, 6, H, W}));
  std::vector<float> want(static_cast<size_t>(6 * H * W), 0.0f);
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t m = 0; m < 3; ++m)
      for (int64_t ih = 0; ih < 3; ++ih)
        for (int64_t iw = 0; iw < 2; ++iw)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 2; ++kw) {
              const int64_t oh = ih * 2 - 1 + kh, ow = iw * 3 - 0 + kw, om = (c / 2) * 3 + m;
              if (oh < 0 || oh >= H || ow < 0 || ow >= W) continue;
              want[static_cast<size_t>((om * H + oh) * W + ow)] +=
                  x.data<float>()[(c * 3 + ih) * 2 + iw] * w.data<float>()[((c * 3 + m) * 3 + kh) * 2 + kw];
            }
  ExpectNear(Values<float>((*out)[0]), want);
}

TEST(ConvTransposeTest, OneByOneKernelAccumulatesOntoBias) {
  const Tensor x = RandomTensor({1, 2, 2, 3}, 16), w = RandomTensor({2, 3, 1, 1}, 17);
  const Tensor b = Tensor::FromVector<float>({3}, {1, -2, 0.5f});
  SingleNode node{.op = "ConvTranspose", .opset = 11, .inputs = {x, w, b}, .constant_inputs = {1, 2}};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ((*out)[0].shape(), (Shape{1, 3, 2, 3}));
  std::vector<float> want;
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < 6; ++i)
      want.push_back(b.data<float>()[m] + x.data<float>()[i] * w.data<float>()[m] + x.data<float>()[6 + i] * w.data<float>()[3 + m]);
  ExpectNear(Values<float>((*out)[0]), want);
}

// ---------------------------------------------------------------- Pooling and normalization

TEST(PoolTest, MaxPoolColumnMajorIndicesAndAveragePoolCeilWithPadCount) {
  const Tensor x = Tensor::FromVector<float>({1, 1, 2, 3}, {1, 2, 9, 8, 3, 4});
  SingleNode max{.op = "MaxPool", .opset = 12, .inputs = {x}, .num_outputs = 2, .attributes = [](onnx::NodeProto& n) {
    testing::SetAttr(n, "kernel_shape", Shape{2, 2});
    testing::SetAttr(n, "storage_order", int64_t{1});
  }};
  auto out = RunSingleNode(max);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{8, 9}));
  // 8 is at (h=1, w=0): column-major index h + w*H = 1; 9 at (0, 2): 4 (row-major would be 2).
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{1, 4}));

  const Tensor y = Tensor::FromVector<float>({1, 1, 1, 3}, {1, 2, 3});
  SingleNode avg{.op = "AveragePool", .opset = 11, .inputs = {y}, .attributes = [](onnx::NodeProto& n) {
    testing::SetAttr(n, "kernel_shape", Shape{1, 2});
    testing::SetAttr(n, "strides", Shape{1, 2});
    testing::SetAttr(n, "pads", Shape{0, 1, 0, 0});
    testing::SetAttr(n, "ceil_mode", int64_t{1});
    testing::SetAttr(n, "count_include_pad", int64_t{1});
  }};
  auto pooled = RunSingleNode(avg);
  ASSERT_TRUE(pooled.ok()) << pooled.message();
  // Windows over [pad,1,2,3]: {pad,1} -> 0.5 (pad counted), {2,3} -> 2.5.
  EXPECT_EQ(Values<float>((*pooled)[0]), (std::vector<float>{0.5f, 2.5f}));
}

TEST(NormTest, LayerNormalizationWritesMeanAndInvStdDev) {
  const Tensor x = Tensor::FromVector<float>({2, 2}, {1, 3, -2, 2});
  const Tensor scale = Tensor::FromVector<float>({2}, {1, 2});
  SingleNode node{.op = "LayerNormalization", .opset = 17, .inputs = {x, scale}, .num_outputs = 3};
  auto out = RunSingleNode(node);
  ASSERT_TRUE(out.ok()) << out.message();
  const float inv0 = 1.0f / std::sqrt(1.0f + 1e-5f), inv1 = 1.0f / std::sqrt(4.0f + 1e-5f);
  ExpectNear(Values<float>((*out)[0]), {-inv0, 2 * inv0, -2 * inv1, 4 * inv1});
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 1}));
  ExpectNear(Values<float>((*out)[1]), {2, 0});
  ExpectNear(Values<float>((*out)[2]), {inv0, inv1});
}

TEST(NormTest, BatchNormalizationRefusesTrainingOutputsBeforeOpset14) {
  const Tensor x = RandomTensor({1, 2, 2}, 15), p = Tensor::FromVector<float>({2}, {1, 1});
  SingleNode node{.op = "BatchNormalization", .opset = 9, .inputs = {x, p, p, p, p}, .num_outputs = 3};
  auto out = RunSingleNode(node);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("node_under_test"), std::string::npos) << out.message();
  EXPECT_NE(out.message().find("training"), std::string::npos) << out.message();
}

}  // namespace
}  // namespace nuphar
