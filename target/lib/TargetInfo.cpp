//===- TargetInfo.cpp - Named targets and feature sets --------------------===//

#include "kf/Target/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace kf::target;
using llvm::StringRef;

namespace {

struct FeatureRow {
  Feature feature;
  StringRef name;
  Arch arch;
};

constexpr FeatureRow kFeatures[] = {
#define KF_FEATURE(E, name, cpuinfo, arch) {Feature::E, name, Arch::arch},
#include "kf/runtime/cpu_features.def"
};

struct NamedTargetRow {
  StringRef name;
  Arch arch;
  StringRef triple;
  StringRef cpu;
  StringRef features;
  uint64_t l1dKiB, l2KiB, l3KiB;
  unsigned cores;
};

constexpr NamedTargetRow kNamedTargets[] = {
#define KF_TARGET(name, arch, triple, cpu, features, l1d, l2, l3, cores)       \
  {name, Arch::arch, triple, cpu, features, l1d, l2, l3, cores},
#include "kf/Target/NamedTargets.def"
};

const FeatureRow &row(Feature f) { return kFeatures[static_cast<size_t>(f)]; }

std::string formatBytes(uint64_t bytes) {
  if (bytes == 0)
    return "none";
  if (bytes % (1024 * 1024) == 0)
    return (llvm::Twine(bytes / (1024 * 1024)) + " MiB").str();
  if (bytes % 1024 == 0)
    return (llvm::Twine(bytes / 1024) + " KiB").str();
  return (llvm::Twine(bytes) + " B").str();
}

} // namespace

StringRef kf::target::getArchName(Arch arch) {
  return arch == Arch::X86_64 ? "x86_64" : "aarch64";
}

StringRef kf::target::getFeatureName(Feature f) { return row(f).name; }

Arch kf::target::getFeatureArch(Feature f) { return row(f).arch; }

std::optional<Feature> kf::target::lookupFeature(StringRef llvmName) {
  for (const FeatureRow &r : kFeatures)
    if (r.name == llvmName)
      return r.feature;
  return std::nullopt;
}

llvm::ArrayRef<Feature> kf::target::allFeatures() {
  static const auto all = [] {
    llvm::SmallVector<Feature> v;
    for (const FeatureRow &r : kFeatures)
      v.push_back(r.feature);
    return v;
  }();
  return all;
}

std::string TargetInfo::getLLVMFeatureString() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(
      getFeatureNames(), os, [&](StringRef n) { os << '+' << n; }, ",");
  return out;
}

llvm::SmallVector<StringRef> TargetInfo::getFeatureNames() const {
  llvm::SmallVector<StringRef> names;
  for (Feature f : allFeatures())
    if (has(f))
      names.push_back(getFeatureName(f));
  return names;
}

void TargetInfo::print(llvm::raw_ostream &os) const {
  os << "target:   " << name << "\n";
  os << "arch:     " << getArchName(arch) << "\n";
  os << "triple:   " << triple << "\n";
  os << "cpu:      " << cpu << "\n";
  os << "features:";
  for (StringRef n : getFeatureNames())
    os << " +" << n;
  os << "\n";
  os << "l1d:      " << formatBytes(l1dBytes) << "\n";
  os << "l2:       " << formatBytes(l2Bytes) << "\n";
  os << "l3:       " << formatBytes(l3Bytes) << "\n";
  os << "cores:    " << cores << "\n";
}

llvm::ArrayRef<StringRef> kf::target::getNamedTargets() {
  static const auto names = [] {
    llvm::SmallVector<StringRef> v;
    for (const NamedTargetRow &r : kNamedTargets)
      v.push_back(r.name);
    return v;
  }();
  return names;
}

llvm::Expected<FeatureSet> kf::target::parseFeatures(StringRef list,
                                                     Arch arch) {
  FeatureSet set;
  llvm::SmallVector<StringRef> items;
  list.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    StringRef name = item.trim().ltrim('+');
    std::optional<Feature> f = lookupFeature(name);
    if (!f)
      return llvm::createStringError("unknown ISA feature '" + name + "'");
    if (getFeatureArch(*f) != arch)
      return llvm::createStringError("ISA feature '" + name + "' is not an " +
                                     getArchName(arch) + " feature");
    set.set(static_cast<size_t>(*f));
  }
  return set;
}

llvm::Expected<TargetInfo> kf::target::lookupTarget(StringRef name) {
  if (name == "host")
    return detectHost();
  for (const NamedTargetRow &r : kNamedTargets) {
    if (r.name != name)
      continue;
    llvm::Expected<FeatureSet> features = parseFeatures(r.features, r.arch);
    if (!features)
      return features.takeError();
    TargetInfo t;
    t.name = r.name.str();
    t.arch = r.arch;
    t.triple = r.triple.str();
    t.cpu = r.cpu.str();
    t.features = *features;
    t.l1dBytes = r.l1dKiB * 1024;
    t.l2Bytes = r.l2KiB * 1024;
    t.l3Bytes = r.l3KiB * 1024;
    t.cores = r.cores;
    return t;
  }
  return llvm::createStringError("unknown target '" + name +
                                 "' (expected host or one of: " +
                                 llvm::join(getNamedTargets(), ", ") + ")");
}
