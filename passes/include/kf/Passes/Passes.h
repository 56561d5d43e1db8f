//===- Passes.h - kf passes -------------------------------------*- C++ -*-===//

#ifndef KF_PASSES_PASSES_H
#define KF_PASSES_PASSES_H

#include "kf/Dialect/KfDialect.h"
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

} // namespace mlir::kf

#endif // KF_PASSES_PASSES_H
