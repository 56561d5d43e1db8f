//===- TargetInfo.h - What the compiler knows about the CPU it targets ----===//
//
// A TargetInfo is plain data: ISA features, cache sizes and core count, either
// read off the host or taken from a named target (NamedTargets.def), so that
// every pass can be run and lit-tested for any ISA on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TARGET_TARGETINFO_H
#define KF_TARGET_TARGETINFO_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kf::target {

enum class Arch { X86_64, AArch64 };

enum class Feature : unsigned {
#define KF_FEATURE(E, name, cpuinfo, arch) E,
#include "kf/runtime/cpu_features.def"
  NumFeatures
};

using FeatureSet = std::bitset<static_cast<size_t>(Feature::NumFeatures)>;

llvm::StringRef getArchName(Arch arch);
/// LLVM's name of `f`, e.g. "avx512vnni".
llvm::StringRef getFeatureName(Feature f);
Arch getFeatureArch(Feature f);
std::optional<Feature> lookupFeature(llvm::StringRef llvmName);
/// All features, in kf/runtime/cpu_features.def order.
llvm::ArrayRef<Feature> allFeatures();

struct TargetInfo {
  std::string name; ///< "znver5", or "host" for a detected CPU
  Arch arch = Arch::X86_64;
  std::string triple; ///< LLVM target triple
  std::string cpu;    ///< LLVM CPU name
  FeatureSet features;
  uint64_t l1dBytes = 0; ///< per core
  uint64_t l2Bytes = 0;  ///< per core
  uint64_t l3Bytes = 0;  ///< per shared slice; 0 if there is none
  unsigned cores = 0;

  bool has(Feature f) const { return features.test(static_cast<size_t>(f)); }
  /// The features as LLVM's target-features string: "+sse4.2,+avx2,...".
  std::string getLLVMFeatureString() const;
  llvm::SmallVector<llvm::StringRef> getFeatureNames() const;
  void print(llvm::raw_ostream &os) const;
};

/// Names of the targets usable on any host, in NamedTargets.def order.
llvm::ArrayRef<llvm::StringRef> getNamedTargets();

/// The named target `name`, or the detected host for "host".
llvm::Expected<TargetInfo> lookupTarget(llvm::StringRef name);

/// Features set from a comma-separated list of LLVM feature names, each
/// optionally prefixed by '+'. Fails on a name not in
/// kf/runtime/cpu_features.def or a feature of the wrong architecture.
llvm::Expected<FeatureSet> parseFeatures(llvm::StringRef list, Arch arch);

/// Reads the CPU this process runs on: LLVM's CPU name and feature map, cache
/// sizes from sysfs (cpuid when sysfs has none), and the CPUs this process may
/// run on.
TargetInfo detectHost();

} // namespace kf::target

#endif // KF_TARGET_TARGETINFO_H
