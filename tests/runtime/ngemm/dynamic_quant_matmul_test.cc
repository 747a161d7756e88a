// The fused dynamic-quantized MatMul equals the unfused graph bit for bit. The reference below
// executes the quantizer's nodes one at a time on whole tensors, as a reference executor would
// (editor_quantizer.md §3.5-§3.7), and the comparison is on the float bit patterns.
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/runtime/ngemm/test_util.h"

namespace nuphar::ngemm {
namespace {

using testing::AvailablePaths;
using testing::PathGuard;
using Tensor = std::vector<float>;

// ---- one function per graph node (row vectors are [M] with keepdims, broadcast on the right) ----
Tensor ReduceMax(const Tensor& x, int64_t M, int64_t K) {
  Tensor r(M);
  for (int64_t m = 0; m < M; ++m) r[m] = *std::max_element(x.begin() + m * K, x.begin() + (m + 1) * K);
  return r;
}
Tensor ReduceMin(const Tensor& x, int64_t M, int64_t K) {
  Tensor r(M);
  for (int64_t m = 0; m < M; ++m) r[m] = *std::min_element(x.begin() + m * K, x.begin() + (m + 1) * K);
  return r;
}
Tensor Abs(const Tensor& x) {
  Tensor r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = std::fabs(x[i]);
  return r;
}
template <class F>
Tensor Binary(const Tensor& a, const Tensor& b, int64_t rows, int64_t cols, bool b_per_row, F f) {
  // a: [rows, cols]; b: per row ([rows, 1]) or per column ([cols]) or scalar (size 1).
  Tensor r(a.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const float bv = b.size() == 1 ? b[0] : (b_per_row ? b[i] : b[j]);
      r[i * cols + j] = f(a[i * cols + j], bv);
    }
  return r;
}
const auto kSub = [](float a, float b) { return a - b; };
const auto kMul = [](float a, float b) { return a * b; };
const auto kAdd = [](float a, float b) { return a + b; };
const auto kMax = [](float a, float b) { return std::max(a, b); };
Tensor Reciprocal(const Tensor& x) {
  Tensor r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = 1.0f / x[i];
  return r;
}
Tensor Floor(const Tensor& x) {
  Tensor r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = std::floor(x[i]);
  return r;
}
Tensor Clip(const Tensor& x, float lo, float hi) {
  Tensor r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = std::min(std::max(x[i], lo), hi);  // NaN propagates
  return r;
}
/// Cast<int> with the reference executor's rule for NaN (0).
std::vector<int32_t> CastToInt(const Tensor& x) {
  std::vector<int32_t> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = std::isnan(x[i]) ? 0 : static_cast<int32_t>(x[i]);
  return r;
}
Tensor CastToFloat(const std::vector<int32_t>& x) {
  Tensor r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = static_cast<float>(x[i]);
  return r;
}
std::vector<int32_t> MatMulInteger(const std::vector<int32_t>& a, const std::vector<int32_t>& b, int64_t M, int64_t K, int64_t N) {
  std::vector<int32_t> r(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t s = 0;
      for (int64_t k = 0; k < K; ++k) s += int64_t{a[m * K + k]} * b[k * N + n];
      r[m * N + n] = static_cast<int32_t>(s);
    }
  return r;
}

struct Model {
  DynQuantScheme scheme;
  int64_t K, N;
  std::vector<int32_t> wq;  // [K, N]
  Tensor step, base, rowsum, bias_add;  // bias_add: [N] (ld_add = 0) or [M, N] (ld_add = N)
  int64_t ld_add = 0;
  DynQuantConstants c;
};

/// The unfused graph, node by node.
Tensor RunGraph(const Model& g, const Tensor& X, int64_t M) {
  const int64_t K = g.K, N = g.N;
  const bool asymm = g.scheme == DynQuantScheme::kAsymm8;
  Tensor delta, bias_x, norm;
  if (asymm) {
    const Tensor rmax = ReduceMax(X, M, K);
    bias_x = ReduceMin(X, M, K);
    delta = Binary(rmax, bias_x, M, 1, true, kSub);
  } else {
    delta = ReduceMax(Abs(X), M, K);
  }
  const Tensor guarded = g.c.guard_zero_delta ? Binary(delta, {g.c.guard_value}, M, 1, true, kMax) : delta;
  const Tensor inv = Reciprocal(guarded);
  norm = asymm ? Binary(Binary(X, bias_x, M, K, true, kSub), inv, M, K, true, kMul) : Binary(X, inv, M, K, true, kMul);
  const Tensor scale_x = Binary(delta, {g.c.inv_range}, M, 1, true, kMul);
  const Tensor scaled = Binary(norm, {g.c.range}, M, K, true, kMul);
  const Tensor shifted = Binary(scaled, {g.c.half}, M, K, true, kAdd);
  const std::vector<int32_t> q_x = CastToInt(Clip(Floor(shifted), g.c.clip_min, g.c.clip_max));
  const std::vector<int32_t> q_y = MatMulInteger(q_x, g.wq, M, K, N);
  // Mul(w_step [N], scale_X [M,1]) broadcasts to [M, N].
  Tensor m0(M * N), o0, y;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) m0[m * N + n] = g.step[n] * scale_x[m];
  o0 = Binary(m0, CastToFloat(q_y), M * N, 1, true, kMul);
  if (!asymm) {
    y = o0;
  } else {
    std::vector<int32_t> q_sum(M, 0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) q_sum[m] += q_x[m * K + k];
    Tensor m1(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) m1[m * N + n] = g.step[n] * bias_x[m];
    const Tensor o1 = Binary(m1, g.rowsum, M, N, false, kMul);
    const Tensor m2 = Binary(scale_x, CastToFloat(q_sum), M, 1, true, kMul);
    Tensor o2(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) o2[m * N + n] = g.base[n] * m2[m];
    const Tensor m3 = Binary(bias_x, {g.c.k_as_float}, M, 1, true, kMul);
    Tensor o3(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) o3[m * N + n] = g.base[n] * m3[m];
    // Sum(o3, o2, o1, o0): left to right.
    y = Binary(Binary(Binary(o3, o2, M * N, 1, true, kAdd), o1, M * N, 1, true, kAdd), o0, M * N, 1, true, kAdd);
  }
  if (!g.bias_add.empty()) y = g.ld_add == 0 ? Binary(y, g.bias_add, M, N, false, kAdd) : Binary(y, g.bias_add, M * N, 1, true, kAdd);
  return y;
}

Model MakeModel(DynQuantScheme scheme, int64_t K, int64_t N, bool guard, bool bias, std::mt19937& rng) {
  Model g{scheme, K, N};
  const bool asymm = scheme == DynQuantScheme::kAsymm8;
  std::uniform_int_distribution<int> qd(asymm ? -128 : -4096, asymm ? 127 : 4095);
  std::uniform_real_distribution<float> fd(-1.0f, 1.0f);
  g.wq.resize(K * N);
  for (auto& v : g.wq) v = qd(rng);
  g.step.resize(N);
  g.base.resize(N);
  g.rowsum.assign(N, 0.0f);
  for (int64_t n = 0; n < N; ++n) {
    g.step[n] = std::fabs(fd(rng)) / (asymm ? 127.5f : 4095.5f);
    g.base[n] = asymm ? fd(rng) * 0.1f : 0.0f;
    int64_t s = 0;
    for (int64_t k = 0; k < K; ++k) s += g.wq[k * N + n];
    g.rowsum[n] = static_cast<float>(s);
  }
  if (bias) {
    g.bias_add.resize(N);
    for (auto& v : g.bias_add) v = fd(rng);
  }
  // Constants exactly as the quantizer emits them (Q1).
  g.c.range = asymm ? 128.0f : 4095.5f;
  g.c.inv_range = static_cast<float>(1.0 / (asymm ? 128.0 : 4095.5));
  g.c.clip_min = asymm ? 0.0f : -4096.0f;
  g.c.clip_max = asymm ? 127.0f : 4095.0f;
  g.c.k_as_float = static_cast<float>(K);
  g.c.guard_zero_delta = guard;
  return g;
}

/// X with random rows plus the hard ones: all zero, constant, one outlier, tiny range.
Tensor MakeInput(int64_t M, int64_t K, std::mt19937& rng) {
  std::uniform_real_distribution<float> fd(-3.0f, 3.0f);
  Tensor X(M * K);
  for (auto& v : X) v = fd(rng);
  for (int64_t m = 0; m < M; ++m) {
    float* row = X.data() + m * K;
    switch (m % 6) {
      case 1: std::fill(row, row + K, 0.0f); break;
      case 3: std::fill(row, row + K, -1.25f); break;
      case 4: row[K / 2] = 1000.0f; break;
      case 5:
        for (int64_t k = 0; k < K; ++k) row[k] = 1.0f + static_cast<float>(k % 3) * 1e-7f;
        break;
      default: break;
    }
  }
  return X;
}

void ExpectBitIdentical(const Tensor& want, const float* got, int64_t M, int64_t N, const std::string& what) {
  for (int64_t i = 0; i < M * N; ++i) {
    uint32_t a, b;
    std::memcpy(&a, &want[i], 4);
    std::memcpy(&b, &got[i], 4);
    if (a != b) {
      ADD_FAILURE() << what << " at (" << i / N << "," << i % N << "): graph " << want[i] << " fused " << got[i];
      return;
    }
  }
}

void RunFused(const Model& g, const Tensor& X, int64_t M, const std::string& what) {
  const bool asymm = g.scheme == DynQuantScheme::kAsymm8;
  testing::OwnedPacked packed;
  if (asymm) {
    std::vector<int8_t> w(g.wq.begin(), g.wq.end());
    packed = testing::PackOwned(w.data(), g.K, g.N, WeightType::kInt8);
  } else {
    std::vector<int16_t> w(g.wq.begin(), g.wq.end());
    packed = testing::PackOwned(w.data(), g.K, g.N, WeightType::kInt16);
  }
  DynQuantWeights w;
  w.packed = &packed.weights;
  w.step = g.step.data();
  if (asymm) {
    w.base = g.base.data();
    w.qparam_rowsum = g.rowsum.data();
  }
  const size_t bytes = DynQuantMatMulScratchBytes(g.scheme, M, g.K, g.N);
  std::unique_ptr<uint8_t, decltype(&std::free)> scratch(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), &std::free);
  testing::GuardBuffer<float> Y(static_cast<size_t>(M * g.N));
  ASSERT_TRUE(DynQuantMatMul(g.scheme, X.data(), M, g.K, g.K, w, g.c, scratch.get(), Y.data(), g.N,
                             g.bias_add.empty() ? nullptr : g.bias_add.data(), g.ld_add));
  ExpectBitIdentical(RunGraph(g, X, M), Y.data(), M, g.N, what);
}

class DynQuantTest : public ::testing::TestWithParam<NgemmPath> {
 protected:
  void SetUp() override {
    NGEMM_SKIP_IF_UNAVAILABLE(GetParam());
    guard_ = std::make_unique<PathGuard>(GetParam());
  }
  void TearDown() override { guard_.reset(); }
  std::unique_ptr<PathGuard> guard_;
};

TEST_P(DynQuantTest, Asymm8EqualsUnfusedGraph) {
  std::mt19937 rng(42);
  for (int64_t M : {1, 2, 6, 17})
    for (int64_t K : {1, 3, 8, 33, 100})
      for (int64_t N : {1, 9, 64, 100})
        for (bool guard : {false, true}) {
          const Model g = MakeModel(DynQuantScheme::kAsymm8, K, N, guard, N % 2 == 0, rng);
          RunFused(g, MakeInput(M, K, rng), M,
                   "asymm8 M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N) +
                       (guard ? " guard" : ""));
        }
}

TEST_P(DynQuantTest, Symm16EqualsUnfusedGraph) {
  std::mt19937 rng(43);
  for (int64_t M : {1, 2, 6, 17})
    for (int64_t K : {1, 3, 8, 33, 100})
      for (int64_t N : {1, 9, 64, 100})
        for (bool guard : {false, true}) {
          const Model g = MakeModel(DynQuantScheme::kSymm16, K, N, guard, N % 2 == 1, rng);
          RunFused(g, MakeInput(M, K, rng), M,
                   "symm16 M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N) +
                       (guard ? " guard" : ""));
        }
}

TEST_P(DynQuantTest, ConstantRowsGiveTheGraphsValues) {
  // delta = 0: inv = inf, norm = NaN, Q = 0; the output is the o1 + o3 terms only (o0 = o2 = 0).
  std::mt19937 rng(44);
  const Model g = MakeModel(DynQuantScheme::kAsymm8, 16, 24, false, false, rng);
  Tensor X(2 * 16, 2.0f);
  std::fill(X.begin() + 16, X.end(), 0.0f);
  RunFused(g, X, 2, "constant rows");
  const Tensor y = RunGraph(g, X, 2);
  EXPECT_EQ(y[24], 0.0f);  // the all-zero row gives exactly 0 (bias_X = 0, scale_X = 0)
}

TEST_P(DynQuantTest, LstmShapesWithFollowingAddOfInputProjection) {
  // The Scan body's Add(input projection row, Y): an [M, N] addend.
  std::mt19937 rng(45);
  for (int64_t H : {64, 128, 512}) {
    Model g = MakeModel(DynQuantScheme::kAsymm8, H, 4 * H, false, false, rng);
    const int64_t M = 3;
    g.ld_add = 4 * H;
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    g.bias_add.resize(M * 4 * H);
    for (auto& v : g.bias_add) v = d(rng);
    RunFused(g, MakeInput(M, H, rng), M, "lstm H=" + std::to_string(H));
  }
}

TEST(DynQuantArgs, RejectsInconsistentArguments) {
  std::mt19937 rng(46);
  const Model g = MakeModel(DynQuantScheme::kAsymm8, 8, 8, false, false, rng);
  std::vector<int8_t> wq(g.wq.begin(), g.wq.end());
  auto packed = testing::PackOwned(wq.data(), 8, 8, WeightType::kInt8);
  DynQuantWeights w;
  w.packed = &packed.weights;
  w.step = g.step.data();
  alignas(64) static uint8_t scratch[8192];
  Tensor X(8, 1.0f), Y(8);
  EXPECT_FALSE(DynQuantMatMul(DynQuantScheme::kAsymm8, X.data(), 1, 8, 8, w, g.c, scratch, Y.data(), 8));  // no base
  w.base = g.base.data();
  w.qparam_rowsum = g.rowsum.data();
  EXPECT_FALSE(DynQuantMatMul(DynQuantScheme::kSymm16, X.data(), 1, 8, 8, w, g.c, scratch, Y.data(), 8));  // int8 weights
  EXPECT_FALSE(DynQuantMatMul(DynQuantScheme::kAsymm8, X.data(), 1, 7, 8, w, g.c, scratch, Y.data(), 8));  // K
  EXPECT_TRUE(DynQuantMatMul(DynQuantScheme::kAsymm8, X.data(), 1, 8, 8, w, g.c, scratch, Y.data(), 8));
}

INSTANTIATE_TEST_SUITE_P(Paths, DynQuantTest, ::testing::ValuesIn(testing::AllPaths()),
                         [](const ::testing::TestParamInfo<NgemmPath>& info) { return testing::PathName(info.param); });

}  // namespace
}  // namespace nuphar::ngemm
