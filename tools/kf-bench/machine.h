// What the bench needs to know about the machine: how large a set of weights
// defeats its caches, and how much memory it can take.
#pragma once

#include <cstdint>
#include <string>

namespace kf::bench {

// The size of cpu0's level-3 cache from sysfs, else from sysconf; 0 when
// neither knows.
uint64_t l3CacheBytes();

// Whether the CPU has AMX's int8 tiles (CPUID), which oneDNN prefers to
// AVX-512 VNNI where it may use them.
bool cpuHasAmx();

// Physical memory; 0 when unknown.
uint64_t physicalMemoryBytes();

// How many CPUs other processes (and the hypervisor, as steal time) kept
// busy between start() and stop(): on a shared machine a figure taken while
// something else ran is not the kernel's, and a median cannot always hide it
// (a thread that loses its core stalls a whole parallel call).
class LoadMeter {
public:
  void start();
  // Average CPUs busy outside this process since start(); 0 when the
  // system does not say (no /proc/stat).
  double stop() const;

private:
  struct Sample {
    double busy = 0; // CPU seconds of the whole system, steal included
    double own = 0;  // CPU seconds of this process
    double wall = 0;
    bool valid = false;
  };
  static Sample sample();
  Sample start_;
};

// The cold working set: 4 x L3, so that a weight matrix is long evicted when
// its turn comes again, but at most kMaxColdSet, because a VM may report its
// host's whole L3 (hundreds of MiB) and filling several gigabytes per format
// costs more setup than it buys.
struct ColdSet {
  uint64_t bytes;
  std::string why; // e.g. "4 x L3 of 480 MiB"
};
inline constexpr uint64_t kMaxColdSet = uint64_t{2} << 30;
ColdSet defaultColdSet(uint64_t l3Bytes);

// How many copies of a matrix of `matrixBytes` fit in `set_bytes`, at
// least one: the set's buffer then holds them, with no copy beyond it.
int64_t copiesIn(uint64_t setBytes, uint64_t matrixBytes);

} // namespace kf::bench
