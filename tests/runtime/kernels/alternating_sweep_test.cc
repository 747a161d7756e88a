// The GEMV sweep order (runtime/platform/alternating_sweep.h): which calls run descending, and
// that a descending sweep covers every block exactly once, last chunk first.
#include "runtime/platform/alternating_sweep.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace nuphar {
namespace {

std::vector<std::pair<int64_t, int64_t>> Chunks(int64_t first, int64_t end, bool descending) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  AlternatingSweep::ForEachChunk(first, end, descending, [&](int64_t b0, int64_t b1) { chunks.emplace_back(b0, b1); });
  return chunks;
}

TEST(AlternatingSweepTest, EveryOtherCallDescendsWhenThereIsMoreThanOneChunk) {
  const AlternatingSweep sweep;
  const int64_t many = AlternatingSweep::kChunkBlocks + 1;
  EXPECT_FALSE(sweep.NextIsDescending(many));
  EXPECT_TRUE(sweep.NextIsDescending(many));
  EXPECT_FALSE(sweep.NextIsDescending(many));
  EXPECT_TRUE(sweep.NextIsDescending(many));
  // One chunk or less: always ascending, and the alternation is not advanced.
  EXPECT_FALSE(sweep.NextIsDescending(AlternatingSweep::kChunkBlocks));
  EXPECT_FALSE(sweep.NextIsDescending(many));
  // A copy starts ascending.
  const AlternatingSweep copy = sweep;
  EXPECT_FALSE(copy.NextIsDescending(many));
}

TEST(AlternatingSweepTest, AscendingIsOneRangeDescendingIsChunksFromTheEnd) {
  using Chunk = std::pair<int64_t, int64_t>;
  EXPECT_EQ(Chunks(0, 10, false), (std::vector<Chunk>{{0, 10}}));
  static_assert(AlternatingSweep::kChunkBlocks == 4, "the expected chunks below are for 4 blocks per chunk");
  EXPECT_EQ(Chunks(0, 10, true), (std::vector<Chunk>{{6, 10}, {2, 6}, {0, 2}}));
  EXPECT_EQ(Chunks(3, 11, true), (std::vector<Chunk>{{7, 11}, {3, 7}}));
  EXPECT_EQ(Chunks(5, 6, true), (std::vector<Chunk>{{5, 6}}));
  EXPECT_TRUE(Chunks(4, 4, true).empty());
}

}  // namespace
}  // namespace nuphar
