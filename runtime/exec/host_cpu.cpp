#include "kf/runtime/host_cpu.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kf/runtime/absl_compat.h"

namespace kf {

namespace {

struct FeatureRow {
  std::string_view llvmName;
  std::string_view cpuinfoName;
};

constexpr FeatureRow kFeatures[] = {
#define KF_FEATURE(E, name, cpuinfo, arch) {name, cpuinfo},
#include "kf/runtime/cpu_features.def"
};

} // namespace

std::vector<std::string> parseCpuFeatures(std::string_view cpuinfo) {
  // x86 lists "flags", AArch64 "Features"; the first processor's line is
  // the machine's (Linux lists the features every CPU has).
  std::vector<std::string> flags;
  for (absl::string_view line : absl::StrSplit(toAbsl(cpuinfo), '\n')) {
    if (!absl::StartsWith(line, "flags") && !absl::StartsWith(line, "Features"))
      continue;
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos)
      continue;
    for (absl::string_view flag :
         absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty()))
      flags.emplace_back(flag);
    break;
  }
  std::vector<std::string> features;
  for (const FeatureRow &row : kFeatures)
    if (std::find(flags.begin(), flags.end(), row.cpuinfoName) != flags.end())
      features.emplace_back(row.llvmName);
  return features;
}

const std::vector<std::string> &hostCpuFeatures() {
  static const std::vector<std::string> features = [] {
    std::ifstream in("/proc/cpuinfo");
    std::stringstream text;
    text << in.rdbuf();
    return parseCpuFeatures(text.str());
  }();
  return features;
}

absl::Status checkCpuFeatures(std::span<const std::string> required,
                              std::span<const std::string> available,
                              std::string_view what) {
  for (const std::string &feature : required)
    if (std::find(available.begin(), available.end(), feature) ==
        available.end())
      return absl::FailedPreconditionError(absl::StrCat(
          toAbsl(what), ": its code uses ", feature, ", which this CPU lacks"));
  return absl::OkStatus();
}

} // namespace kf
