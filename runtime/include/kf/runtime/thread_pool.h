// The threads compiled kernels run on: a persistent pool whose workers spin,
// then park, and the two ways work is split over it — fixed row blocks (each
// thread its own rows, so a result never depends on timing) and items
// claimed in batches from an atomic counter (so uneven work, an expert with
// one token beside one with many, idles no thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace kf {

// A fixed set of threads, the calling thread among them, that run one task
// at a time. Waking a sleeping thread costs tens of microseconds, as much as
// a whole M = 1 matmul that streams its weights at DRAM speed, so workers
// spin for a while after each task before they sleep: back-to-back timed
// calls find them awake, and a pool left idle stops taking a core from
// whatever is measured next.
class ThreadPool {
public:
  explicit ThreadPool(int threads) : ThreadPool(threads, {}) {}
  // With `cpus`, thread t runs only on logical CPU cpus[t] (core pinning,
  // kf::pinningOrder; round robin if it is shorter than the threads), the
  // calling thread as thread 0 until the pool is destroyed.
  ThreadPool(int threads, const std::vector<int> &cpus);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return threads_; }
  // Threads the system refused to pin to their CPU (one not allowed to
  // this process, or none such): they run unpinned.
  int pinFailures() const { return pinFailures_; }

  // Calls task(t) for every t in [0, size()), task(0) on the calling thread,
  // and returns when all have returned.
  void run(absl::FunctionRef<void(int)> task);

private:
  void work(int index);

  const int threads_;
  std::vector<std::thread> workers_;
  int pinFailures_ = 0;
  // The calling thread's CPUs before it was pinned, restored at the end.
  std::vector<int> callerCpus_;
  // Bumped once per task; workers wait for it to move.
  std::atomic<uint64_t> generation_{0};
  // Workers yet to finish the current task.
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const absl::FunctionRef<void(int)> *task_ = nullptr;
};

// Where the threads of one ThreadPool::run task wait for each other: each
// wait() returns once all `threads` have called it, and then the writes every
// thread made before it are visible to all. Reusable: the k-th wait of one
// thread pairs with the k-th of the others. Waiters spin, as the pool's
// workers do, then sleep.
class Barrier {
public:
  explicit Barrier(int threads) : threads_(threads < 1 ? 1 : threads) {}
  void wait();

private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> generation_{0};
};

// The contiguous block of [0, n) that thread `t` of `threads` owns: the
// blocks are in thread order, start at multiples of `group` and end at one
// or at n, and differ by at most one group.
struct RowBlock {
  int64_t begin, end;
};
RowBlock rowBlock(int64_t n, int t, int threads, int64_t group = 1);

// Splits [0, n) into the pool's row blocks (of `group`s of rows) and calls
// work(begin, end) for each on its thread, empty blocks included; returns
// the first error.
absl::Status
parallelRows(ThreadPool &pool, int64_t n,
             absl::FunctionRef<absl::Status(int64_t, int64_t)> work,
             int64_t group = 1);

// Calls work(begin, end, t) on the pool's threads for consecutive batches of
// `batch` items of [0, n) (the last one shorter), each batch once, claimed
// by whichever thread t is free first: which thread runs an item depends on
// timing, so `work` must give an item the same result on any thread. After
// the first error no thread claims another batch; returns that error.
absl::Status
parallelClaim(ThreadPool &pool, int64_t n, int64_t batch,
              absl::FunctionRef<absl::Status(int64_t, int64_t, int)> work);

} // namespace kf
