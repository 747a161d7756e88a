// Tile settings: parsing, validation (bad text is an error value naming the variable), and the
// guards of R2.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {
namespace {

TEST(NgemmTilesTest, ParsesValuesAndRejectsGarbage) {
  int v = -1;
  std::string err;
  EXPECT_TRUE(ParseTileValue(" 32 ", &v, &err));
  EXPECT_EQ(v, 32);
  EXPECT_TRUE(ParseTileValue("", &v, &err));
  EXPECT_EQ(v, 0);
  for (const char* bad : {"0", "-8", "abc", "16x", "1e3", "99999999999999999999", "2097152"}) {
    err.clear();
    EXPECT_FALSE(ParseTileValue(bad, &v, &err)) << bad;
    EXPECT_NE(err.find("tile size"), std::string::npos) << bad;
  }
}

TEST(NgemmTilesTest, ParsesPermute) {
  NgemmPermute p;
  std::string err;
  EXPECT_TRUE(ParsePermute("INNER", &p, &err));
  EXPECT_EQ(p, NgemmPermute::kInner);
  EXPECT_TRUE(ParsePermute(" outer", &p, &err));
  EXPECT_EQ(p, NgemmPermute::kOuter);
  EXPECT_TRUE(ParsePermute("all", &p, &err));
  EXPECT_EQ(p, NgemmPermute::kAll);
  EXPECT_TRUE(ParsePermute("", &p, &err));
  EXPECT_EQ(p, NgemmPermute::kNone);
  EXPECT_FALSE(ParsePermute("sideways", &p, &err));
  EXPECT_NE(err.find("none|inner|outer|all"), std::string::npos);
}

TEST(NgemmTilesTest, ReadsEnvironmentAndNamesTheBadVariable) {
  setenv("NUPHAR_IGEMM_TILE_M", "4", 1);
  setenv("NUPHAR_IGEMM_TILE_N", "48", 1);
  unsetenv("NUPHAR_IGEMM_TILE_K");
  setenv("NUPHAR_IGEMM_PERMUTE", "all", 1);
  NgemmTiles t;
  std::string err;
  ASSERT_TRUE(TilesFromEnvironment(&t, &err)) << err;
  EXPECT_EQ(t.m, 4);
  EXPECT_EQ(t.n, 48);
  EXPECT_EQ(t.k, 0);
  EXPECT_EQ(t.permute, NgemmPermute::kAll);

  setenv("NUPHAR_IGEMM_TILE_K", "seven", 1);
  NgemmTiles untouched;
  untouched.m = 99;
  EXPECT_FALSE(TilesFromEnvironment(&untouched, &err));
  EXPECT_NE(err.find("NUPHAR_IGEMM_TILE_K"), std::string::npos);
  EXPECT_EQ(untouched.m, 99);
  unsetenv("NUPHAR_IGEMM_TILE_M");
  unsetenv("NUPHAR_IGEMM_TILE_N");
  unsetenv("NUPHAR_IGEMM_TILE_K");
  unsetenv("NUPHAR_IGEMM_PERMUTE");
}

TEST(NgemmTilesTest, GuardsFromR2) {
  // m = min(m, M); n rounded up to 8 then min(n, N_pad); k to a power of 2 clamped to [4, K_pad].
  ResolvedTiles r = ResolveTiles({100, 20, 5, NgemmPermute::kOuter}, 17, 64, 256);
  EXPECT_EQ(r.m, 17);
  EXPECT_EQ(r.n, 24);
  EXPECT_EQ(r.k, 8);
  EXPECT_TRUE(r.n_outer);
  EXPECT_FALSE(r.rows_outer);
  r = ResolveTiles({1, 1000, 1, NgemmPermute::kInner}, 17, 64, 256);
  EXPECT_EQ(r.m, 1);
  EXPECT_EQ(r.n, 64);
  EXPECT_EQ(r.k, 4);
  EXPECT_TRUE(r.rows_outer);
  r = ResolveTiles({}, 100, 1024, 36);  // defaults: A rows within 256 KB (all 100 here), 256 columns, whole K
  EXPECT_EQ(r.m, 100);
  EXPECT_EQ(r.n, 256);
  EXPECT_EQ(r.k, 36);
  r = ResolveTiles({}, 1000, 1024, 1024);  // 256 KB / 1024 = 256 rows, rounded down to a multiple of 6
  EXPECT_EQ(r.m, 252);
  r = ResolveTiles({}, 1000, 1024, 1 << 20);  // a huge K still gets one 6-row micro-block
  EXPECT_EQ(r.m, 6);
}

}  // namespace
}  // namespace nuphar::ngemm
