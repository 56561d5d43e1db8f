#include "kf/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <span>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kf {

namespace {

// How long a worker keeps spinning for the next task before it sleeps:
// longer than the gap between two timed calls, short enough that an idle
// pool gives its cores back almost at once.
constexpr auto kSpin = std::chrono::milliseconds(2);

// Spinning beyond this long also yields the core now and then: on a machine
// shared with other work (or with more threads than cores) the thread being
// waited for may need it.
constexpr auto kPatience = std::chrono::microseconds(20);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Waits until `done()` holds: pause-spins, then also yields after
// kPatience, and after kSpin calls sleep(), which blocks until there may be
// news, at every check.
template <typename Done, typename Sleep>
void spinUntil(Done done, Sleep sleep) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  bool patient = true;
  for (int i = 1; !done(); ++i) {
    relax();
    if (i % 64 != 0)
      continue;
    if (!patient) {
      std::this_thread::yield();
      if (Clock::now() - start > kSpin)
        sleep();
    } else if (Clock::now() - start > kPatience) {
      patient = false;
    }
  }
}

// The CPUs `thread` may run on.
std::vector<int> cpusOf(pthread_t thread) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(thread, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set))
        cpus.push_back(cpu);
  return cpus;
}

// Lets `thread` run on `cpus` only; false if the system refuses.
bool pin(pthread_t thread, std::span<const int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      return false;
    CPU_SET(cpu, &set);
  }
  return pthread_setaffinity_np(thread, sizeof set, &set) == 0;
}

} // namespace

ThreadPool::ThreadPool(int threads, const std::vector<int> &cpus)
    : threads_(threads < 1 ? 1 : threads) {
  workers_.reserve(threads_ - 1);
  for (int t = 1; t < threads_; ++t)
    workers_.emplace_back([this, t] { work(t); });
  if (cpus.empty())
    return;
  callerCpus_ = cpusOf(pthread_self());
  for (int t = 0; t < threads_; ++t) {
    int cpu = cpus[static_cast<size_t>(t) % cpus.size()];
    pthread_t thread =
        t == 0 ? pthread_self() : workers_[t - 1].native_handle();
    pinFailures_ += !pin(thread, std::span<const int>(&cpu, 1));
  }
}

ThreadPool::~ThreadPool() {
  if (!callerCpus_.empty())
    pin(pthread_self(), callerCpus_);
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread &w : workers_)
    w.join();
}

void ThreadPool::run(absl::FunctionRef<void(int)> task) {
  if (threads_ == 1) {
    task(0);
    return;
  }
  task_ = &task;
  pending_.store(threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  task(0);
  // The caller is the one timing the call: it spins, it does not sleep.
  spinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; },
            [] {});
  task_ = nullptr;
}

void ThreadPool::work(int index) {
  uint64_t seen = 0;
  for (;;) {
    spinUntil(
        [&] { return generation_.load(std::memory_order_acquire) != seen; },
        [&] { generation_.wait(seen, std::memory_order_acquire); });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed))
      return;
    (*task_)(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

void Barrier::wait() {
  if (threads_ == 1)
    return;
  uint64_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
    // The last to arrive opens the barrier for the next use, then releases
    // the others; the release publishes every write made before the wait.
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return;
  }
  spinUntil(
      [&] { return generation_.load(std::memory_order_acquire) != generation; },
      [&] { generation_.wait(generation, std::memory_order_acquire); });
}

RowBlock rowBlock(int64_t n, int t, int threads, int64_t group) {
  // The tool accepts n and threads small enough that n * threads fits.
  const int64_t groups = (n + group - 1) / group;
  return {std::min(n, groups * t / threads * group),
          std::min(n, groups * (t + 1) / threads * group)};
}

absl::Status
parallelRows(ThreadPool &pool, int64_t n,
             absl::FunctionRef<absl::Status(int64_t, int64_t)> work,
             int64_t group) {
  std::vector<absl::Status> status(pool.size());
  pool.run([&](int t) {
    RowBlock b = rowBlock(n, t, pool.size(), group);
    status[t] = work(b.begin, b.end);
  });
  for (absl::Status &s : status)
    if (!s.ok())
      return s;
  return absl::OkStatus();
}

absl::Status
parallelClaim(ThreadPool &pool, int64_t n, int64_t batch,
              absl::FunctionRef<absl::Status(int64_t, int64_t, int)> work) {
  batch = std::max<int64_t>(batch, 1);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<absl::Status> status(pool.size());
  pool.run([&](int t) {
    while (!failed.load(std::memory_order_relaxed)) {
      int64_t begin = next.fetch_add(batch, std::memory_order_relaxed);
      if (begin >= n)
        return;
      status[t] = work(begin, std::min(n, begin + batch), t);
      if (!status[t].ok()) {
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  for (absl::Status &s : status)
    if (!s.ok())
      return s;
  return absl::OkStatus();
}

} // namespace kf
