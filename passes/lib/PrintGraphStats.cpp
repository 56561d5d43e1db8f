//===- PrintGraphStats.cpp - Print what a model graph costs ---------------===//

#include "kf/Passes/Passes.h"

#include "kf/Analysis/GraphStats.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFGRAPHSTATS
#include "kf/Passes/Passes.h.inc"

namespace {

struct GraphStatsPass : impl::KfGraphStatsBase<GraphStatsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>{"tokens", contextTokens},
          {"prefill-tokens", prefillTokens}}) {
      if (value <= 0) {
        module.emitError() << "kf-graph-stats: " << name
                           << " must be positive, got " << value;
        return signalPassFailure();
      }
    }
    FailureOr<GraphStats> stats =
        GraphStats::compute(module, {contextTokens, prefillTokens});
    if (failed(stats))
      return signalPassFailure();
    stats->print(*os);
    os->flush();
    markAllAnalysesPreserved();
  }

  raw_ostream *os = &llvm::outs();
};

} // namespace

std::unique_ptr<Pass> createKfGraphStats(raw_ostream &os,
                                         KfGraphStatsOptions options) {
  auto pass = std::make_unique<GraphStatsPass>(std::move(options));
  pass->os = &os;
  return pass;
}

} // namespace mlir::kf
