#include "machine.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kf::bench {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// The first line of a sysfs file, or "" when there is none.
std::string read_line(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "480 MiB", or KiB for what is not a whole number of MiB.
std::string binary_size(uint64_t bytes) {
  return bytes % kMiB == 0 ? absl::StrCat(bytes / kMiB, " MiB")
                           : absl::StrCat(bytes / 1024, " KiB");
}

} // namespace

uint64_t l3_cache_bytes() {
  // sysfs lists cpu0's caches as index0, index1, ...; sizes read "491520K".
  for (int i = 0; i < 16; ++i) {
    std::string dir =
        absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", i, "/");
    std::string level = read_line(dir + "level");
    if (level.empty())
      break;
    if (level != "3")
      continue;
    const std::string text = read_line(dir + "size");
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

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

ColdSet default_cold_set(uint64_t l3_bytes) {
  if (l3_bytes == 0)
    return {kMaxColdSet, "L3 size unknown"};
  std::string l3 = absl::StrCat("L3 of ", binary_size(l3_bytes));
  if (4 * l3_bytes <= kMaxColdSet)
    return {4 * l3_bytes, absl::StrCat("4 x ", l3)};
  return {kMaxColdSet, absl::StrCat("the cap; 4 x ", l3, " would be ",
                                    binary_size(4 * l3_bytes))};
}

int64_t copies_in(uint64_t set_bytes, uint64_t matrix_bytes) {
  if (matrix_bytes == 0)
    return 1;
  return static_cast<int64_t>(std::max<uint64_t>(1, set_bytes / matrix_bytes));
}

} // namespace kf::bench
