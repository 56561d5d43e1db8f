// The persistent thread pool and its two splits of work: fixed row blocks
// and batches claimed from a counter; the cores it pins its threads to.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kf/runtime/host_cpu.h"
#include "kf/runtime/thread_pool.h"
#include "gmock/gmock.h"

namespace kf {
namespace {

TEST(ThreadPool, EveryIndexOncePerRun) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> counts(3);
  for (int run = 0; run < 1000; ++run)
    pool.run([&](int t) { counts[t].fetch_add(1); });
  for (auto &c : counts)
    EXPECT_EQ(c.load(), 1000);
}

TEST(ThreadPool, RowBlocksTileTheRowsInOrder) {
  for (int64_t group : {1, 4, 16})
    for (int threads : {1, 2, 3, 7})
      for (int64_t n : {0, 1, 5, 18, 2048}) {
        const int64_t groups = (n + group - 1) / group;
        int64_t next = 0;
        for (int t = 0; t < threads; ++t) {
          RowBlock b = rowBlock(n, t, threads, group);
          EXPECT_EQ(b.begin, next);
          EXPECT_TRUE(b.begin % group == 0 || b.begin == n);
          EXPECT_TRUE(b.end % group == 0 || b.end == n);
          // Whole groups, as even as they divide.
          const int64_t blockGroups = (b.end - b.begin + group - 1) / group;
          EXPECT_LE(blockGroups, groups / threads + 1);
          EXPECT_GE(blockGroups, groups / threads);
          next = b.end;
        }
        EXPECT_EQ(next, n) << group << " " << threads;
      }
}

TEST(ThreadPool, ParallelRowsReturnsAnError) {
  ThreadPool pool(2);
  absl::Status s = parallelRows(pool, 10, [](int64_t begin, int64_t) {
    return begin == 0 ? absl::OkStatus() : absl::InternalError("second half");
  });
  EXPECT_EQ(s.message(), "second half");
}

TEST(ThreadPool, ClaimsEveryItemOnceInBatches) {
  for (int threads : {1, 2, 3})
    for (int64_t n : {0, 1, 7, 64, 1000})
      for (int64_t batch : {1, 3, 64}) {
        ThreadPool pool(threads);
        std::vector<std::atomic<int>> seen(n);
        std::atomic<int64_t> batches{0};
        absl::Status s = parallelClaim(
            pool, n, batch, [&](int64_t begin, int64_t end, int t) {
              EXPECT_GE(t, 0);
              EXPECT_LT(t, threads);
              EXPECT_EQ(begin % batch, 0);
              EXPECT_EQ(end, std::min(n, begin + batch));
              for (int64_t i = begin; i < end; ++i)
                seen[i].fetch_add(1);
              batches.fetch_add(1);
              return absl::OkStatus();
            });
        ASSERT_TRUE(s.ok()) << s;
        for (int64_t i = 0; i < n; ++i)
          EXPECT_EQ(seen[i].load(), 1) << i;
        EXPECT_EQ(batches.load(), (n + batch - 1) / batch);
      }
}

TEST(ThreadPool, ClaimStopsAtTheFirstError) {
  // On one thread the claims are in order, so none follows the error.
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::atomic<int64_t> after{0};
    absl::Status s =
        parallelClaim(pool, 10000, 1, [&](int64_t begin, int64_t, int) {
          if (begin == 5)
            return absl::InternalError("item 5");
          if (begin > 5)
            after.fetch_add(1);
          return absl::OkStatus();
        });
    EXPECT_EQ(s.message(), "item 5") << threads;
    // With two, the other thread claims until it sees the flag, which a
    // descheduled failing thread may set late: only one thread is exact.
    if (threads == 1) {
      EXPECT_EQ(after.load(), 0);
    }
  }
}

TEST(ThreadPool, ClaimHandsUnevenWorkToTheFreeThread) {
  // Item 0 does not finish until the other 199 are done: only a split that
  // lets the free thread claim them all gets there (fixed halves would wait
  // for ever, hence the deadline).
  ThreadPool pool(2);
  std::atomic<int> done{0};
  absl::Status s =
      parallelClaim(pool, 200, 1, [&](int64_t begin, int64_t, int) {
        if (begin == 0) {
          auto deadline =
              std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (done.load() < 199) {
            if (std::chrono::steady_clock::now() > deadline)
              return absl::DeadlineExceededError("the other items waited");
            std::this_thread::yield();
          }
        }
        done.fetch_add(1);
        return absl::OkStatus();
      });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(done.load(), 200);
}

// Every thread passes each of many barriers in turn: no thread is ever more
// than one phase ahead of another, and each sees all writes of the phase
// before.
TEST(Barrier, SeparatesPhases) {
  constexpr int kThreads = 3, kPhases = 2000;
  ThreadPool pool(kThreads);
  Barrier barrier(kThreads);
  std::vector<int> written(kThreads, -1);
  std::atomic<int> violations{0};
  pool.run([&](int t) {
    for (int phase = 0; phase < kPhases; ++phase) {
      written[t] = phase;
      barrier.wait();
      for (int other = 0; other < kThreads; ++other)
        if (written[other] != phase)
          violations.fetch_add(1);
      barrier.wait();
    }
  });
  EXPECT_EQ(violations.load(), 0);
}

// Two packages, the first with two-way SMT: cores are grouped by package
// and core, siblings lowest first, cores by their lowest CPU.
TEST(CpuTopology, GroupsLogicalCpusByCore) {
  const CpuPlace cpus[] = {{0, 0, 0}, {1, 0, 1}, {2, 1, 0},
                           {4, 0, 0}, {5, 0, 1}, {3, 1, 4}};
  EXPECT_EQ(groupCores(cpus),
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2}, {3}}));
  // A thread a core first, the siblings only for threads beyond the cores.
  std::vector<std::vector<int>> cores = groupCores(cpus);
  EXPECT_EQ(pinningOrder(cores, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(pinningOrder(cores, 6), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(pinningOrder(cores, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 0, 1}));
  EXPECT_FALSE(hostCores().empty());
}

// Each thread of a pinned pool runs on its CPU alone; the calling thread
// gets its CPUs back when the pool goes.
TEST(ThreadPool, PinsEachThreadToItsCpu) {
  auto cpusOf = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set))
        cpus.push_back(cpu);
    return cpus;
  };
  const std::vector<int> before = cpusOf();
  const int threads = static_cast<int>(hostCores().size());
  const std::vector<int> order = pinningOrder(hostCores(), threads);
  {
    ThreadPool pool(threads, order);
    ASSERT_EQ(pool.pinFailures(), 0);
    std::vector<std::vector<int>> seen(threads);
    pool.run([&](int t) { seen[t] = cpusOf(); });
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(seen[t], std::vector<int>{order[t]}) << "thread " << t;
  }
  EXPECT_EQ(cpusOf(), before);
  // A CPU that does not exist is refused, and the thread runs unpinned.
  ThreadPool pool(1, {CPU_SETSIZE + 1});
  EXPECT_EQ(pool.pinFailures(), 1);
}

} // namespace
} // namespace kf
