//===- kf-compile.cpp - Compile a kf graph for a target CPU ---------------===//
//
// kf-compile [input.mlir] --target=NAME [-o out.mlir]
//   runs the compilation pipeline for the target and writes the result.
// kf-compile --print-target[=NAME]   the target description (host by default)
// kf-compile --list-targets          the named targets usable on any host
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/InitAll.h"
#include "kf/Target/TargetInfo.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
namespace target = kf::target;

static cl::OptionCategory category("kf-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("file"),
                                           cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    targetName("target",
               cl::desc("Target CPU: 'host' or a named target "
                        "(see --list-targets)"),
               cl::init("host"), cl::cat(category));
static cl::opt<std::string>
    printTarget("print-target",
                cl::desc("Print a target description and exit "
                         "(the host when no name is given)"),
                cl::value_desc("name"), cl::ValueOptional, cl::cat(category));
static cl::opt<bool> listTargets("list-targets",
                                 cl::desc("List the named targets and exit"),
                                 cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kf-compile") << message << "\n";
  return 1;
}

static int runPrintTarget() {
  llvm::StringRef name =
      printTarget.empty() ? llvm::StringRef("host") : printTarget;
  llvm::Expected<target::TargetInfo> info = target::lookupTarget(name);
  if (!info)
    return fail(llvm::toString(info.takeError()));
  info->print(llvm::outs());
  return 0;
}

static int runListTargets() {
  for (llvm::StringRef name : target::getNamedTargets()) {
    target::TargetInfo info = llvm::cantFail(target::lookupTarget(name));
    llvm::outs() << llvm::left_justify(name, 16) << " "
                 << llvm::left_justify(target::getArchName(info.arch), 8) << " "
                 << info.getLLVMFeatureString() << "\n";
  }
  return 0;
}

static int runCompile() {
  mlir::DialectRegistry registry;
  mlir::kf::registerAllDialects(registry);
  mlir::MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  mlir::kf::KfSetTargetOptions targetOptions;
  targetOptions.targetName = targetName;
  pm.addPass(mlir::kf::createKfSetTarget(targetOptions));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*module)))
    return 1;

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Kernelforge compiler: compiles kf graphs into plans for one CPU\n");
  if (listTargets)
    return runListTargets();
  if (printTarget.getNumOccurrences())
    return runPrintTarget();
  return runCompile();
}
