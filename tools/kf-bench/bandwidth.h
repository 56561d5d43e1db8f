// The machine's DRAM read bandwidth, measured in the run that uses it: the
// roofline every kernel's time is set against (DESIGN §6).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "timing.h"

namespace kf::bench {

class ThreadPool;

struct StreamFigure {
  int streams; // independent sequential read streams per thread
  double gbps; // median over the runs
};

struct Bandwidth {
  double gbps = 0; // the best of `figures`: what the machine can deliver
  std::vector<StreamFigure> figures;
  std::string_view isa; // the loads used: "avx512", "avx2" or "portable"
  uint64_t bytes = 0;   // read per run
  int runs = 0;
  // CPUs other processes kept busy meanwhile; the caller measures it.
  double other_cpus = 0;
};

// Reads `buffer` (which should be far larger than the last-level cache, and
// written, so that its pages are real) on every thread of `pool`, each
// thread its own contiguous slice split into 1, 2 and 4 interleaved
// streams: one untimed round, then `runs` timed rounds of one pass per
// stream count.
// Several streams keep more hardware prefetchers busy, which some machines
// need to reach their peak and others do not; the loads are the widest the
// CPU has, as the kernels' are.
absl::StatusOr<Bandwidth>
measure_read_bandwidth(ThreadPool &pool, std::span<const uint8_t> buffer,
                       int runs);

} // namespace kf::bench
