// What every op kernel test (docs/engine.md, "Op kernels") does around its
// data: the suite instantiated per x86 ISA level, the kernels of its specs
// JIT-compiled in one module, and a kernel run as the one step of a plan by
// the runtime's executor, so that each test certifies the kernel as a plan
// runs it: its operands bound, its items split between the threads.
#ifndef KF_TEST_UNIT_CODEGEN_STEPKERNELTESTUTIL_H
#define KF_TEST_UNIT_CODEGEN_STEPKERNELTESTUTIL_H

#include "HostIsa.h"

#include "kf/Codegen/KernelCompiler.h"
#include "kf/Target/TargetInfo.h"
#include "kf/runtime/plan_abi.h"

#include "absl/status/status.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

/// Declares the ISA-parameterized fixture `suite` and instantiates it on
/// the x86 levels (Isa/<suite>.<test>/avx2); each test starts with
/// KF_SKIP_UNLESS_HOST_RUNS(GetParam()).
#define KF_STEP_KERNEL_SUITE(suite)                                            \
  class suite : public ::testing::TestWithParam<::kf::codegen::KernelIsa> {};  \
  INSTANTIATE_TEST_SUITE_P(                                                    \
      Isa, suite,                                                              \
      ::testing::Values(::kf::codegen::KernelIsa::Scalar,                      \
                        ::kf::codegen::KernelIsa::Avx2,                        \
                        ::kf::codegen::KernelIsa::Avx512),                     \
      ::kf::codegen::isaParamName)

namespace kf::codegen {

/// Step kernels compiled in process: `kernels[i]` is the i-th symbol asked
/// for, valid while `jit` lives.
struct CompiledStepKernels {
  JitKernelModule jit;
  std::vector<kf_step_fn> kernels;
};

/// JIT-compiles for `target` the module `build` fills and looks up
/// `symbols` in it.
llvm::Expected<CompiledStepKernels>
compileStepKernels(const target::TargetInfo &target,
                   llvm::function_ref<llvm::Error(mlir::ModuleOp)> build,
                   llvm::ArrayRef<std::string> symbols);

/// What appends the kernel of a spec to a module (buildRmsNormKernel).
template <typename Spec>
using BuildStepKernel = llvm::Expected<mlir::func::FuncOp> (*)(
    mlir::ModuleOp, const Spec &, const target::TargetInfo &);

/// The kernels of `specs`, each appended by `build`, in one module.
template <typename Spec>
llvm::Expected<CompiledStepKernels>
compileStepKernels(const target::TargetInfo &target,
                   llvm::ArrayRef<std::type_identity_t<Spec>> specs,
                   BuildStepKernel<Spec> build) {
  std::vector<std::string> symbols;
  for (const Spec &spec : specs)
    symbols.push_back(spec.getSymbolName());
  return compileStepKernels(
      target,
      [&](mlir::ModuleOp module) -> llvm::Error {
        for (const Spec &spec : specs)
          if (llvm::Expected<mlir::func::FuncOp> fn =
                  build(module, spec, target);
              !fn)
            return fn.takeError();
        return llvm::Error::success();
      },
      symbols);
}

/// Compiles the kernels of `specs` for `target` in one module and calls
/// `check(spec, kernel)` for each, under a trace naming the spec, until a
/// fatal failure; an error compiling them fails the test.
template <typename Spec, typename Check>
void forEachStepKernel(const target::TargetInfo &target,
                       llvm::ArrayRef<std::type_identity_t<Spec>> specs,
                       BuildStepKernel<Spec> build, Check check) {
  llvm::Expected<CompiledStepKernels> compiled =
      compileStepKernels<Spec>(target, specs, build);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  for (size_t k = 0; k < specs.size() && !::testing::Test::HasFatalFailure();
       ++k) {
    SCOPED_TRACE(specs[k].describe());
    check(specs[k], compiled->kernels[k]);
  }
}

/// One operand of a step: its bytes and how many of them each token row
/// takes; 0 makes it a weight, read whole (an F32 vector of the plan's
/// weight table), anything else a run buffer of that many bytes a row. The
/// same bytes given twice are one run buffer: a kernel run in place.
struct StepOperand {
  std::span<uint8_t> bytes;
  int64_t bytesPerRow = 0;
};

/// `values` as rows of `floatsPerRow` floats.
StepOperand rowOperand(std::span<float> values, int64_t floatsPerRow);
/// `values` as a weight (which no kernel writes).
StepOperand weightOperand(std::span<const float> values);

/// Runs `kernel` as the one step of a plan, `itemsPerRow` work items per
/// token row split in blocks between `threads` threads, on `rows` token rows
/// of its `operands`, in the order the kernel takes them.
absl::Status runRowStep(kf_step_fn kernel, int64_t rows, int64_t itemsPerRow,
                        std::vector<StepOperand> operands, int threads);

/// Runs `kernel`, a step of one item per row that reads rows of `x`
/// (`floatsPerRow` floats each) and `weight` (unless empty) and writes rows
/// of as many floats, on every row of `x`, into rows of its own (filled with
/// -1 first) or, `inPlace`, over a copy of `x`; returns the rows written, or
/// fails the test and returns none.
std::vector<float> runRowToRowStep(kf_step_fn kernel, std::span<const float> x,
                                   int64_t floatsPerRow,
                                   std::span<const float> weight, bool inPlace,
                                   int threads);

/// Fails the test on every call, and every jump but to a local label
/// (.LBB0_1), in `assembly`: a kernel calls nothing, so that a library of
/// kernels loads without a libc.
void expectCallsNothing(llvm::StringRef assembly);

/// For each x86 level of `targets` ("x86-64-v2"), appends the kernels
/// `build` builds to an empty module and expects its assembly to define
/// `symbols` and to call nothing (expectCallsNothing).
void expectKernelsCallNothing(
    std::initializer_list<const char *> targets,
    llvm::ArrayRef<std::string> symbols,
    llvm::function_ref<void(mlir::ModuleOp, const target::TargetInfo &)> build);

/// Whether a and b (bf16 values held as floats) are at most one bf16 ulp
/// apart: their bit patterns, of one sign, differ by at most 1 << 16.
bool withinOneBf16Ulp(float a, float b);

} // namespace kf::codegen

#endif // KF_TEST_UNIT_CODEGEN_STEPKERNELTESTUTIL_H
