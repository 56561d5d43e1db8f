//===- Jit.cpp - Kernels compiled in process with ORC's LLJIT -------------===//

#include "CompilerInternals.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

namespace {

const target::TargetInfo &host() {
  static const target::TargetInfo info = target::detectHost();
  return info;
}

/// The CPU to generate JIT code for. A CPU name implies more ISA extensions
/// than the features a TargetInfo lists (LLVM uses GFNI for byte shifts, for
/// one), so a specific CPU other than this one could yield instructions this
/// machine lacks. The host's own CPU and the generic ISA levels are kept;
/// any other CPU is replaced by the host's, which changes tuning only: the
/// kernels' ISA was decided from the target's features, which
/// checkRunsOnHost has found on this machine.
std::string jitCpu(const target::TargetInfo &target) {
  llvm::StringRef cpu = target.cpu;
  if (cpu == host().cpu || cpu == "generic" || cpu.starts_with("x86-64"))
    return target.cpu;
  return host().cpu;
}

} // namespace

llvm::Error checkRunsOnHost(const target::TargetInfo &target) {
  if (target.arch != host().arch)
    return llvm::createStringError(llvm::formatv(
        "cannot run code for target '{0}' ({1}) on this {2} machine",
        target.name, target::getArchName(target.arch),
        target::getArchName(host().arch)));
  for (target::Feature f : target::allFeatures())
    if (target.has(f) && !host().has(f))
      return llvm::createStringError(
          llvm::formatv("cannot run code for target '{0}' on this machine: "
                        "its CPU lacks '{1}'",
                        target.name, target::getFeatureName(f)));
  return llvm::Error::success();
}

namespace {

/// One JIT holding the kernels of `module`, which was built for `target`
/// with the CPU jitCpu gives (translation lowers it in place).
llvm::Expected<std::shared_ptr<llvm::orc::LLJIT>>
jitModule(ModuleOp module, const target::TargetInfo &target) {
  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateKernels(module, *llvmContext, target);
  if (!llvmModule)
    return llvmModule.takeError();

  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(target.triple)};
  machine.setCPU(target.cpu);
  llvm::SmallVector<llvm::StringRef> features;
  std::string featureString = target.getLLVMFeatureString();
  llvm::SplitString(featureString, features, ",");
  machine.addFeatures(
      std::vector<std::string>(features.begin(), features.end()));
  machine.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(machine))
          .create();
  if (!jit)
    return jit.takeError();
  std::shared_ptr<llvm::orc::LLJIT> owner = std::move(*jit);
  if (llvm::Error err = owner->addIRModule(llvm::orc::ThreadSafeModule(
          std::move(*llvmModule), std::move(llvmContext))))
    return std::move(err);
  return owner;
}

/// `requested` with the CPU to generate JIT code for, once it is known to
/// run here.
llvm::Expected<target::TargetInfo>
getJitTarget(const target::TargetInfo &requested) {
  if (llvm::Error err = checkRunsOnHost(requested))
    return std::move(err);
  target::TargetInfo target = requested;
  target.cpu = jitCpu(requested);
  return target;
}

/// One JIT holding every kernel of the set.
llvm::Expected<std::shared_ptr<llvm::orc::LLJIT>>
jitKernelSet(const KernelSet &kernels, const target::TargetInfo &requested) {
  llvm::Expected<target::TargetInfo> target = getJitTarget(requested);
  if (!target)
    return target.takeError();
  // Verify every kernel against the target before any IR exists, and
  // translate with a context that starts no threads.
  MLIRContext context(MLIRContext::Threading::DISABLED);
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildKernelModule(context, kernels, *target);
  if (!module)
    return module.takeError();
  return jitModule(**module, *target);
}

template <typename Fn>
llvm::Expected<Fn> lookup(llvm::orc::LLJIT &jit, const std::string &name) {
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit.lookup(name);
  if (!address)
    return address.takeError();
  return address->toPtr<Fn>();
}

} // namespace

llvm::Expected<std::vector<JitKernel>>
jitMatmuls(llvm::ArrayRef<MatmulKernelSpec> specs,
           const target::TargetInfo &target) {
  llvm::Expected<std::shared_ptr<llvm::orc::LLJIT>> jit =
      jitKernelSet(KernelSet{specs.vec(), {}}, target);
  if (!jit)
    return jit.takeError();
  std::vector<JitKernel> kernels;
  for (const MatmulKernelSpec &spec : specs) {
    llvm::Expected<MatmulKernelFn> fn =
        lookup<MatmulKernelFn>(**jit, spec.getSymbolName());
    if (!fn)
      return fn.takeError();
    kernels.push_back({*fn, spec, spec.getWeightLayout(), *jit});
  }
  return kernels;
}

llvm::Expected<JitKernel> jitMatmul(const MatmulKernelSpec &spec,
                                    const target::TargetInfo &target) {
  llvm::Expected<std::vector<JitKernel>> kernels = jitMatmuls(spec, target);
  if (!kernels)
    return kernels.takeError();
  return std::move(kernels->front());
}

llvm::Expected<JitKernelModule>
jitKernelModule(ModuleOp kernels, const target::TargetInfo &requested) {
  llvm::Expected<target::TargetInfo> target = getJitTarget(requested);
  if (!target)
    return target.takeError();
  OwningOpRef<ModuleOp> copy = cloneKernelModule(kernels, target->cpu);
  llvm::Expected<std::shared_ptr<llvm::orc::LLJIT>> jit =
      jitModule(*copy, *target);
  if (!jit)
    return jit.takeError();
  return JitKernelModule(std::move(*jit));
}

llvm::Expected<void *> JitKernelModule::lookup(llvm::StringRef symbol) const {
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(symbol);
  if (!address)
    return llvm::createStringError("no compiled kernel '" + symbol +
                                   "': " + llvm::toString(address.takeError()));
  return address->toPtr<void *>();
}

llvm::Expected<JitQuantizer> jitQuantizer(const QuantizeKernelSpec &spec,
                                          const target::TargetInfo &target) {
  llvm::Expected<std::shared_ptr<llvm::orc::LLJIT>> jit =
      jitKernelSet(KernelSet{{}, {spec}}, target);
  if (!jit)
    return jit.takeError();
  llvm::Expected<QuantizeKernelFn> fn =
      lookup<QuantizeKernelFn>(**jit, spec.getSymbolName());
  if (!fn)
    return fn.takeError();
  return JitQuantizer{*fn, spec, *jit};
}

} // namespace kf::codegen
