//===- Translate.cpp - Kernels to LLVM IR, objects and assembly -----------===//
//
// The one translation unit holding MLIR's conversion passes, the LLVM IR
// export and LLVM's target machinery (their headers are the slow ones to
// compile). Jit.cpp adds ORC on top.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternals.h"

#include "kf/Codegen/MatmulEmitter.h"
#include "kf/Codegen/QuantizeKernel.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <mutex>

using namespace mlir;

namespace kf::codegen {

namespace {

void initializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const target::TargetInfo &target) {
  initializeLLVMTargets();
  llvm::Triple triple(target.triple);
  std::string error;
  const llvm::Target *backend =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!backend)
    return llvm::createStringError("target '" + target.name + "': triple '" +
                                   target.triple +
                                   "' has no LLVM backend: " + error);
  std::unique_ptr<llvm::TargetMachine> machine(backend->createTargetMachine(
      triple, target.cpu, target.getLLVMFeatureString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("target '" + target.name +
                                   "': LLVM cannot build a machine for CPU '" +
                                   target.cpu + "'");
  return machine;
}

llvm::Expected<OwningOpRef<ModuleOp>>
buildKernelModule(MLIRContext &context, const KernelSet &kernels,
                  const target::TargetInfo &target) {
  loadKernelDialects(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  llvm::StringSet<> names;
  auto twice = [&](const std::string &name,
                   const std::string &what) -> llvm::Error {
    if (names.insert(name).second)
      return llvm::Error::success();
    return llvm::createStringError(what + " is requested twice");
  };
  for (const MatmulKernelSpec &spec : kernels.matmuls) {
    if (llvm::Error err =
            twice(spec.getSymbolName(), "matmul kernel " + spec.describe()))
      return std::move(err);
    llvm::Expected<func::FuncOp> fn = buildMatmulKernel(*module, spec, target);
    if (!fn)
      return fn.takeError();
  }
  for (const QuantizeKernelSpec &spec : kernels.quantizers) {
    if (llvm::Error err = twice(spec.getSymbolName(), spec.describe()))
      return std::move(err);
    llvm::Expected<func::FuncOp> fn =
        buildQuantizeKernel(*module, spec, target);
    if (!fn)
      return fn.takeError();
  }
  return module;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
translateKernels(ModuleOp module, llvm::LLVMContext &llvmContext,
                 const target::TargetInfo &target) {
  MLIRContext *context = module.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context->appendDialectRegistry(registry);

  // The first diagnostic names what failed; later ones only repeat it.
  std::string diagnostic;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &d) {
    if (diagnostic.empty())
      diagnostic = d.str();
    return success();
  });

  PassManager pm(context);
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(module)))
    return llvm::createStringError("lowering kernels to the LLVM dialect: " +
                                   diagnostic);

  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "kf_kernels");
  if (!llvmModule)
    return llvm::createStringError("translating kernels to LLVM IR: " +
                                   diagnostic);

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  optimize(*llvmModule, **machine);
  return llvmModule;
}

namespace {

/// The kernels of `module` (built by the emitters; it is lowered in place)
/// compiled for `target` into an object or assembly file's bytes.
llvm::Expected<llvm::SmallString<0>> emitCode(ModuleOp module,
                                              const target::TargetInfo &target,
                                              llvm::CodeGenFileType fileType) {
  llvm::LLVMContext llvmContext;
  llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateKernels(module, llvmContext, target);
  if (!llvmModule)
    return llvmModule.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  llvm::SmallString<0> code;
  llvm::raw_svector_ostream os(code);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr, fileType))
    return llvm::createStringError("target '" + target.name +
                                   "': LLVM cannot emit this file type");
  codegen.run(**llvmModule);
  return code;
}

llvm::Expected<llvm::SmallString<0>> emitCode(const KernelSet &kernels,
                                              const target::TargetInfo &target,
                                              llvm::CodeGenFileType fileType) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildKernelModule(context, kernels, target);
  if (!module)
    return module.takeError();
  return emitCode(**module, target, fileType);
}

/// Writes `code` to `path` through a temporary file renamed over it, so that
/// a failure leaves no partial file.
llvm::Error writeFile(llvm::StringRef path, llvm::StringRef code) {
  llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << code;
    return llvm::Error::success();
  });
  if (!err)
    return llvm::Error::success();
  // The error names the file: "'<path>': <reason>".
  return llvm::createStringError("cannot write " +
                                 llvm::toString(std::move(err)));
}

} // namespace

llvm::Error emitObject(const KernelSet &kernels,
                       const target::TargetInfo &target, llvm::StringRef path) {
  llvm::Expected<llvm::SmallString<0>> code =
      emitCode(kernels, target, llvm::CodeGenFileType::ObjectFile);
  if (!code)
    return code.takeError();
  return writeFile(path, *code);
}

llvm::Error emitObject(ModuleOp kernels, const target::TargetInfo &target,
                       llvm::StringRef path) {
  OwningOpRef<ModuleOp> copy = cloneKernelModule(kernels, target.cpu);
  llvm::Expected<llvm::SmallString<0>> code =
      emitCode(*copy, target, llvm::CodeGenFileType::ObjectFile);
  if (!code)
    return code.takeError();
  return writeFile(path, *code);
}

OwningOpRef<ModuleOp> cloneKernelModule(ModuleOp kernels, llvm::StringRef cpu) {
  OwningOpRef<ModuleOp> copy = kernels.clone();
  // A top-level module has no name; the symbols stay the functions'.
  copy->setSymNameAttr(nullptr);
  StringAttr cpuAttr = StringAttr::get(kernels.getContext(), cpu);
  copy->walk([&](func::FuncOp fn) { fn->setAttr("target_cpu", cpuAttr); });
  return copy;
}

llvm::Error emitObject(llvm::ArrayRef<MatmulKernelSpec> matmuls,
                       const target::TargetInfo &target, llvm::StringRef path) {
  return emitObject(KernelSet{matmuls.vec(), {}}, target, path);
}

llvm::Expected<std::string> emitAssembly(const KernelSet &kernels,
                                         const target::TargetInfo &target) {
  llvm::Expected<llvm::SmallString<0>> code =
      emitCode(kernels, target, llvm::CodeGenFileType::AssemblyFile);
  if (!code)
    return code.takeError();
  return std::string(code->str());
}

llvm::Expected<std::string>
emitAssembly(llvm::ArrayRef<MatmulKernelSpec> matmuls,
             const target::TargetInfo &target) {
  return emitAssembly(KernelSet{matmuls.vec(), {}}, target);
}

llvm::Expected<std::string> emitAssembly(ModuleOp kernels,
                                         const target::TargetInfo &target) {
  OwningOpRef<ModuleOp> copy = cloneKernelModule(kernels, target.cpu);
  llvm::Expected<llvm::SmallString<0>> code =
      emitCode(*copy, target, llvm::CodeGenFileType::AssemblyFile);
  if (!code)
    return code.takeError();
  return std::string(code->str());
}

} // namespace kf::codegen
