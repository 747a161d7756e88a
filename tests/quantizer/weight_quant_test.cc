// Per-column weight quantization against a plain reference written straight from the spec
// formulas (nearbyintf, no tricks), on random, edge-case and tie-rounding weights.
#include "quantizer/weight_quant.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <random>

namespace nuphar::quant {
namespace {

struct Reference {
  std::vector<float> step, base, rowsum, q;
};

// Spec Q1 / §3.4, one float32 operation at a time.
Reference ReferenceQuantize(const std::vector<float>& w, int64_t k, int64_t n, const QuantizeConfig& cfg, bool sym) {
  Reference r;
  const float range = static_cast<float>(cfg.q_range());
  std::vector<float> fscale(n);
  r.step.resize(n);
  r.base.assign(n, 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    float lo = w[j], hi = w[j], amax = std::fabs(w[j]);
    for (int64_t i = 1; i < k; ++i) {
      lo = std::min(lo, w[i * n + j]);
      hi = std::max(hi, w[i * n + j]);
      amax = std::max(amax, std::fabs(w[i * n + j]));
    }
    if (sym) {
      fscale[j] = amax;
      r.step[j] = fscale[j] / range;
    } else {
      fscale[j] = (hi - lo) / (cfg.is_signed ? 2.0f : 1.0f);
      r.step[j] = fscale[j] / range;
      volatile float sum = hi + lo;  // keep the left-to-right float32 order explicit
      r.base[j] = cfg.is_signed ? (sum + r.step[j]) * 0.5f : lo;
    }
  }
  r.q.resize(w.size());
  r.rowsum.assign(n, 0.0f);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      volatile float norm = fscale[j] != 0.0f ? (w[i * n + j] - r.base[j]) / fscale[j] : 0.0f;
      volatile float scaled = norm * range;
      float q = std::nearbyintf(scaled);
      q = std::min(std::max(q, static_cast<float>(cfg.q_min())), static_cast<float>(cfg.q_max()));
      r.q[i * n + j] = q;
      r.rowsum[j] += q;
    }
  }
  return r;
}

void ExpectSameBits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << what;
}

void CheckAgainstReference(const std::vector<float>& w, int64_t k, int64_t n, const QuantizeConfig& cfg, bool sym) {
  auto got = QuantizeWeightPerColumn(w.data(), k, n, cfg, sym);
  ASSERT_TRUE(got.ok()) << got.message();
  const Reference ref = ReferenceQuantize(w, k, n, cfg, sym);
  ExpectSameBits(got->step, ref.step, "step");
  ExpectSameBits(got->base, ref.base, "base");
  ExpectSameBits(got->rowsum, ref.rowsum, "rowsum");
  for (int64_t i = 0; i < k * n; ++i) ASSERT_EQ(QuantizedValue(*got, cfg, i), ref.q[i]) << "element " << i;
}

const QuantizeConfig kS8{true, 0, 8}, kU8{false, 1, 8}, kS16r3{true, 3, 16}, kU16{false, 0, 16};

TEST(WeightQuant, RoundHalfEvenMatchesNearbyint) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  for (float x : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f, -128.5f, 4095.5f, -4096.5f, 0.49999997f,
                  1e-30f, -0.0f, 32767.5f}) {
    EXPECT_EQ(RoundHalfEvenSmall(x), std::nearbyintf(x)) << x;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-40000.0f, 40000.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    ASSERT_EQ(RoundHalfEvenSmall(x), std::nearbyintf(x)) << x;
  }
}

TEST(WeightQuant, RandomWeightsEveryConfig) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 0.7f);
  for (auto [k, n] : {std::pair<int64_t, int64_t>{1, 1}, {16, 8}, {33, 17}, {64, 256}}) {
    std::vector<float> w(k * n);
    for (auto& v : w) v = dist(rng);
    CheckAgainstReference(w, k, n, kS8, false);
    CheckAgainstReference(w, k, n, kU8, false);
    CheckAgainstReference(w, k, n, kS16r3, true);
    CheckAgainstReference(w, k, n, kS16r3, false);
    CheckAgainstReference(w, k, n, kU16, false);
  }
}

TEST(WeightQuant, EdgeColumns) {
  // Columns: all zero, constant, tiny, huge, exact ties (multiples of step/2).
  const int64_t k = 6, n = 5;
  std::vector<float> w(k * n);
  for (int64_t i = 0; i < k; ++i) {
    w[i * n + 0] = 0.0f;
    w[i * n + 1] = 0.75f;
    w[i * n + 2] = 1e-6f * static_cast<float>(i - 2);
    w[i * n + 3] = 3e4f * static_cast<float>(i * i) - 1e5f;
    w[i * n + 4] = 0.5f * static_cast<float>(i);  // ties at R = 127.5
  }
  CheckAgainstReference(w, k, n, kS8, false);
  CheckAgainstReference(w, k, n, kS16r3, true);
  auto got = QuantizeWeightPerColumn(w.data(), k, n, kS8, false);
  ASSERT_TRUE(got.ok());
  // A constant column is reproduced exactly: base = value, q = 0.
  EXPECT_EQ(got->base[1], 0.75f);
  EXPECT_EQ(got->step[1], 0.0f);
  EXPECT_EQ(QuantizedValue(*got, kS8, 1), 0.0);
  // The signed asymmetric range maps exactly onto [-128, 127].
  EXPECT_EQ(QuantizedValue(*got, kS8, 0 * n + 4), -128.0);
  EXPECT_EQ(QuantizedValue(*got, kS8, 5 * n + 4), 127.0);
}

TEST(WeightQuant, ErrorWithinHalfStep) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int64_t k = 16, n = 8;
  std::vector<float> w(k * n);
  for (auto& v : w) v = dist(rng);
  auto q = QuantizeWeightPerColumn(w.data(), k, n, kS8, false);
  ASSERT_TRUE(q.ok());
  const WeightError e = MeasureWeightError(w.data(), *q, kS8);
  float max_step = 0;
  for (float s : q->step) max_step = std::max(max_step, s);
  EXPECT_GT(e.max_abs_error, 0.0);
  EXPECT_LE(e.max_abs_error, max_step * 0.5 + 1e-6);
  EXPECT_GT(e.rel_l2_error, 0.0);
  EXPECT_LT(e.rel_l2_error, 0.01);
}

TEST(WeightQuant, NonFiniteIsRefused) {
  std::vector<float> w = {1.0f, NAN, 2.0f, 3.0f};
  EXPECT_FALSE(QuantizeWeightPerColumn(w.data(), 2, 2, kS8, false).ok());
  std::vector<float> huge = {3e38f, -3e38f};  // fmax - fmin overflows float32
  EXPECT_FALSE(QuantizeWeightPerColumn(huge.data(), 2, 1, kS8, false).ok());
}

}  // namespace
}  // namespace nuphar::quant
