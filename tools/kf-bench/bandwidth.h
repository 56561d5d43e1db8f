// The machine's DRAM read bandwidth, measured in the run that uses it: the
// roofline every kernel's time is set against (docs/benchmarks.md). It must be
// an upper bound a kernel cannot beat, so it is the fastest of several ways of
// reading memory, not one loop that a core may limit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "timing.h"

namespace kf {
class ThreadPool;
} // namespace kf

namespace kf::bench {

// One way of reading a thread's slice: `streams` interleaved sequential
// streams, each line of which is software-prefetched `prefetchBytes` ahead
// with `prefetch` ("" for none, "t0", "t1" or "nta").
struct ReadPattern {
  int streams;
  std::string_view prefetch;
  int prefetchBytes;

  std::string name() const; // "4 streams", "2 streams + prefetcht0 1 KiB"
};

struct PatternFigure {
  ReadPattern pattern;
  double gbps; // median over the runs
};

// One measurement: every pattern, the runs of each taking turns.
struct Bandwidth {
  double gbps = 0;  // the best pattern's: what the machine can deliver
  std::string best; // its name
  std::vector<PatternFigure> figures;
  std::string_view isa; // the loads used: "avx512", "avx2" or "portable"
  uint64_t bytes = 0;   // read per run
  int runs = 0;
  // CPUs other processes kept busy meanwhile; the caller measures it.
  double otherCpus = 0;
};

// The read patterns measured: 1, 2, 4 and 8 streams, each without software
// prefetch and with prefetcht0, prefetcht1 and prefetchnta ahead of it.
std::span<const ReadPattern> readPatterns();

// Reads `buffer` (which should be far larger than the last-level cache, and
// written, so that its pages are real) on every thread of `pool`, each
// thread its own contiguous slice, in every readPatterns() way: one
// untimed round, then `runs` timed rounds of one pass per pattern. The loads
// are the widest the CPU has, as the kernels' are.
absl::StatusOr<Bandwidth> measureReadBandwidth(ThreadPool &pool,
                                               std::span<const uint8_t> buffer,
                                               int runs);

// The measurements of one thread count over a run (before the first round
// and after each): the roofline is their median, and a kernel that reads
// faster than the fastest of them has beaten the probe, not the machine.
struct BandwidthSeries {
  int threads = 0;
  std::vector<Bandwidth> probes;

  double medianGbps() const;
  double minGbps() const;
  double maxGbps() const;
};

} // namespace kf::bench
