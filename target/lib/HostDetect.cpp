//===- HostDetect.cpp - Read the ISA, caches and cores of this machine ----===//

#include "kf/Target/TargetInfo.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <sched.h>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace kf::target;
using llvm::StringRef;

namespace {

std::optional<std::string> readSysfs(const llvm::Twine &path) {
  auto buf = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buf)
    return std::nullopt;
  return (*buf)->getBuffer().trim().str();
}

/// Parses a sysfs cache size such as "48K" or "32768K" or "1M".
uint64_t parseCacheSize(StringRef s) {
  uint64_t mult = 1;
  if (s.consume_back("K"))
    mult = 1024;
  else if (s.consume_back("M"))
    mult = 1024 * 1024;
  uint64_t v = 0;
  if (s.getAsInteger(10, v))
    return 0;
  return v * mult;
}

/// Data/unified cache sizes of cpu0 by level, from /sys/devices/system/cpu.
void readSysfsCaches(TargetInfo &t) {
  for (unsigned i = 0; i < 16; ++i) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::optional<std::string> level = readSysfs(dir + "/level");
    if (!level)
      break;
    std::optional<std::string> type = readSysfs(dir + "/type");
    std::optional<std::string> size = readSysfs(dir + "/size");
    if (!type || !size || *type == "Instruction")
      continue;
    uint64_t bytes = parseCacheSize(*size);
    if (*level == "1")
      t.l1dBytes = bytes;
    else if (*level == "2")
      t.l2Bytes = bytes;
    else if (*level == "3")
      t.l3Bytes = bytes;
  }
}

#if defined(__x86_64__)
/// Deterministic cache parameters: leaf 4 on Intel, 0x8000001D on AMD (same
/// layout).
void readCpuidCaches(TargetInfo &t) {
  unsigned a, b, c, d;
  unsigned leaf = 4;
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x8000001D) {
    __get_cpuid(0, &a, &b, &c, &d);
    if (b == 0x68747541) // "Auth"enticAMD
      leaf = 0x8000001D;
  }
  for (unsigned sub = 0; sub < 16; ++sub) {
    __cpuid_count(leaf, sub, a, b, c, d);
    unsigned type = a & 0x1f;
    if (type == 0)
      break;
    if (type == 2) // instruction cache
      continue;
    unsigned level = (a >> 5) & 0x7;
    uint64_t bytes = uint64_t((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) *
                     ((b & 0xfff) + 1) * (uint64_t(c) + 1);
    if (level == 1)
      t.l1dBytes = bytes;
    else if (level == 2)
      t.l2Bytes = bytes;
    else if (level == 3)
      t.l3Bytes = bytes;
  }
}
#endif

unsigned usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

TargetInfo kf::target::detectHost() {
  TargetInfo t;
  t.name = "host";
  llvm::Triple triple(llvm::sys::getProcessTriple());
  t.triple = triple.str();
  t.arch =
      triple.getArch() == llvm::Triple::aarch64 ? Arch::AArch64 : Arch::X86_64;
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  for (Feature f : allFeatures()) {
    if (getFeatureArch(f) != t.arch)
      continue;
    auto it = hostFeatures.find(getFeatureName(f));
    // LLVM reports no "neon" key on some AArch64 hosts: NEON is mandatory
    // there.
    bool present = it != hostFeatures.end() ? it->second : f == Feature::NEON;
    t.features.set(static_cast<size_t>(f), present);
  }
  readSysfsCaches(t);
#if defined(__x86_64__)
  if (t.l1dBytes == 0 || t.l2Bytes == 0)
    readCpuidCaches(t);
#endif
  t.cores = usableCpus();
  return t;
}
