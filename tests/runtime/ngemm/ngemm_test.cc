// NGEMM exactness: every product equals the plain integer triple loop, on the reference and the
// AVX2 path, for edge sizes, zero points, operand types, tiles and loop orders (STYLE R15).
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernels/ngemm/ngemm.h"
#include "tests/runtime/ngemm/test_util.h"

namespace nuphar::ngemm {
namespace {

using testing::AvailablePaths;
using testing::FillRandom;
using testing::GuardBuffer;
using testing::PackOwned;
using testing::PathGuard;
using testing::ReferenceProduct;

const int64_t kEdgeSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};

struct Case {
  int64_t M, K, N;
  ActivationType a_type = ActivationType::kUint8;
  WeightType b_type = WeightType::kInt8;
  int a_lo = 0, a_hi = 255, b_lo = -128, b_hi = 127;
  bool a_within_7bit = false;
  bool b_has_extreme = false;  // B[0,0] = -128 so the weights are never all 7-bit
  std::vector<int32_t> za, zb;  // empty: no zero point; 1 value: scalar; else per row/column
  NgemmTiles tiles;
};

/// Runs one case on the current path and compares with the reference; returns the mode used.
NgemmMode RunCase(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  GuardBuffer<uint8_t> A(static_cast<size_t>(c.M * c.K));
  FillRandom(A.data(), A.size(), c.a_lo, c.a_hi, rng);
  std::vector<uint8_t> B(static_cast<size_t>(c.K * c.N));
  FillRandom(B.data(), B.size(), c.b_lo, c.b_hi, rng);  // bit pattern; typed below
  if (c.b_has_extreme) B[0] = 0x80;
  GuardBuffer<int32_t> C(static_cast<size_t>(c.M * c.N));
  std::fill(C.data(), C.data() + C.size(), 0x5a5a5a5a);

  NgemmParams p;
  p.a_type = c.a_type;
  p.a_within_7bit = c.a_within_7bit;
  p.tiles = c.tiles;
  if (!c.za.empty()) {
    p.a_zero_point = c.za.data();
    p.a_zero_point_per_row = c.za.size() > 1;
  }
  if (!c.zb.empty()) {
    p.b_zero_point = c.zb.data();
    p.b_zero_point_per_column = c.zb.size() > 1;
  }
  testing::OwnedPacked packed;
  if (c.b_type == WeightType::kUint8) {
    packed = PackOwned(B.data(), c.K, c.N, c.b_type);
  } else {
    packed = PackOwned(reinterpret_cast<const int8_t*>(B.data()), c.K, c.N, c.b_type);
  }
  NgemmU8S8(A.data(), c.M, c.K, c.K, packed.weights, C.data(), c.N, p);

  std::vector<int32_t> expected;
  const auto* a_s8 = reinterpret_cast<const int8_t*>(A.data());
  const auto* b_s8 = reinterpret_cast<const int8_t*>(B.data());
  if (c.a_type == ActivationType::kUint8) {
    expected = c.b_type == WeightType::kUint8 ? ReferenceProduct(A.data(), B.data(), c.M, c.K, c.N, c.za, c.zb)
                                              : ReferenceProduct(A.data(), b_s8, c.M, c.K, c.N, c.za, c.zb);
  } else {
    expected = c.b_type == WeightType::kUint8 ? ReferenceProduct(a_s8, B.data(), c.M, c.K, c.N, c.za, c.zb)
                                              : ReferenceProduct(a_s8, b_s8, c.M, c.K, c.N, c.za, c.zb);
  }
  for (int64_t i = 0; i < c.M * c.N; ++i) {
    if (C[i] != expected[i]) {
      ADD_FAILURE() << "path " << GetNgemmDispatch().name << " M=" << c.M << " K=" << c.K << " N=" << c.N
                    << " at (" << i / c.N << "," << i % c.N << "): got " << C[i] << " want " << expected[i]
                    << " mode " << ModeName(ChooseNgemmMode(packed.weights, p)) << " tiles " << c.tiles.m << "/"
                    << c.tiles.n << "/" << c.tiles.k << " " << PermuteName(c.tiles.permute);
      break;
    }
  }
  return ChooseNgemmMode(packed.weights, p);
}

class NgemmPathTest : public ::testing::TestWithParam<NgemmPath> {
 protected:
  void SetUp() override {
    NGEMM_SKIP_IF_UNAVAILABLE(GetParam());
    guard_ = std::make_unique<PathGuard>(GetParam());
  }
  void TearDown() override { guard_.reset(); }
  std::unique_ptr<PathGuard> guard_;
};

TEST_P(NgemmPathTest, EdgeSizesFullRangeTakeExactPath) {
  uint32_t seed = 1;
  for (int64_t M : kEdgeSizes)
    for (int64_t K : {1, 3, 4, 5, 31, 32, 33, 65})
      for (int64_t N : {1, 8, 31, 33, 65}) {
        Case c{M, K, N};
        c.b_has_extreme = true;
        EXPECT_EQ(RunCase(c, seed++), NgemmMode::kU8S8Exact);
      }
}

TEST_P(NgemmPathTest, EdgeSizesSevenBitActivationsTakeFastPath) {
  uint32_t seed = 100;
  for (int64_t M : kEdgeSizes)
    for (int64_t K : {2, 4, 7, 32, 63, 64})
      for (int64_t N : {7, 16, 32, 64, 65}) {
        Case c{M, K, N};
        c.a_hi = 127;
        c.a_within_7bit = true;
        EXPECT_EQ(RunCase(c, seed++), NgemmMode::kU8S8Fast);
      }
}

TEST_P(NgemmPathTest, SevenBitWeightsTakeFastPathWithFullRangeActivations) {
  uint32_t seed = 200;
  for (int64_t M : {1, 2, 5, 17, 33})
    for (int64_t K : {3, 32, 65}) {
      Case c{M, K, 47};
      c.b_lo = -64;
      c.b_hi = 64;
      c.a_lo = 200;  // biased high: exercise the extreme pair sums 2*255*(+-64)
      EXPECT_EQ(RunCase(c, seed++), NgemmMode::kU8S8Fast);
    }
}

TEST_P(NgemmPathTest, AdversarialExtremesTakeExactPath) {
  // All 255 x -128: vpmaddubsw alone would saturate every pair (2*255*-128 = -65280).
  for (int64_t M : {1, 4, 9})
    for (int64_t K : {4, 33, 256}) {
      Case c{M, K, 40};
      c.a_lo = c.a_hi = 255;
      c.b_lo = c.b_hi = -128;
      EXPECT_EQ(RunCase(c, 7), NgemmMode::kU8S8Exact);
      c.b_lo = c.b_hi = 127;
      EXPECT_EQ(RunCase(c, 8), NgemmMode::kU8S8Exact);
    }
}

TEST_P(NgemmPathTest, FastModeWouldSaturateOnAdversarialInputs) {
  // Proves the exact path is needed: forcing the fast mode on the adversarial case gives a wrong
  // answer on AVX2 (the reference has no saturating step, so it is skipped there).
  if (GetParam() != NgemmPath::kAvx2 && GetParam() != NgemmPath::kAvx512)
    GTEST_SKIP() << "only the vpmaddubsw fast mode (avx2, avx512) saturates";
  const int64_t K = 8, N = 8;
  std::vector<uint8_t> A(K, 255);
  std::vector<int8_t> B(K * N, -128);
  auto packed = PackOwned(B.data(), K, N, WeightType::kInt8);
  std::vector<int32_t> C(N);
  NgemmTileArgs t;
  t.a = A.data();
  t.rows = 1;
  t.k_elems = K;
  t.b = packed.weights.data();
  t.block_stride = packed.weights.block_stride();
  t.cols = N;
  t.c = C.data();
  t.mode = NgemmMode::kU8S8Fast;
  GetNgemmDispatch().gemv(t);
  EXPECT_EQ(C[0], -32768 * (K / 2));  // saturated pairs
  EXPECT_NE(C[0], 255 * -128 * K);
}

TEST_P(NgemmPathTest, ZeroPointsAndOperandTypes) {
  uint32_t seed = 300;
  const int zps[] = {0, 1, 127, 128, 255};
  for (ActivationType at : {ActivationType::kUint8, ActivationType::kInt8})
    for (WeightType bt : {WeightType::kInt8, WeightType::kUint8})
      for (int za : zps)
        for (int zb : zps)
          for (int64_t M : {1, 3, 17}) {
            Case c{M, 33, 37};
            c.a_type = at;
            c.b_type = bt;
            if (at == ActivationType::kInt8) c.a_lo = 0, c.a_hi = 255;  // bytes, read as int8
            // Zero points in the operand's own range: int8 operands use za - 128.
            c.za = {at == ActivationType::kInt8 ? za - 128 : za};
            c.zb = {bt == WeightType::kInt8 ? zb - 128 : zb};
            RunCase(c, seed++);
          }
}

TEST_P(NgemmPathTest, PerRowAndPerColumnZeroPoints) {
  uint32_t seed = 400;
  std::mt19937 rng(5);
  for (int64_t M : {1, 2, 5, 16, 17})
    for (int64_t N : {1, 9, 40}) {
      Case c{M, 29, N};
      c.b_type = WeightType::kUint8;
      c.b_lo = 0;
      c.b_hi = 255;
      c.za.resize(M);
      c.zb.resize(N);
      FillRandom(c.za.data(), c.za.size(), 0, 255, rng);
      FillRandom(c.zb.data(), c.zb.size(), 0, 255, rng);
      RunCase(c, seed++);
    }
}

TEST_P(NgemmPathTest, SixRowAssemblyBlocksUnderEveryTileAndPermutation) {
  // The AVX2 fast mode runs 6 x 16 assembly blocks (kernel_avx2.cc): whole blocks, bottom rows,
  // K tiles that accumulate into C, tiles starting mid-block (tn = 8, 24) and both loop orders.
  uint32_t seed = 600;
  for (int64_t M : {6, 13, 100})
    for (NgemmPermute perm : {NgemmPermute::kNone, NgemmPermute::kInner, NgemmPermute::kOuter, NgemmPermute::kAll})
      for (int tm : {0, 6, 7, 64})
        for (int tn : {0, 8, 24, 40})
          for (int tk : {0, 4, 8, 32}) {
            Case c{M, 68, 72};
            c.a_hi = 127;
            c.a_within_7bit = true;
            c.tiles = {tm, tn, tk, perm};
            EXPECT_EQ(RunCase(c, seed++), NgemmMode::kU8S8Fast);
          }
}

TEST_P(NgemmPathTest, EveryTileAndPermutation) {
  uint32_t seed = 500;
  for (NgemmPermute perm : {NgemmPermute::kNone, NgemmPermute::kInner, NgemmPermute::kOuter, NgemmPermute::kAll})
    for (int tm : {0, 1, 3, 8, 64})
      for (int tn : {0, 1, 8, 20, 40, 256})
        for (int tk : {0, 1, 4, 8, 33, 1 << 20}) {
          Case c{19, 67, 71};
          c.tiles = {tm, tn, tk, perm};
          c.za = {3};
          c.zb = {-5};
          RunCase(c, seed++);
        }
}

TEST_P(NgemmPathTest, Int16Products) {
  uint32_t seed = 600;
  for (int64_t M : {1, 2, 4, 5, 17, 33})
    for (int64_t K : {1, 2, 3, 31, 64, 65})
      for (int64_t N : {1, 8, 33, 64}) {
        std::mt19937 rng(seed++);
        GuardBuffer<int16_t> A(static_cast<size_t>(M * K));
        std::vector<int16_t> B(static_cast<size_t>(K * N));
        FillRandom(A.data(), A.size(), -32768, 32767, rng);
        FillRandom(B.data(), B.size(), -32768, 32767, rng);
        if (M == 1) std::fill(A.data(), A.data() + A.size(), int16_t{-32768});  // wraps in vpmaddwd
        if (M == 1) std::fill(B.begin(), B.end(), int16_t{-32768});
        auto packed = PackOwned(B.data(), K, N, WeightType::kInt16);
        GuardBuffer<int32_t> C(static_cast<size_t>(M * N));
        NgemmS16S16(A.data(), M, K, K, packed.weights, C.data(), N, {8, 16, 4, NgemmPermute::kAll});
        const auto expected = ReferenceProduct(A.data(), B.data(), M, K, N, {}, {});
        for (int64_t i = 0; i < M * N; ++i) ASSERT_EQ(C[i], expected[i]) << "M=" << M << " K=" << K << " N=" << N << " i=" << i;
        NgemmS16S16(A.data(), M, K, K, packed.weights, C.data(), N);
        for (int64_t i = 0; i < M * N; ++i) ASSERT_EQ(C[i], expected[i]) << "default tiles, i=" << i;
      }
}

TEST_P(NgemmPathTest, ModelShapes) {
  // LSTM shapes: h (1 x H) times R (H x 4H), and a sequence GEMM on the input projection.
  uint32_t seed = 700;
  for (int64_t H : {128, 256}) {
    Case gemv{1, H, 4 * H};
    gemv.a_hi = 127;
    gemv.a_within_7bit = true;
    RunCase(gemv, seed++);
    Case gemm{100, H, 4 * H};
    gemm.a_hi = 127;
    gemm.a_within_7bit = true;
    RunCase(gemm, seed++);
  }
}

// Consecutive GEMVs on the same packed weights sweep the 32-column blocks ascending, then
// descending (platform/alternating_sweep.h): both equal the reference, a partial block included.
TEST_P(NgemmPathTest, GemvSweepsInBothDirectionsEqualTheReference) {
  std::mt19937 rng(800);
  for (int64_t N : {5 * 32, 9 * 32 + 7}) {
    const int64_t K = 100;
    std::vector<uint8_t> A(static_cast<size_t>(K));
    FillRandom(A.data(), A.size(), 0, 127, rng);
    std::vector<int8_t> B(static_cast<size_t>(K * N));
    FillRandom(reinterpret_cast<uint8_t*>(B.data()), B.size(), -128, 127, rng);
    testing::OwnedPacked packed = PackOwned(B.data(), K, N, WeightType::kInt8);
    const std::vector<int32_t> expected = ReferenceProduct(A.data(), B.data(), 1, K, N, {}, {});
    NgemmParams p;
    p.a_within_7bit = true;
    for (const char* sweep : {"ascending", "descending"}) {
      std::vector<int32_t> C(static_cast<size_t>(N), 0x5a5a5a5a);
      NgemmU8S8(A.data(), 1, K, K, packed.weights, C.data(), N, p);
      ASSERT_EQ(C, expected) << "path " << GetNgemmDispatch().name << " N=" << N << " " << sweep << " sweep";
    }
  }
}

// Long sweep (run with --gtest_also_run_disabled_tests --gtest_filter='*DISABLED_*').
TEST_P(NgemmPathTest, DISABLED_LongSweep) {
  uint32_t seed = 900;
  for (int64_t M = 1; M <= 70; M += 3)
    for (int64_t K = 1; K <= 300; K += 13)
      for (int64_t N = 1; N <= 300; N += 17) {
        Case c{M, K, N};
        c.za = {static_cast<int32_t>(seed % 256)};
        c.zb = {static_cast<int32_t>(seed % 200) - 100};
        RunCase(c, seed++);
      }
}

INSTANTIATE_TEST_SUITE_P(Paths, NgemmPathTest, ::testing::ValuesIn(testing::AllPaths()),
                         [](const ::testing::TestParamInfo<NgemmPath>& info) { return testing::PathName(info.param); });

TEST(NgemmPack, Avx2PackEqualsReferenceByteForByte) {
  if (!NgemmPathAvailable(NgemmPath::kAvx2)) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(11);
  for (int64_t K : {1, 4, 5, 64, 67})
    for (int64_t N : {1, 31, 32, 33, 96, 100}) {
      std::vector<uint8_t> B(static_cast<size_t>(K * N));
      FillRandom(B.data(), B.size(), 0, 255, rng);
      const size_t bytes = PackedInt8Weights::RequiredBytes(K, N, WeightType::kUint8);
      testing::OwnedPacked ref, avx;
      {
        PathGuard g(NgemmPath::kRef);
        ref = PackOwned(B.data(), K, N, WeightType::kUint8);
      }
      {
        PathGuard g(NgemmPath::kAvx2);
        avx = PackOwned(B.data(), K, N, WeightType::kUint8);
      }
      ASSERT_EQ(std::memcmp(ref.storage.get(), avx.storage.get(), bytes), 0) << "K=" << K << " N=" << N;
      EXPECT_EQ(ref.weights.weights_within_7bit(), avx.weights.weights_within_7bit());
    }
}

TEST(NgemmPack, MetadataAndPadding) {
  const int64_t K = 5, N = 3;
  const std::vector<int8_t> B = {1, -64, 64, 2, -1, 0, 3, 5, 0, 4, 7, 0, 5, 0, 1};
  for (NgemmPath path : AvailablePaths()) {
    PathGuard g(path);
    auto packed = PackOwned(B.data(), K, N, WeightType::kInt8);
    const PackedInt8Weights& w = packed.weights;
    EXPECT_EQ(w.KPadded(), 8);
    EXPECT_EQ(w.NPadded(), 32);
    EXPECT_TRUE(w.weights_within_7bit());
    EXPECT_EQ(w.column_sums()[0], 1 + 2 + 3 + 4 + 5);
    EXPECT_EQ(w.column_sums()[1], -64 - 1 + 5 + 7 + 0);
    EXPECT_EQ(w.column_sums()[2], 64 + 0 + 0 + 0 + 1);
    EXPECT_EQ(w.column_sums()[3], 0);
    // Column 0, k = 0..3 are the first 4 bytes; k = 4 opens the second k-group, k = 5..7 are zero.
    EXPECT_EQ(static_cast<int8_t>(w.data()[0]), 1);
    EXPECT_EQ(static_cast<int8_t>(w.data()[3]), 4);
    EXPECT_EQ(static_cast<int8_t>(w.data()[128]), 5);
    EXPECT_EQ(w.data()[129], 0);
    EXPECT_EQ(w.data()[4 * 3], 0);  // column 3 is padding
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data()) % 64, 0u);
  }
  const std::vector<int8_t> wide = {65, 0};
  auto packed = PackOwned(wide.data(), 1, 2, WeightType::kInt8);
  EXPECT_FALSE(packed.weights.weights_within_7bit());
}

TEST(NgemmPack, RejectsBadArguments) {
  EXPECT_EQ(PackedInt8Weights::RequiredBytes(0, 4), 0u);
  EXPECT_EQ(PackedInt8Weights::RequiredBytes(4, -1), 0u);
  alignas(64) static uint8_t buffer[4096];
  const int8_t B[4] = {1, 2, 3, 4};
  PackedInt8Weights w;
  EXPECT_FALSE(PackedInt8Weights::Pack(B, 2, 2, 1, buffer, &w));       // ldb < N
  EXPECT_FALSE(PackedInt8Weights::Pack(B, 2, 2, 2, buffer + 1, &w));   // misaligned
  EXPECT_TRUE(PackedInt8Weights::Pack(B, 2, 2, 2, buffer, &w));
}

TEST(NgemmDispatchTest, ForcedPathsAndNames) {
  ASSERT_TRUE(SetNgemmPathForTesting(NgemmPath::kRef));
  EXPECT_STREQ(GetNgemmDispatch().name, "ref");
  for (NgemmPath path : testing::AllPaths()) {
    if (NgemmPathAvailable(path)) {
      ASSERT_TRUE(SetNgemmPathForTesting(path));
      EXPECT_EQ(GetNgemmDispatch().name, testing::PathName(path));
    } else {
      // The path forced before stays (on a CPU with AVX-512 VNNI but no AVX-VNNI, avxvnni is
      // refused right after avx2 was forced).
      const std::string before = GetNgemmDispatch().name;
      EXPECT_FALSE(SetNgemmPathForTesting(path)) << testing::PathName(path);
      EXPECT_EQ(GetNgemmDispatch().name, before) << "a refused path changes nothing";
    }
  }
  ASSERT_TRUE(SetNgemmPathForTesting(NgemmPath::kAuto));
  // Unforced, the process tier (CPUID's best unless NUPHAR_CODEGEN_TARGET says otherwise) decides.
  EXPECT_STREQ(GetNgemmDispatch().name, IsaTierName(ActiveIsaTier()) == std::string("portable") ? "ref"
                                                                                               : IsaTierName(ActiveIsaTier()));
  // A session's tier wins over the process tier.
  EXPECT_STREQ(GetNgemmDispatch(IsaTier::kPortable).name, "ref");
}

}  // namespace
}  // namespace nuphar::ngemm
