// The session's persistent worker threads (spec runtime.md R6, §8.5). Created once per session
// with nuphar_num_threads - 1 workers (the calling thread is the other one); never a thread per
// call. Hand-offs spin for a bounded time, then park on a futex, so a Scan
// that opens a parallel region every time step finds its worker still spinning, and an idle
// session costs no CPU after the spin window.
//
// Thread safety: Run may be called from any thread, concurrently. One parallel region runs at a
// time; a Run that finds the pool busy (a concurrent Session::Run, or a region nested inside a
// task) runs all its tasks on the calling thread. Callers therefore split work into tasks with
// disjoint outputs and results that do not depend on which thread runs a task: results are
// bit-identical for every thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace nuphar {

class ThreadPool {
 public:
  /// A task body: fn(context, task_index).
  using TaskFn = void (*)(void* context, int task);

  /// `num_threads` >= 1 counts the calling thread; 1 creates no workers.
  static std::unique_ptr<ThreadPool> Create(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs fn(context, t) for every t in [0, num_tasks) and returns when all have finished. The
  /// calling thread takes tasks too. Tasks are claimed dynamically.
  void Run(int num_tasks, TaskFn fn, void* context);

  /// Run with a callable `f(int task)`.
  template <class F>
  void ParallelFor(int num_tasks, F&& f) {
    using Body = std::remove_reference_t<F>;
    Run(num_tasks, [](void* c, int t) { (*static_cast<Body*>(c))(t); }, const_cast<void*>(static_cast<const void*>(&f)));
  }

  /// Parallel regions that ran on the workers / that ran inline because the pool was busy
  /// (for tests and perf_test).
  int64_t regions_run() const { return regions_run_.load(std::memory_order_relaxed); }
  int64_t regions_inline() const { return regions_inline_.load(std::memory_order_relaxed); }

 private:
  explicit ThreadPool(int workers);
  void WorkerLoop();
  /// Claims and runs tasks of the job published as `generation` until none are left.
  void RunTasks(uint32_t generation);

  std::vector<std::thread> workers_;
  std::atomic<bool> busy_{false};      ///< a region is active (try-lock; losers run inline)
  /// Bumped per published job; workers park on it with a futex (32 bits, the futex word size).
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> parked_{0};         ///< workers blocked in the futex wait
  std::atomic<int> pending_{0};        ///< tasks of the current job not finished yet
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> regions_run_{0}, regions_inline_{0};

  std::mutex job_mutex_;  ///< guards the job fields below (claims are a few per region)
  uint32_t job_generation_ = 0;
  TaskFn job_fn_ = nullptr;
  void* job_context_ = nullptr;
  int job_tasks_ = 0;
  int job_next_ = 0;
};

}  // namespace nuphar
