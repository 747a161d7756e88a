// Spin-then-park worker pool (thread_pool.h).
#include "runtime/platform/thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>

namespace nuphar {

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Parking on the generation word with the futex directly: the kernel re-checks the word, so a
// bump that lands before the wait returns at once. (libstdc++ 12's std::atomic::wait loses
// wake-ups: a pool destructor hung in join with its worker asleep.)
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// How long a worker spins for the next job before parking: well above the gap between two
// regions of one Scan time step (a few microseconds), well below a human-visible idle burn.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

std::unique_ptr<ThreadPool> ThreadPool::Create(int num_threads) {
  return std::unique_ptr<ThreadPool>(new ThreadPool(num_threads > 1 ? num_threads - 1 : 0));
}

ThreadPool::ThreadPool(int workers) {
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&generation_);
  for (auto& w : workers_) w.join();
}

void ThreadPool::RunTasks(uint32_t generation) {
  for (;;) {
    TaskFn fn;
    void* context;
    int task;
    {
      std::lock_guard<std::mutex> lock(job_mutex_);
      if (job_generation_ != generation || job_next_ >= job_tasks_) return;
      task = job_next_++;
      fn = job_fn_;
      context = job_context_;
    }
    fn(context, task);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::WorkerLoop() {
  uint32_t seen = generation_.load(std::memory_order_acquire);
  for (;;) {
    uint32_t now = generation_.load(std::memory_order_acquire);
    if (now == seen) {
      const auto until = std::chrono::steady_clock::now() + kSpin;
      for (int i = 0; now == seen && !stop_.load(std::memory_order_relaxed); ++i) {
        CpuRelax();
        now = generation_.load(std::memory_order_acquire);
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
      }
      // stop_ is checked too: a worker that starts after the destructor's bump reads that bump
      // as its first `seen` and would otherwise wait for one that never comes.
      while (now == seen && !stop_.load(std::memory_order_seq_cst)) {
        // seq_cst pairs with Run's store + load of parked_: either Run sees this worker parked
        // and notifies, or this wait already sees the new generation.
        parked_.fetch_add(1, std::memory_order_seq_cst);
        FutexWait(&generation_, seen);
        parked_.fetch_sub(1, std::memory_order_seq_cst);
        now = generation_.load(std::memory_order_acquire);
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = now;
    RunTasks(now);
  }
}

void ThreadPool::Run(int num_tasks, TaskFn fn, void* context) {
  if (num_tasks <= 0) return;
  bool expected = false;
  if (num_tasks == 1 || workers_.empty() ||
      !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire, std::memory_order_relaxed)) {
    if (num_tasks > 1 && !workers_.empty()) regions_inline_.fetch_add(1, std::memory_order_relaxed);
    for (int t = 0; t < num_tasks; ++t) fn(context, t);
    return;
  }
  uint32_t generation;
  {
    std::lock_guard<std::mutex> lock(job_mutex_);
    generation = job_generation_ + 1;
    job_generation_ = generation;
    job_fn_ = fn;
    job_context_ = context;
    job_tasks_ = num_tasks;
    job_next_ = 0;
    pending_.store(num_tasks, std::memory_order_relaxed);
  }
  generation_.store(generation, std::memory_order_seq_cst);
  if (parked_.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&generation_);
  RunTasks(generation);
  for (int i = 0; pending_.load(std::memory_order_acquire) != 0; ++i) {
    CpuRelax();
    if ((i & 1023) == 1023) std::this_thread::yield();  // a worker was descheduled: let it run
  }
  regions_run_.fetch_add(1, std::memory_order_relaxed);
  busy_.store(false, std::memory_order_release);
}

}  // namespace nuphar
