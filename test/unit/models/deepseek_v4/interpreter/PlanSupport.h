// Shared by the tests that run the tiny model's compiled plans: a lowered
// graph built into a prefill and a decode plan (kf-compile's passes after
// its pipeline), their kernels JIT-compiled for this machine, and the plans
// bound to the model's file and one state.
#ifndef KF_TEST_UNIT_INTERPRETER_PLANSUPPORT_H
#define KF_TEST_UNIT_INTERPRETER_PLANSUPPORT_H

#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/Dialect/Plan/PlanDialect.h"
#include "kf/Passes/Passes.h"
#include "kf/deepseek_v4/builder/graph_builder.h"
#include "kf/runtime/executor.h"
#include "kf/runtime/plan_file.h"
#include "kf/runtime/plan_weights.h"
#include "mlir/Pass/PassManager.h"

namespace kf::deepseek_v4::interpreter::test {

/// A plan pair and its kernels.
struct TinyPlans {
  mlir::OwningOpRef<mlir::ModuleOp> module; // the plans and module @kernels
  std::optional<codegen::JitKernelModule> jit;
  Plan prefill, decode;

  /// `plan`'s kernels from the JIT, in its kernel order; empty (and a test
  /// failure) when one is missing.
  std::vector<kf_step_fn> kernels(const Plan &plan) const {
    std::vector<kf_step_fn> kernels;
    for (const std::string &name : plan.kernels) {
      llvm::Expected<void *> fn = jit->lookup(name);
      if (!fn) {
        ADD_FAILURE() << llvm::toString(fn.takeError());
        return {};
      }
      kernels.push_back(reinterpret_cast<kf_step_fn>(*fn));
    }
    return kernels;
  }

  /// Writes both plans and their kernels, compiled ahead of time, as one
  /// artifact at `path` (what kf-compile -o writes).
  ::testing::AssertionResult writeArtifact(const std::string &path) const {
    std::vector<Plan> both = {prefill, decode};
    absl::StatusOr<std::vector<uint8_t>> bytes = serializePlans(both);
    if (!bytes.ok())
      return ::testing::AssertionFailure() << bytes.status();
    mlir::ModuleOp plans = module.get();
    llvm::Error written = codegen::emitPlanLibrary(
        plans.lookupSymbol<mlir::ModuleOp>("kernels"), *bytes,
        mlir::kf::TargetAttr::lookup(plans).getTargetInfo(), path);
    if (written)
      return ::testing::AssertionFailure()
             << llvm::toString(std::move(written));
    return ::testing::AssertionSuccess();
  }
};

/// The graph of `model` built with `options` and lowered by kf-compile's
/// pipeline for this machine; null, with a test failure, if either fails.
inline mlir::OwningOpRef<mlir::ModuleOp>
lowerTinyGraph(mlir::MLIRContext &context, const TinyModel &model,
               const GraphOptions &options) {
  mlir::OwningOpRef<mlir::ModuleOp> graph =
      buildGraph(context, model.config, model.formats, options);
  EXPECT_TRUE(graph);
  if (!graph)
    return nullptr;
  mlir::PassManager lower(&context);
  mlir::kf::buildPlanPipeline(lower, mlir::kf::PlanPipelineOptions());
  if (mlir::failed(lower.run(*graph))) {
    ADD_FAILURE() << "the graph does not lower";
    return nullptr;
  }
  return graph;
}

/// The plans of `lowered` (a graph through kf-compile's pipeline, left
/// unchanged): --kf-bound-context, --kf-lower-ops and --kf-build-plan on a
/// copy, for runs of up to `maxRows` rows and sequences of `maxContext`
/// tokens; null, with a test failure, if a step fails.
inline std::unique_ptr<TinyPlans>
buildTinyPlans(mlir::ModuleOp lowered, int64_t maxRows, int64_t maxContext) {
  auto plans = std::make_unique<TinyPlans>();
  plans->module = lowered.clone();
  mlir::MLIRContext *context = lowered.getContext();
  context->loadDialect<mlir::kf_plan::KfPlanDialect>();
  mlir::PassManager build(context);
  mlir::kf::buildPlanBuildingPasses(build, maxRows, maxContext);
  if (mlir::failed(build.run(*plans->module))) {
    ADD_FAILURE() << "the plans do not build";
    return nullptr;
  }
  for (auto op : plans->module->getOps<mlir::kf_plan::PlanOp>())
    (op.getSymName() == "prefill" ? plans->prefill : plans->decode) =
        mlir::kf_plan::getRuntimePlan(op);
  EXPECT_EQ(plans->prefill.caches, plans->decode.caches);
  EXPECT_EQ(plans->prefill.stateBytes, plans->decode.stateBytes);
  llvm::Expected<codegen::JitKernelModule> jit = codegen::jitKernelModule(
      plans->module->lookupSymbol<mlir::ModuleOp>("kernels"),
      mlir::kf::TargetAttr::lookup(*plans->module).getTargetInfo());
  if (!jit) {
    ADD_FAILURE() << llvm::toString(jit.takeError());
    return nullptr;
  }
  plans->jit.emplace(*std::move(jit));
  return plans;
}

/// The model's file, written to the test's temporary directory as `name`.
inline std::string writeTinyModel(const TinyModel &model,
                                  const std::string &name) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(model.bytes.data()),
            static_cast<std::streamsize>(model.bytes.size()));
  return path;
}

/// The plans bound to the weights of the file at `path`, packed once on
/// `pool` for both (kf::mergeWeights, as a session packs them), and to one
/// state, whose bytes start as 0xff — NaNs wherever read as floats, so that
/// a kernel reading what the sequence has not written shows.
struct BoundPlans {
  std::optional<PlanWeights> weights;
  AlignedBytes state;
  std::optional<Executor> prefill, decode;

  static std::unique_ptr<BoundPlans>
  bind(const TinyPlans &plans, const std::string &path, ThreadPool &pool) {
    auto bound = std::make_unique<BoundPlans>();
    const Plan *both[] = {&plans.prefill, &plans.decode};
    std::vector<std::vector<size_t>> index;
    absl::StatusOr<PlanWeights> weights =
        PlanWeights::load(mergeWeights(both, index), path, pool);
    EXPECT_TRUE(weights.ok()) << weights.status();
    if (!weights.ok())
      return nullptr;
    bound->weights.emplace(*std::move(weights));
    const size_t stateBytes = static_cast<size_t>(plans.prefill.stateBytes);
    bound->state = allocateAligned(stateBytes);
    EXPECT_TRUE(bound->state);
    if (!bound->state)
      return nullptr;
    std::memset(bound->state.get(), 0xff, stateBytes);
    std::span<uint8_t> state(bound->state.get(), stateBytes);
    std::optional<Executor> *executors[] = {&bound->prefill, &bound->decode};
    for (size_t p = 0; p < 2; ++p) {
      std::vector<std::span<const uint8_t>> spans;
      for (size_t w : index[p])
        spans.push_back(bound->weights->spans()[w]);
      absl::StatusOr<Executor> executor = Executor::create(
          *both[p], plans.kernels(*both[p]), std::move(spans), state);
      EXPECT_TRUE(executor.ok()) << executor.status();
      if (!executor.ok())
        return nullptr;
      executors[p]->emplace(*std::move(executor));
    }
    return bound;
  }
};

template <typename T> std::span<uint8_t> bytesOf(std::vector<T> &v) {
  return {reinterpret_cast<uint8_t *>(v.data()), v.size() * sizeof(T)};
}

} // namespace kf::deepseek_v4::interpreter::test

#endif // KF_TEST_UNIT_INTERPRETER_PLANSUPPORT_H
