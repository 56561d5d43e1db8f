//===- Passes.h - kf passes -------------------------------------*- C++ -*-===//

#ifndef KF_PASSES_PASSES_H
#define KF_PASSES_PASSES_H

#include "kf/Dialect/KfDialect.h"
#include "kf/Dialect/Plan/PlanDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kf {

#define GEN_PASS_DECL
#include "kf/Passes/Passes.h.inc"

/// --kf-graph-stats printing to `os` instead of stdout.
std::unique_ptr<Pass> createKfGraphStats(raw_ostream &os,
                                         KfGraphStatsOptions options = {});

#define GEN_PASS_REGISTRATION
#include "kf/Passes/Passes.h.inc"

/// The options of the plan pipeline, kf-compile's: those of the passes it
/// runs that a user chooses.
struct PlanPipelineOptions : PassPipelineOptions<PlanPipelineOptions> {
  Option<std::string> targetName{
      *this, "target",
      llvm::cl::desc("named target, or 'host' for the CPU running the "
                     "compiler"),
      llvm::cl::init("host")};
  Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("threads the plan may use (0: the target's cores)"),
      llvm::cl::init(0)};
  Option<std::string> tuningFile{
      *this, "tuning-file",
      llvm::cl::desc("a tuning file whose rules override the default "
                     "decisions")};
};

/// --kf-set-target, --kf-select-kernels, --kf-tile-columns,
/// --kf-block-caches, --kf-lower-quant-dot, then canonicalization and CSE.
void buildPlanPipeline(OpPassManager &pm, const PlanPipelineOptions &options);
/// After it, what turns a compiled graph into plans (docs/engine.md,
/// "Building a plan"): --kf-bound-context (caches for `maxContext`
/// tokens), --kf-lower-ops and --kf-build-plan (runs of up to `maxRows`
/// rows).
void buildPlanBuildingPasses(OpPassManager &pm, int64_t maxRows,
                             int64_t maxContext);
/// Registers it as `kf-plan-pipeline` (kf-opt --kf-plan-pipeline=...).
void registerPlanPipeline();

} // namespace mlir::kf

#endif // KF_PASSES_PASSES_H
