#include "machine.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kf::bench {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// The first line of a sysfs file, or "" when there is none.
std::string readLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "480 MiB", or KiB for what is not a whole number of MiB.
std::string binarySize(uint64_t bytes) {
  return bytes % kMiB == 0 ? absl::StrCat(bytes / kMiB, " MiB")
                           : absl::StrCat(bytes / 1024, " KiB");
}

} // namespace

bool cpuHasAmx() {
#if defined(__x86_64__)
  // Leaf 7, sub-leaf 0: EDX bit 25 is AMX-INT8.
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 25 & 1);
#else
  return false;
#endif
}

uint64_t l3CacheBytes() {
  // sysfs lists cpu0's caches as index0, index1, ...; sizes read "491520K".
  for (int i = 0; i < 16; ++i) {
    std::string dir =
        absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", i, "/");
    std::string level = readLine(dir + "level");
    if (level.empty())
      break;
    if (level != "3")
      continue;
    const std::string text = readLine(dir + "size");
    absl::string_view size = text;
    uint64_t unit = 1;
    if (absl::ConsumeSuffix(&size, "K"))
      unit = 1024;
    else if (absl::ConsumeSuffix(&size, "M"))
      unit = kMiB;
    uint64_t value;
    if (absl::SimpleAtoi(size, &value) && value > 0)
      return value * unit;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  long size = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (size > 0)
    return static_cast<uint64_t>(size);
#endif
  return 0;
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

LoadMeter::Sample LoadMeter::sample() {
  Sample s;
  s.wall = std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
               .count();
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return s;
  s.own = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
          usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
  // in clock ticks; guest time is already counted in user.
  std::ifstream in("/proc/stat");
  std::string label;
  uint64_t field[8] = {};
  in >> label;
  for (uint64_t &f : field)
    in >> f;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (!in || label != "cpu" || ticks <= 0)
    return s;
  const uint64_t busy =
      field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
  s.busy = static_cast<double>(busy) / ticks;
  s.valid = true;
  return s;
}

void LoadMeter::start() { start_ = sample(); }

double LoadMeter::stop() const {
  Sample end = sample();
  if (!start_.valid || !end.valid || end.wall <= start_.wall)
    return 0;
  double other = (end.busy - start_.busy) - (end.own - start_.own);
  // /proc/stat counts in clock ticks (10 ms), so over a short interval one
  // tick reads as many CPUs: no more can be busy than there are.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return std::clamp(other / (end.wall - start_.wall), 0.0,
                    cpus > 0 ? double(cpus) : 1.0);
}

ColdSet defaultColdSet(uint64_t l3Bytes) {
  if (l3Bytes == 0)
    return {kMaxColdSet, "L3 size unknown"};
  std::string l3 = absl::StrCat("L3 of ", binarySize(l3Bytes));
  if (4 * l3Bytes <= kMaxColdSet)
    return {4 * l3Bytes, absl::StrCat("4 x ", l3)};
  return {kMaxColdSet, absl::StrCat("the cap; 4 x ", l3, " would be ",
                                    binarySize(4 * l3Bytes))};
}

int64_t copiesIn(uint64_t setBytes, uint64_t matrixBytes) {
  if (matrixBytes == 0)
    return 1;
  return static_cast<int64_t>(std::max<uint64_t>(1, setBytes / matrixBytes));
}

} // namespace kf::bench
