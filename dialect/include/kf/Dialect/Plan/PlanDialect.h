//===- PlanDialect.h - The kf_plan dialect ----------------------*- C++ -*-===//
//
// The one header to include for the kf_plan dialect: dialect, enums,
// attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_PLAN_PLANDIALECT_H
#define KF_DIALECT_PLAN_PLANDIALECT_H

#include "kf/Dialect/KfDialect.h"
#include "kf/runtime/plan.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "kf/Dialect/Plan/PlanDialect.h.inc"
#include "kf/Dialect/Plan/PlanEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kf/Dialect/Plan/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "kf/Dialect/Plan/PlanOps.h.inc"

namespace mlir::kf_plan {

/// The plan as the runtime holds it (kf/runtime/plan.h): its kernels named
/// by their symbols' leaves, in the order of first use.
::kf::Plan getRuntimePlan(PlanOp plan);

} // namespace mlir::kf_plan

#endif // KF_DIALECT_PLAN_PLANDIALECT_H
