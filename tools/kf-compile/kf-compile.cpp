//===- kf-compile.cpp - Compile a kf graph for a target CPU ---------------===//
//
// kf-compile [input.mlir] --target=NAME [-o out.mlir]
//   runs the compilation pipeline for the target and writes the result.
// kf-compile ... --emit=plan -o out.kfp (implied by an -o ending in .kfp)
//   the same, then every op to kernels and each function to a plan, all
//   written as one artifact the runtime loads (docs/engine.md, "Artifacts").
// kf-compile ... --emit=obj -o kernels.o | --emit=shared -o kernels.so
//   the same, and writes the kernels the plan calls as an object file or a
//   shared library.
// kf-compile -m model.gguf | --preset NAME [--recipe R] --emit=graph|stats
//   builds the model's graph (docs/graph.md) and prints it, or what its plan
//   for the target costs and which of its matmuls run compiled.
// kf-compile --print-target[=NAME]   the target description (host by default)
// kf-compile --list-targets          the named targets usable on any host
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/KernelCompiler.h"
#include "kf/Passes/InitAll.h"
#include "kf/Target/TargetInfo.h"
#include "kf/deepseek_v4/builder/graph_builder.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/tensor_formats.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/plan_file.h"
#include "kf/runtime/plan_weights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
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

static cl::opt<std::string>
    modelFile("m",
              cl::desc("Build the graph of a deepseek4 GGUF model instead of "
                       "reading an input"),
              cl::value_desc("model.gguf"), cl::cat(category));
static cl::opt<std::string> presetName(
    "preset",
    cl::desc("Build the graph of a preset (tiny, flash, flash-slice:N) "
             "without a file; formats from --recipe"),
    cl::value_desc("name"), cl::cat(category));
static cl::opt<std::string>
    recipe("recipe",
           cl::desc("With --preset: REGEX=FORMAT rules choosing tensor "
                    "formats, before the default recipe's"),
           cl::value_desc("rules"), cl::cat(category));
static cl::opt<bool>
    noSim("no-sim",
          cl::desc("Build the graph without the quantization simulations"),
          cl::cat(category));

static cl::opt<bool> layerOutputs(
    "layer-outputs",
    cl::desc("Also return each layer's streams, experts and indexer entries "
             "(kf-run --dump-hidden reads them)"),
    cl::cat(category));

enum class Emit { Mlir, Plan, Object, Shared, Graph, Stats };
static cl::opt<Emit>
    emit("emit", cl::desc("What to produce"), cl::init(Emit::Mlir),
         cl::values(clEnumValN(Emit::Mlir, "mlir",
                               "the input compiled for --target, as MLIR "
                               "(the default, unless -o ends in .kfp)"),
                    clEnumValN(Emit::Plan, "plan",
                               "the plan for --target and its kernels as "
                               "one artifact the runtime loads (-o "
                               "required; the default for an -o ending in "
                               ".kfp)"),
                    clEnumValN(Emit::Object, "obj",
                               "the kernels of the plan, as an object file "
                               "for --target (-o required)"),
                    clEnumValN(Emit::Shared, "shared",
                               "the kernels of the plan, as a shared "
                               "library for --target (-o required; links "
                               "with ld.lld)"),
                    clEnumValN(Emit::Graph, "graph",
                               "the model graph as built, before any pass"),
                    clEnumValN(Emit::Stats, "stats",
                               "what the plan for --target costs: weight "
                               "bytes by format, bytes a decode token reads, "
                               "KV cache, activation arena, matmuls compiled "
                               "and not")),
         cl::cat(category));

static cl::opt<int64_t> maxRows(
    "max-rows",
    cl::desc("--emit=plan, stats: the most token rows one run of a plan "
             "with a dynamic token dimension takes (the prefill "
             "chunk)"),
    cl::init(512), cl::cat(category));

// Not --threads: an LLVM library linked for --emit=obj registers that name.
static cl::opt<int64_t>
    maxContext("max-context",
               cl::desc("--emit=plan, stats: the longest sequence (tokens) the "
                        "model's caches hold"),
               cl::init(4096), cl::cat(category));
static cl::opt<unsigned>
    threads("num-threads",
            cl::desc("Threads the plan may use (0: the target's cores)"),
            cl::init(0), cl::cat(category));
static cl::opt<std::string>
    tuningFile("tuning-file",
               cl::desc("A tuning file whose rules override the default "
                        "kernel decisions"),
               cl::value_desc("file"), cl::cat(category));

static cl::opt<int64_t> contextTokens(
    "context-tokens",
    cl::desc("--emit=stats: context length for the KV cache and the decode "
             "arena"),
    cl::init(65536), cl::cat(category));
static cl::opt<int64_t>
    prefillTokens("prefill-tokens",
                  cl::desc("--emit=stats: tokens of the prefill whose arena "
                           "is estimated"),
                  cl::init(2048), cl::cat(category));

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

namespace dsv4 = kf::deepseek_v4;

/// The graph of the model file or preset given, or a message why not.
static llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelGraph(mlir::MLIRContext &context) {
  auto error = [](const absl::Status &status) {
    return llvm::createStringError(std::string(status.message()));
  };
  dsv4::GraphOptions options;
  options.simulate = !noSim;
  if (layerOutputs)
    options.probes = dsv4::GraphOptions::Probes::Observe;
  options.maxRows = maxRows;
  std::optional<dsv4::Config> config;
  std::vector<kf::Format> formats;
  if (!modelFile.empty()) {
    absl::StatusOr<kf::gguf::File> file = kf::gguf::File::open(modelFile);
    if (!file.ok())
      return error(file.status());
    absl::StatusOr<dsv4::Config> read = dsv4::Config::fromGguf(*file);
    if (!read.ok())
      return error(read.status());
    if (absl::Status valid = dsv4::validateTensors(*read, *file); !valid.ok())
      return error(valid);
    config = *read;
    for (const dsv4::TensorSpec &spec : dsv4::tensorSpecs(*config))
      formats.push_back(file->findTensor(spec.name)->format);
    // The module is named after the file, as a bare MLIR identifier.
    options.name = llvm::sys::path::stem(modelFile).str();
    for (char &ch : options.name)
      if (!llvm::isAlnum(ch))
        ch = '_';
  } else {
    absl::StatusOr<dsv4::Preset> preset = dsv4::preset(presetName);
    if (!preset.ok())
      return error(preset.status());
    config = preset->config;
    std::optional<std::string_view> rules;
    if (recipe.getNumOccurrences())
      rules = recipe.getValue();
    std::vector<dsv4::TensorSpec> specs = dsv4::tensorSpecs(*config);
    absl::StatusOr<std::vector<kf::Format>> chosen =
        dsv4::tensorFormats(specs, rules, /*log=*/nullptr);
    if (!chosen.ok())
      return error(chosen.status());
    formats = std::move(*chosen);
    options.name = presetName.getValue();
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dsv4::buildGraph(context, *config, formats, options);
  if (mlir::failed(mlir::verify(*module)))
    return llvm::createStringError("the built graph does not verify");
  return std::move(module);
}

static mlir::LogicalResult compilePlan(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  mlir::kf::PlanPipelineOptions options;
  options.targetName = targetName;
  options.threads = threads;
  options.tuningFile = tuningFile;
  mlir::kf::buildPlanPipeline(pm, options);
  return pm.run(module);
}

/// Lowers a compiled graph's ops to kernels and each function to a plan
/// (`maxRows` token rows per run, caches for `maxContext` tokens), bound to
/// the model file's fingerprint when there is one.
static llvm::Expected<std::vector<kf::Plan>>
lowerToPlans(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  mlir::kf::buildPlanBuildingPasses(pm, maxRows, maxContext);
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("");
  // The plans bind only the file they were compiled from.
  std::string model;
  if (!modelFile.empty()) {
    absl::StatusOr<kf::gguf::File> file = kf::gguf::File::open(modelFile);
    if (!file.ok())
      return llvm::createStringError(std::string(file.status().message()));
    model = file->fingerprint();
  }
  std::vector<kf::Plan> plans;
  for (auto plan : module.getOps<mlir::kf_plan::PlanOp>()) {
    plans.push_back(mlir::kf_plan::getRuntimePlan(plan));
    plans.back().model = model;
  }
  if (plans.empty())
    return llvm::createStringError("the input has no function to plan");
  return plans;
}

/// A failure of a pipeline step: the passes have said why already, in a
/// diagnostic, when the message is empty.
static int fail(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  return message.empty() ? 1 : fail(message);
}

/// Compiles the graph into plans and writes the artifact.
static int runEmitPlan(mlir::ModuleOp module) {
  if (mlir::failed(compilePlan(module)))
    return 1;
  llvm::Expected<std::vector<kf::Plan>> plans = lowerToPlans(module);
  if (!plans)
    return fail(plans.takeError());
  absl::StatusOr<std::vector<uint8_t>> bytes = kf::serializePlans(*plans);
  if (!bytes.ok())
    return fail(std::string(bytes.status().message()));
  auto kernels = module.lookupSymbol<mlir::ModuleOp>("kernels");
  target::TargetInfo info =
      mlir::kf::TargetAttr::lookup(module).getTargetInfo();
  if (llvm::Error err =
          kf::codegen::emitPlanLibrary(kernels, *bytes, info, outputFilename))
    return fail(llvm::toString(std::move(err)));
  return 0;
}

/// What a session of the model's plans holds (kf::sessionMemory): what
/// kf-run reports it used.
static int printSessionMemory(mlir::ModuleOp module, llvm::raw_ostream &os) {
  llvm::Expected<std::vector<kf::Plan>> plans = lowerToPlans(module);
  if (!plans)
    return fail(plans.takeError());
  std::vector<const kf::Plan *> pointers;
  for (const kf::Plan &plan : *plans)
    pointers.push_back(&plan);
  absl::StatusOr<kf::SessionMemory> memory = kf::sessionMemory(pointers);
  if (!memory.ok())
    return fail(std::string(memory.status().message()));
  auto mib = [](uint64_t bytes) {
    return llvm::format("%14llu bytes (%.1f MiB)",
                        static_cast<unsigned long long>(bytes),
                        bytes / double(1 << 20));
  };
  os << "a session of its plans (--max-rows " << maxRows << ", --max-context "
     << maxContext << "; kf-run reports the same):\n";
  os << "  packed weights        " << mib(memory->packedWeights) << "\n";
  os << "  weights read in place " << mib(memory->mappedWeights)
     << " (a table looked up by token: one row)\n";
  os << "  state                 " << mib(memory->state) << "\n";
  os << "  arenas                " << mib(memory->arenas) << " (";
  for (size_t p = 0; p < plans->size(); ++p)
    os << (p ? ", " : "") << (*plans)[p].name << " " << (*plans)[p].arenaBytes;
  os << ")\n";
  os << "  total                 " << mib(memory->total()) << "\n";
  return 0;
}

/// Compiles the plan and writes its kernels module as an object file or a
/// shared library.
static int runEmitKernels(mlir::ModuleOp module) {
  if (mlir::failed(compilePlan(module)))
    return 1;
  auto kernels = module.lookupSymbol<mlir::ModuleOp>("kernels");
  if (!kernels)
    return fail("the plan calls no compiled kernel: no matmul has a format "
                "and ISA the emitters implement");
  target::TargetInfo info =
      mlir::kf::TargetAttr::lookup(module).getTargetInfo();
  llvm::Error err =
      emit == Emit::Object
          ? kf::codegen::emitObject(kernels, info, outputFilename)
          : kf::codegen::emitSharedLibrary(kernels, info, outputFilename);
  if (err)
    return fail(llvm::toString(std::move(err)));
  return 0;
}

static int runCompile() {
  mlir::DialectRegistry registry;
  mlir::kf::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // An error is one line naming the op, not the op's whole function.
  context.printOpOnDiagnostic(false);

  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  // A model's ops are located by name (loc("blk.2.q_a")), not by a line of
  // a source: an error says the model and the op's place, on one line.
  std::optional<mlir::ScopedDiagnosticHandler> modelDiagnostics;
  if (!modelFile.empty() || !presetName.empty())
    modelDiagnostics.emplace(&context, [](mlir::Diagnostic &d) {
      if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::failure(); // the source manager's to print
      std::string where =
          modelFile.empty() ? "--preset " + presetName : std::string(modelFile);
      if (auto name = mlir::dyn_cast<mlir::NameLoc>(d.getLocation()))
        where += ": " + name.getName().str();
      llvm::WithColor::error(llvm::errs(), "kf-compile")
          << where << ": " << d.str() << "\n";
      return mlir::success();
    });
  std::string error;
  if (!modelFile.empty() || !presetName.empty()) {
    if (!modelFile.empty() && !presetName.empty())
      return fail("-m and --preset are alternatives; give one");
    llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> built =
        buildModelGraph(context);
    if (!built)
      return fail(llvm::toString(built.takeError()));
    module = std::move(*built);
  } else {
    if (emit == Emit::Graph || emit == Emit::Stats)
      return fail(llvm::Twine("--emit=") +
                  (emit == Emit::Graph ? "graph" : "stats") +
                  " needs a model: -m model.gguf or --preset");
    std::unique_ptr<llvm::MemoryBuffer> input =
        mlir::openInputFile(inputFilename, &error);
    if (!input)
      return fail(error);
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
  }

  if (emit.getNumOccurrences() == 0 &&
      llvm::StringRef(outputFilename).ends_with(".kfp"))
    emit = Emit::Plan;
  if (emit == Emit::Object || emit == Emit::Shared || emit == Emit::Plan) {
    if (outputFilename == "-")
      return fail(llvm::Twine("--emit=") +
                  (emit == Emit::Object   ? "obj writes an object file"
                   : emit == Emit::Shared ? "shared writes a shared library"
                                          : "plan writes an artifact") +
                  ": give it with -o");
    return emit == Emit::Plan ? runEmitPlan(*module) : runEmitKernels(*module);
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  if (emit == Emit::Graph) {
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return 0;
  }

  mlir::PassManager pm(&context);
  if (emit == Emit::Stats) {
    // The plan's costs for the target: which matmuls it compiled, and the
    // arena of its kernel ops' operands.
    if (mlir::failed(compilePlan(*module)))
      return 1;
    mlir::kf::KfGraphStatsOptions statsOptions;
    statsOptions.contextTokens = contextTokens;
    statsOptions.prefillTokens = prefillTokens;
    pm.addPass(mlir::kf::createKfGraphStats(output->os(), statsOptions));
    if (mlir::failed(pm.run(*module)))
      return 1;
    if (int failed = printSessionMemory(*module, output->os()))
      return failed;
    output->keep();
    return 0;
  }
  if (mlir::failed(compilePlan(*module)))
    return 1;
  module->print(output->os());
  output->os() << "\n";
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
