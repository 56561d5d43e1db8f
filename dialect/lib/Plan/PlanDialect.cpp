//===- PlanDialect.cpp - The kf_plan dialect ------------------------------===//

#include "kf/Dialect/Plan/PlanDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kf_plan;

#include "kf/Dialect/Plan/PlanDialect.cpp.inc"
#include "kf/Dialect/Plan/PlanEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kf/Dialect/Plan/PlanAttrs.cpp.inc"

void KfPlanDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kf/Dialect/Plan/PlanAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kf/Dialect/Plan/PlanOps.cpp.inc"
      >();
}
