//===- KfAttrs.cpp - kf attributes ----------------------------------------===//

#include "kf/Dialect/KfDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::kf;
namespace target = ::kf::target;

namespace {

/// The architecture a triple names, if it is one Kernelforge generates code
/// for.
std::optional<target::Arch> archOfTriple(StringRef triple) {
  switch (llvm::Triple(triple).getArch()) {
  case llvm::Triple::x86_64:
    return target::Arch::X86_64;
  case llvm::Triple::aarch64:
    return target::Arch::AArch64;
  default:
    return std::nullopt;
  }
}

} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, StringRef triple,
                                 StringRef cpu, StringRef features,
                                 uint64_t l1d, uint64_t l2, uint64_t l3,
                                 unsigned cores) {
  std::optional<target::Arch> arch = archOfTriple(triple);
  if (!arch)
    return emitError() << "#kf.target '" << name << "': triple '" << triple
                       << "' is not x86_64 or aarch64";
  if (cpu.empty())
    return emitError() << "#kf.target '" << name << "': empty cpu name";
  llvm::Expected<target::FeatureSet> parsed =
      target::parseFeatures(features, *arch);
  if (!parsed)
    return emitError() << "#kf.target '" << name
                       << "': " << llvm::toString(parsed.takeError());
  if (l1d == 0 || l2 == 0)
    return emitError() << "#kf.target '" << name
                       << "': l1d and l2 must be non-zero bytes";
  if (cores == 0)
    return emitError() << "#kf.target '" << name
                       << "': cores must be at least 1";
  return success();
}

TargetAttr TargetAttr::get(MLIRContext *context,
                           const target::TargetInfo &info) {
  return get(context, info.name, info.triple, info.cpu,
             info.getLLVMFeatureString(), info.l1dBytes, info.l2Bytes,
             info.l3Bytes, info.cores);
}

target::TargetInfo TargetAttr::getTargetInfo() const {
  target::TargetInfo info;
  info.name = getName().str();
  info.triple = getTriple().str();
  info.arch = *archOfTriple(getTriple());
  info.cpu = getCpu().str();
  info.features =
      llvm::cantFail(target::parseFeatures(getFeatures(), info.arch));
  info.l1dBytes = getL1d();
  info.l2Bytes = getL2();
  info.l3Bytes = getL3();
  info.cores = getCores();
  return info;
}

TargetAttr TargetAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto attr = op->getAttrOfType<TargetAttr>(KfDialect::kTargetAttrName))
      return attr;
  return {};
}

FailureOr<llvm::APFloat> mlir::kf::parseDouble(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

LogicalResult RopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t dim, llvm::APFloat baseValue,
                               llvm::APFloat yarnValue,
                               llvm::APFloat betaFastValue,
                               llvm::APFloat betaSlowValue,
                               int64_t originalContext) {
  double base = baseValue.convertToDouble();
  double yarnFactor = yarnValue.convertToDouble();
  double betaFast = betaFastValue.convertToDouble();
  double betaSlow = betaSlowValue.convertToDouble();
  if (dim <= 0 || dim % 2 != 0)
    return emitError() << "#kf.rope: dim must be positive and even, got "
                       << dim;
  if (!(base > 1))
    return emitError() << "#kf.rope: base must exceed 1, got " << base;
  if (yarnFactor == 0 && betaFast == 0 && betaSlow == 0 && originalContext == 0)
    return success();
  if (!(yarnFactor > 1) || !(betaFast > betaSlow) || !(betaSlow > 0) ||
      originalContext <= 0)
    return emitError() << "#kf.rope: YaRN needs yarn_factor > 1, beta_fast > "
                          "beta_slow > 0 and original_context > 0, got "
                       << yarnFactor << ", " << betaFast << " > " << betaSlow
                       << " and " << originalContext;
  return success();
}
