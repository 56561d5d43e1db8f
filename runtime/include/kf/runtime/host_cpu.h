// What this CPU can run, as the runtime sees it without LLVM: the features
// of kf/runtime/cpu_features.def that Linux lists for it in /proc/cpuinfo
// (which it lists only where the kernel enables them, AVX-512's state
// included), by their LLVM names; and its physical cores, which the thread
// pool puts one thread on each of by default.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace kf {

// The table's features this CPU has, by LLVM name ("avx2", "avx512vnni"),
// read from the first processor of `cpuinfo` (/proc/cpuinfo's text).
std::vector<std::string> parseCpuFeatures(std::string_view cpuinfo);

// This machine's: parseCpuFeatures of /proc/cpuinfo, read once.
const std::vector<std::string> &hostCpuFeatures();

// OK when every feature of `required` (LLVM names) is among `available`;
// else an error naming `what` and the first missing feature.
absl::Status checkCpuFeatures(std::span<const std::string> required,
                              std::span<const std::string> available,
                              std::string_view what);

// Where Linux places one logical CPU: its package and its core there
// (/sys/devices/system/cpu/cpuN/topology).
struct CpuPlace {
  int cpu = 0, package = 0, core = 0;
};

// The physical cores of `cpus`: each core's logical CPUs (its SMT
// siblings), lowest first, the cores in the order of their lowest CPU.
std::vector<std::vector<int>> groupCores(std::span<const CpuPlace> cpus);

// This process's cores, read once: groupCores of the CPUs it may run on
// (sched_getaffinity), placed as Linux says (a CPU it does not place is a
// core of its own). Never empty.
const std::vector<std::vector<int>> &hostCores();

// The logical CPUs `threads` threads are pinned to, thread t to cpus[t]:
// the first CPU of each core, then the cores' second ones, and so on, so
// that threads share a core only when there are more threads than cores.
std::vector<int> pinningOrder(const std::vector<std::vector<int>> &cores,
                              int threads);

} // namespace kf
