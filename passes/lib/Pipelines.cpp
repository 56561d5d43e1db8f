//===- Pipelines.cpp - The kf pass pipelines ------------------------------===//

#include "kf/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::kf {

void buildPlanPipeline(OpPassManager &pm, const PlanPipelineOptions &options) {
  KfSetTargetOptions target;
  target.targetName = options.targetName;
  pm.addPass(createKfSetTarget(target));
  KfSelectKernelsOptions select;
  select.threads = options.threads;
  select.tuningFile = options.tuningFile;
  pm.addPass(createKfSelectKernels(select));
  pm.addPass(createKfTileColumns());
  pm.addPass(createKfBlockCaches());
  pm.addPass(createKfLowerQuantDot());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildPlanBuildingPasses(OpPassManager &pm, int64_t maxRows,
                             int64_t maxContext) {
  KfBoundContextOptions bound;
  bound.maxContext = maxContext;
  pm.addPass(createKfBoundContext(bound));
  pm.addPass(createKfLowerOps());
  KfBuildPlanOptions build;
  build.maxRows = maxRows;
  pm.addPass(createKfBuildPlan(build));
}

void registerPlanPipeline() {
  PassPipelineRegistration<PlanPipelineOptions>(
      "kf-plan-pipeline",
      "The kf-compile pipeline: set the target, decide, tile and block each "
      "matmul, lower the decided ones to compiled kernels, then canonicalize "
      "and CSE",
      buildPlanPipeline);
}

} // namespace mlir::kf
