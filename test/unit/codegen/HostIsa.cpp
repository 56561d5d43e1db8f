#include "HostIsa.h"

#include "TestTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace kf::codegen {

const target::TargetInfo &hostTarget() {
  static const target::TargetInfo info = [] {
    llvm::Expected<target::TargetInfo> host = target::lookupTarget("host");
    if (!host) {
      ADD_FAILURE() << llvm::toString(host.takeError());
      return target::TargetInfo();
    }
    return *host;
  }();
  return info;
}

target::TargetInfo isaTestTarget(KernelIsa isa) {
  if (hostTarget().arch == target::Arch::X86_64)
    switch (isa) {
    case KernelIsa::Scalar:
      return testTarget("x86-64-v2");
    case KernelIsa::Avx2:
      return testTarget("x86-64-v3");
    case KernelIsa::Avx512:
      return testTarget("x86-64-v4");
    default:
      break;
    }
  return hostTarget();
}

std::string whyHostCannotRun(KernelIsa isa) {
  const target::TargetInfo &host = hostTarget();
  llvm::SmallVector<llvm::StringRef> lacks;
  for (target::Feature f : getRequiredFeatures(isa)) {
    if (target::getFeatureArch(f) != host.arch)
      return ("its code is for " +
              target::getArchName(target::getFeatureArch(f)) +
              ", this machine is " + target::getArchName(host.arch))
          .str();
    if (!host.has(f))
      lacks.push_back(target::getFeatureName(f));
  }
  if (lacks.empty())
    return "";
  return "this CPU lacks " + llvm::join(lacks, ", ");
}

int64_t testRows(KernelIsa isa) {
  return isa == KernelIsa::Scalar ? 4 : getIsaRows(isa);
}

std::string isaParamName(const ::testing::TestParamInfo<KernelIsa> &info) {
  return getIsaName(info.param).str();
}

} // namespace kf::codegen
