// The worker pool (runtime/platform/thread_pool.h) and NGEMM's splits on it.
#include "runtime/platform/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "runtime/kernels/ngemm/ngemm.h"

namespace nuphar {
namespace {

TEST(ThreadPoolTest, EveryTaskRunsOnceInManyShortRegions) {
  auto pool = ThreadPool::Create(2);
  ASSERT_EQ(pool->num_threads(), 2);
  std::vector<int> hits(7);
  for (int region = 0; region < 20000; ++region) {
    const int tasks = 1 + region % 7;
    std::vector<std::atomic<int>> count(static_cast<size_t>(tasks));
    pool->ParallelFor(tasks, [&](int t) { count[static_cast<size_t>(t)].fetch_add(1, std::memory_order_relaxed); });
    for (int t = 0; t < tasks; ++t) ASSERT_EQ(count[static_cast<size_t>(t)].load(), 1) << "region " << region;
  }
  EXPECT_GT(pool->regions_run(), 0);
}

TEST(ThreadPoolTest, RegionsAfterTheWorkersParkedStillRun) {
  auto pool = ThreadPool::Create(3);
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin window: workers park
    std::atomic<int> sum{0};
    pool->ParallelFor(16, [&](int t) { sum.fetch_add(t); });
    EXPECT_EQ(sum.load(), 120);
  }
}

TEST(ThreadPoolTest, ConcurrentAndNestedCallersRunInlineWithoutDeadlock) {
  auto pool = ThreadPool::Create(2);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        pool->ParallelFor(2, [&](int) {
          // A region opened inside a task finds the pool busy and runs on this thread.
          pool->ParallelFor(3, [&](int) { total.fetch_add(1, std::memory_order_relaxed); });
        });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 2000 * 2 * 3);
  EXPECT_GT(pool->regions_inline(), 0);
}

TEST(ThreadPoolTest, PoolsCreatedAndDestroyedConcurrently) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int c = 0; c < 4; ++c) {
    threads.emplace_back([&, c] {
      for (int i = 0; i < 50; ++i) {
        auto pool = ThreadPool::Create(2 + (c + i) % 3);
        std::atomic<int> n{0};
        pool->ParallelFor(5, [&](int) { n.fetch_add(1); });
        if (n.load() == 5) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200);
}

TEST(ThreadPoolTest, OneThreadCreatesNoWorkers) {
  auto pool = ThreadPool::Create(1);
  EXPECT_EQ(pool->num_threads(), 1);
  const std::thread::id self = std::this_thread::get_id();
  pool->ParallelFor(4, [&](int) { EXPECT_EQ(std::this_thread::get_id(), self); });
}

// NGEMM split over the pool: GEMV by column blocks, GEMM by tiles, both equal to one thread's
// results for every size and tiling (the plain loop is checked by ngemm_test).
TEST(ThreadedNgemmTest, SplitProductsEqualOneThread) {
  auto pool = ThreadPool::Create(2);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  for (int64_t M : {1, 2, 9, 100})
    for (int64_t K : {3, 64, 257})
      for (int64_t N : {1, 31, 33, 200, 1000}) {
        std::vector<uint8_t> A(static_cast<size_t>(M * K));
        std::vector<int8_t> B(static_cast<size_t>(K * N));
        for (auto& a : A) a = static_cast<uint8_t>(u8(rng));
        for (auto& b : B) b = static_cast<int8_t>(s8(rng));
        const size_t bytes = ngemm::PackedInt8Weights::RequiredBytes(K, N);
        std::unique_ptr<void, decltype(&std::free)> storage(std::aligned_alloc(64, (bytes + 63) / 64 * 64), &std::free);
        ngemm::PackedInt8Weights packed;
        ASSERT_TRUE(ngemm::PackedInt8Weights::Pack(B.data(), K, N, N, storage.get(), &packed));
        std::vector<int32_t> one(static_cast<size_t>(M * N)), two(static_cast<size_t>(M * N), -1);
        ngemm::NgemmParams params;
        ngemm::NgemmU8S8(A.data(), M, K, K, packed, one.data(), N, params);
        for (int tile_n : {0, 8, 40}) {
          params.tiles.n = tile_n;
          params.tiles.pool = pool.get();
          params.tiles.parallel_min_work = 1;
          ngemm::NgemmU8S8(A.data(), M, K, K, packed, two.data(), N, params);
          ASSERT_EQ(one, two) << "M " << M << " K " << K << " N " << N << " tile_n " << tile_n;
          params.tiles.pool = nullptr;
        }
      }
  EXPECT_GT(pool->regions_run(), 0) << "the products were never split";
}

}  // namespace
}  // namespace nuphar
