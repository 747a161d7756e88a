// Packed fp32 GEMV (runtime/kernels/math/gemv_f32.h) on both paths against a double-precision
// reference: packing from [K, N] and [N, K], K and N around the 32-column block, accumulate. Then
// its two users: MatMul with a constant B and one row of A, and the LSTM/GRU/RNN ops with a
// constant R at batch 1, each against the same op with B or R fed as a graph input (the Eigen
// path).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "runtime/kernels/math/gemm_eigen.h"
#include "runtime/kernels/math/gemv_f32.h"
#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::RandomFloats;

class GemvF32Test : public ::testing::TestWithParam<GemmPath> {
 protected:
  void SetUp() override { SetGemmPathForTesting(GetParam()); }
  void TearDown() override { SetGemmPathForTesting(GemmPath::kAuto); }
};

TEST_P(GemvF32Test, MatchesDoubleReferenceForEveryEdge) {
  uint32_t seed = 1;
  for (int64_t K : {1, 2, 3, 17, 128})
    for (int64_t N : {1, 31, 32, 33, 100}) {
      const auto b_kn = RandomFloats(size_t(K * N), seed++);
      std::vector<float> b_nk(size_t(K * N));
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) b_nk[size_t(n * K + k)] = b_kn[size_t(k * N + n)];
      const auto a = RandomFloats(size_t(K), seed++);
      const auto y0 = RandomFloats(size_t(N) + 1, seed++);  // one guard element past N
      for (bool from_nk : {false, true})
        for (bool accumulate : {false, true}) {
          const PackedGemvF32 packed =
              from_nk ? PackedGemvF32::FromNK(b_nk.data(), K, N, K) : PackedGemvF32::FromKN(b_kn.data(), K, N, N);
          std::vector<float> y = y0;
          GemvF32Packed(a.data(), packed, y.data(), accumulate);
          for (int64_t n = 0; n < N; ++n) {
            double ref = accumulate ? y0[size_t(n)] : 0.0;
            for (int64_t k = 0; k < K; ++k) ref += double(a[size_t(k)]) * b_kn[size_t(k * N + n)];
            ASSERT_NEAR(y[size_t(n)], ref, 1e-5 * (1 + std::abs(ref))) << "K=" << K << " N=" << N << " n=" << n;
          }
          ASSERT_EQ(y[size_t(N)], y0[size_t(N)]) << "wrote past N, K=" << K << " N=" << N;
        }
    }
}

// Consecutive calls on the same packed weights sweep the blocks ascending, then descending
// (platform/alternating_sweep.h): both give the same bits, a partial last block included.
TEST_P(GemvF32Test, DescendingSweepGivesTheAscendingBits) {
  uint32_t seed = 60;
  for (int64_t K : {1, 17, 80})
    for (int64_t N : {5 * 32, 9 * 32 + 7}) {
      const auto b_kn = RandomFloats(size_t(K * N), seed++);
      const auto a = RandomFloats(size_t(K), seed++);
      const auto y0 = RandomFloats(size_t(N) + 1, seed++);
      const PackedGemvF32 packed = PackedGemvF32::FromKN(b_kn.data(), K, N, N);
      for (bool accumulate : {false, true}) {
        std::vector<float> ascending = y0, descending = y0;
        GemvF32Packed(a.data(), packed, ascending.data(), accumulate);
        GemvF32Packed(a.data(), packed, descending.data(), accumulate);
        ASSERT_EQ(0, std::memcmp(ascending.data(), descending.data(), ascending.size() * sizeof(float)))
            << "K=" << K << " N=" << N << " accumulate=" << accumulate;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Paths, GemvF32Test, ::testing::Values(GemmPath::kRef, GemmPath::kAvx2),
                         [](const auto& info) { return info.param == GemmPath::kRef ? "ref" : "avx2"; });

// The packed GEMM (AVX-512 tiers): every row count around its 6-row (block pairs) and 8-row (a
// lone block, or K > 128) tiles and their merged remainders, K and N around the 32-column block,
// against a double-precision reference;
// then any split into single blocks (the 8 x 32 tile) gives the bits of the whole product (6 x 64
// tiles), one row gives the bits of the same row in a larger M, and a
// bias gives the product's bits plus the bias, rounded once (MatMulAddBias's store).
TEST(GemmF32PackedTest, MatchesDoubleReferenceAndSplitsGiveTheSameBits) {
  if (!PackedGemmF32Available()) GTEST_SKIP() << "no packed GEMM on tier " << GemmPathName();
  uint32_t seed = 90;
  for (int64_t M : {1, 2, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 100})
    for (int64_t K : {1, 17, 80, 200})  // 200: past the block pairs' L1 budget, single blocks
      for (int64_t N : {1, 31, 33, 100, 160}) {
        const auto b_kn = RandomFloats(size_t(K * N), seed++);
        const auto a = RandomFloats(size_t(M * K), seed++);
        const PackedGemvF32 packed = PackedGemvF32::FromKN(b_kn.data(), K, N, N);
        const int64_t blocks = (N + 31) / 32;
        std::vector<float> whole(size_t(M * N) + 1, -7.0f);  // one guard element past the end
        GemmF32Packed(a.data(), M, K, packed, 0, blocks, nullptr, whole.data(), N);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double ref = 0;
            for (int64_t k = 0; k < K; ++k) ref += double(a[size_t(m * K + k)]) * b_kn[size_t(k * N + n)];
            ASSERT_NEAR(whole[size_t(m * N + n)], ref, 1e-5 * (1 + std::abs(ref))) << "M=" << M << " K=" << K << " N=" << N;
          }
        ASSERT_EQ(whole.back(), -7.0f) << "wrote past C, M=" << M << " K=" << K << " N=" << N;
        std::vector<float> split(whole.size(), -7.0f);
        for (int64_t blk = blocks; blk > 0; --blk) GemmF32Packed(a.data(), M, K, packed, blk - 1, blk, nullptr, split.data(), N);
        ASSERT_EQ(0, std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float))) << "M=" << M << " N=" << N;
        std::vector<float> last_row(static_cast<size_t>(N));
        GemmF32Packed(a.data() + (M - 1) * K, 1, K, packed, 0, blocks, nullptr, last_row.data(), N);
        ASSERT_EQ(0, std::memcmp(last_row.data(), whole.data() + (M - 1) * N, size_t(N) * sizeof(float))) << "M=" << M;
        // A bias is added to the finished sums: the bits of a separate Add after the product.
        const auto bias = RandomFloats(size_t(N), seed++);
        std::vector<float> biased(whole.size(), -7.0f);
        GemmF32Packed(a.data(), M, K, packed, 0, blocks, bias.data(), biased.data(), N);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            const float added = whole[size_t(m * N + n)] + bias[size_t(n)];
            ASSERT_EQ(0, std::memcmp(&biased[size_t(m * N + n)], &added, sizeof(float))) << "M=" << M << " N=" << N;
          }
        ASSERT_EQ(biased.back(), -7.0f) << "wrote past C with a bias, M=" << M << " N=" << N;
      }
}

// The AVX-512 tier's GEMV (two blocks at a time) gives the AVX2 GEMV's bits: same chains per
// column. kAuto runs the process tier's copy, which is the AVX-512 one on such a CPU.
TEST(GemvF32Avx512Test, BitIdenticalToAvx2) {
  if (std::string(GemmPathName()) != "avx512") GTEST_SKIP() << "the process tier is " << GemmPathName();
  uint32_t seed = 40;
  for (int64_t K : {1, 2, 3, 17, 80, 128})
    for (int64_t N : {1, 31, 32, 33, 64, 65, 96, 100, 512}) {
      const auto b_kn = RandomFloats(size_t(K * N), seed++);
      const auto a = RandomFloats(size_t(K), seed++);
      const auto y0 = RandomFloats(size_t(N) + 1, seed++);
      const PackedGemvF32 packed = PackedGemvF32::FromKN(b_kn.data(), K, N, N);
      for (bool accumulate : {false, true}) {
        std::vector<float> wide = y0, narrow = y0;
        GemvF32Packed(a.data(), packed, wide.data(), accumulate);
        SetGemmPathForTesting(GemmPath::kAvx2);
        GemvF32Packed(a.data(), packed, narrow.data(), accumulate);
        SetGemmPathForTesting(GemmPath::kAuto);
        ASSERT_EQ(0, std::memcmp(wide.data(), narrow.data(), wide.size() * sizeof(float)))
            << "K=" << K << " N=" << N << " accumulate=" << accumulate;
      }
    }
}

void ExpectClose(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], tol) << "element " << i;
}

TEST(GemvF32UsersTest, MatMulWithConstantBAndOneRowMatchesTheEigenPath) {
  for (const std::vector<int64_t>& a_shape : {std::vector<int64_t>{1, 70}, std::vector<int64_t>{70}}) {
    Tensor a = Tensor::FromVector<float>(a_shape, RandomFloats(70, 7));
    Tensor b = Tensor::FromVector<float>({70, 45}, RandomFloats(70 * 45, 8));
    auto packed = testing::RunSingleNode({.op = "MatMul", .inputs = {a, b}, .constant_inputs = {1}});
    auto eigen = testing::RunSingleNode({.op = "MatMul", .inputs = {a, b}});
    ASSERT_TRUE(packed.ok() && eigen.ok());
    ExpectClose((*packed)[0], (*eigen)[0], 1e-5);
  }
  // Several rows against the same constant B stay on the GEMM path and agree too.
  Tensor a3 = Tensor::FromVector<float>({3, 70}, RandomFloats(210, 9));
  Tensor b = Tensor::FromVector<float>({70, 45}, RandomFloats(70 * 45, 8));
  auto packed = testing::RunSingleNode({.op = "MatMul", .inputs = {a3, b}, .constant_inputs = {1}});
  auto eigen = testing::RunSingleNode({.op = "MatMul", .inputs = {a3, b}});
  ASSERT_TRUE(packed.ok() && eigen.ok());
  ExpectClose((*packed)[0], (*eigen)[0], 1e-5);
}

TEST(GemvF32UsersTest, RecurrentOpsWithConstantRAtBatchOneMatchTheEigenPath) {
  const int64_t S = 4, I = 5, H = 33;
  struct OpCase {
    const char* op;
    int gates;
    int linear_before_reset;
  };
  for (const OpCase& c : {OpCase{"LSTM", 4, 0}, OpCase{"GRU", 3, 1}, OpCase{"GRU", 3, 0}, OpCase{"RNN", 1, 0}})
    for (const char* direction : {"forward", "bidirectional"}) {
      const int64_t ND = std::string(direction) == "bidirectional" ? 2 : 1, GH = c.gates * H;
      Tensor X = Tensor::FromVector<float>({S, 1, I}, RandomFloats(size_t(S * I), 11));
      Tensor W = Tensor::FromVector<float>({ND, GH, I}, RandomFloats(size_t(ND * GH * I), 12));
      Tensor R = Tensor::FromVector<float>({ND, GH, H}, RandomFloats(size_t(ND * GH * H), 13));
      Tensor B = Tensor::FromVector<float>({ND, 2 * GH}, RandomFloats(size_t(ND * 2 * GH), 14));
      auto attrs = [&](onnx::NodeProto& n) {
        testing::SetAttr(n, "hidden_size", H);
        testing::SetAttr(n, "direction", std::string(direction));
        if (std::string(c.op) == "GRU") testing::SetAttr(n, "linear_before_reset", int64_t{c.linear_before_reset});
      };
      const int outputs = std::string(c.op) == "LSTM" ? 3 : 2;
      auto packed = testing::RunSingleNode(
          {.op = c.op, .inputs = {X, W, R, B}, .constant_inputs = {1, 2, 3}, .num_outputs = outputs, .attributes = attrs});
      auto eigen = testing::RunSingleNode(
          {.op = c.op, .inputs = {X, W, R, B}, .constant_inputs = {1, 3}, .num_outputs = outputs, .attributes = attrs});
      ASSERT_TRUE(packed.ok()) << packed.message();
      ASSERT_TRUE(eigen.ok()) << eigen.message();
      for (int o = 0; o < outputs; ++o) ExpectClose((*packed)[size_t(o)], (*eigen)[size_t(o)], 1e-5);
    }
}

}  // namespace
}  // namespace nuphar
