//===- Passes.h - kf passes -------------------------------------*- C++ -*-===//

#ifndef KF_PASSES_PASSES_H
#define KF_PASSES_PASSES_H

#include "kf/Dialect/KfDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kf {

#define GEN_PASS_DECL
#include "kf/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kf/Passes/Passes.h.inc"

} // namespace mlir::kf

#endif // KF_PASSES_PASSES_H
