// What this CPU can run, as the runtime sees it without LLVM: the features
// of kf/runtime/cpu_features.def that Linux lists for it in /proc/cpuinfo
// (which it lists only where the kernel enables them, AVX-512's state
// included), by their LLVM names.
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

} // namespace kf
