#include "StepKernelTestUtil.h"

#include "TestTarget.h"

#include "kf/runtime/executor.h"
#include "kf/runtime/plan.h"
#include "kf/runtime/thread_pool.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <bit>
#include <optional>

namespace kf::codegen {

llvm::Expected<CompiledStepKernels>
compileStepKernels(const target::TargetInfo &target,
                   llvm::function_ref<llvm::Error(mlir::ModuleOp)> build,
                   llvm::ArrayRef<std::string> symbols) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  if (llvm::Error err = build(*module))
    return std::move(err);
  // The JIT compiles a copy of the module: the code outlives the context.
  llvm::Expected<JitKernelModule> jit = jitKernelModule(*module, target);
  if (!jit)
    return jit.takeError();
  CompiledStepKernels compiled{std::move(*jit), {}};
  for (const std::string &symbol : symbols) {
    llvm::Expected<void *> fn = compiled.jit.lookup(symbol);
    if (!fn)
      return fn.takeError();
    compiled.kernels.push_back(reinterpret_cast<kf_step_fn>(*fn));
  }
  return compiled;
}

StepOperand rowOperand(std::span<float> values, int64_t floatsPerRow) {
  return {std::span(reinterpret_cast<uint8_t *>(values.data()),
                    values.size_bytes()),
          4 * floatsPerRow};
}

StepOperand weightOperand(std::span<const float> values) {
  // The executor binds weights as const bytes again; a kernel never writes
  // them.
  return {
      std::span(reinterpret_cast<uint8_t *>(const_cast<float *>(values.data())),
                values.size_bytes()),
      0};
}

absl::Status runRowStep(kf_step_fn kernel, int64_t rows, int64_t itemsPerRow,
                        std::vector<StepOperand> operands, int threads) {
  Plan plan;
  plan.maxRows = rows;
  plan.kernels = {"step"};
  PlanStep step{"step", 0, {}, {0, itemsPerRow}, WorkSplit::Blocks, 1, false};
  std::vector<std::span<const uint8_t>> weights;
  std::vector<std::span<uint8_t>> buffers;
  for (const StepOperand &operand : operands) {
    const int64_t size = static_cast<int64_t>(operand.bytes.size());
    if (operand.bytesPerRow == 0) {
      step.operands.push_back({OperandKind::Weight,
                               static_cast<uint32_t>(weights.size()),
                               0,
                               {size, 0}});
      plan.weights.push_back({absl::StrCat("w", weights.size()),
                              Format::F32,
                              {size / 4},
                              std::nullopt});
      weights.push_back(operand.bytes);
      continue;
    }
    // The same bytes as an earlier operand's are its run buffer.
    uint32_t index = 0;
    while (index < buffers.size() &&
           buffers[index].data() != operand.bytes.data())
      ++index;
    if (index == buffers.size()) {
      plan.inputs.push_back(
          {absl::StrCat("in", index), {0, operand.bytesPerRow}});
      buffers.push_back(operand.bytes);
    }
    step.operands.push_back(
        {OperandKind::Input, index, 0, {0, operand.bytesPerRow}});
  }
  plan.steps.push_back(std::move(step));
  absl::StatusOr<Executor> executor =
      Executor::create(std::move(plan), {kernel}, std::move(weights));
  if (!executor.ok())
    return executor.status();
  ThreadPool pool(threads);
  return executor->run(pool, rows, buffers);
}

std::vector<float> runRowToRowStep(kf_step_fn kernel, std::span<const float> x,
                                   int64_t floatsPerRow,
                                   std::span<const float> weight, bool inPlace,
                                   int threads) {
  std::vector<float> in(x.begin(), x.end()), out(x.size(), -1.0f);
  std::vector<StepOperand> operands = {rowOperand(in, floatsPerRow)};
  if (!weight.empty())
    operands.push_back(weightOperand(weight));
  operands.push_back(rowOperand(inPlace ? in : out, floatsPerRow));
  const int64_t rows = static_cast<int64_t>(x.size()) / floatsPerRow;
  if (absl::Status s = runRowStep(kernel, rows, 1, operands, threads);
      !s.ok()) {
    ADD_FAILURE() << s << " (" << threads << " threads"
                  << (inPlace ? ", in place)" : ")");
    return {};
  }
  return inPlace ? in : out;
}

void expectCallsNothing(llvm::StringRef assembly) {
  llvm::SmallVector<llvm::StringRef> lines;
  assembly.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef instruction = line.trim();
    llvm::StringRef mnemonic =
        instruction.take_front(instruction.find_first_of(" \t"));
    llvm::StringRef operand = instruction.drop_front(mnemonic.size()).trim();
    if (mnemonic.starts_with("call") ||
        (mnemonic.starts_with("jmp") && !operand.starts_with(".L")))
      ADD_FAILURE() << line.str();
  }
}

void expectKernelsCallNothing(
    std::initializer_list<const char *> targets,
    llvm::ArrayRef<std::string> symbols,
    llvm::function_ref<void(mlir::ModuleOp, const target::TargetInfo &)>
        build) {
  for (const char *name : targets) {
    SCOPED_TRACE(name);
    const target::TargetInfo target = testTarget(name);
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
    build(*module, target);
    if (::testing::Test::HasFatalFailure())
      return;
    llvm::Expected<std::string> assembly = emitAssembly(*module, target);
    ASSERT_TRUE(static_cast<bool>(assembly))
        << llvm::toString(assembly.takeError());
    for (const std::string &symbol : symbols)
      EXPECT_NE(assembly->find(symbol), std::string::npos) << symbol;
    expectCallsNothing(*assembly);
  }
}

bool withinOneBf16Ulp(float a, float b) {
  uint32_t x = std::bit_cast<uint32_t>(a), y = std::bit_cast<uint32_t>(b);
  if ((x ^ y) >> 31)
    return a == b; // +0 and -0
  return (x > y ? x - y : y - x) <= (1u << 16);
}

} // namespace kf::codegen
