#include "kf/runtime/host_cpu.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <map>
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

std::vector<std::vector<int>> groupCores(std::span<const CpuPlace> cpus) {
  std::map<std::pair<int, int>, std::vector<int>> byCore;
  for (const CpuPlace &place : cpus)
    byCore[{place.package, place.core}].push_back(place.cpu);
  std::vector<std::vector<int>> cores;
  for (auto &[key, siblings] : byCore) {
    std::sort(siblings.begin(), siblings.end());
    cores.push_back(std::move(siblings));
  }
  std::sort(cores.begin(), cores.end());
  return cores;
}

const std::vector<std::vector<int>> &hostCores() {
  static const std::vector<std::vector<int>> cores = [] {
    std::vector<CpuPlace> cpus;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
      CPU_SET(0, &allowed);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed))
        continue;
      std::string dir =
          absl::StrCat("/sys/devices/system/cpu/cpu", cpu, "/topology/");
      CpuPlace place{cpu, -1, -cpu - 1}; // a core of its own, unless placed
      std::ifstream package(dir + "physical_package_id"), core(dir + "core_id");
      int p = 0, c = 0;
      if (package >> p && core >> c)
        place = {cpu, p, c};
      cpus.push_back(place);
    }
    return groupCores(cpus);
  }();
  return cores;
}

std::vector<int> pinningOrder(const std::vector<std::vector<int>> &cores,
                              int threads) {
  std::vector<int> cpus;
  size_t widest = 0;
  for (const std::vector<int> &core : cores)
    widest = std::max(widest, core.size());
  for (size_t sibling = 0; sibling < widest; ++sibling)
    for (const std::vector<int> &core : cores)
      if (sibling < core.size())
        cpus.push_back(core[sibling]);
  std::vector<int> order;
  for (int t = 0; t < threads && !cpus.empty(); ++t)
    order.push_back(cpus[static_cast<size_t>(t) % cpus.size()]);
  return order;
}

} // namespace kf
