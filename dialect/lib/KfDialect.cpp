//===- KfDialect.cpp - The kf dialect -------------------------------------===//

#include "kf/Dialect/KfDialect.h"
#include "kf/Dialect/KfMatmuls.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kf;

#include "kf/Dialect/KfDialect.cpp.inc"
#include "kf/Dialect/KfEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kf/Dialect/KfAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "kf/Dialect/KfTypes.cpp.inc"

void KfDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kf/Dialect/KfAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "kf/Dialect/KfTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kf/Dialect/KfOps.cpp.inc"
      >();
}

LogicalResult KfDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kTargetAttrName << "' must be a #kf.target, got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() == kKernelAttrName)
    return verifyKernelAttribute(op, attr.getValue());
  if (attr.getName() == kLayerKindAttrName) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<CacheOp>(op) || !kind || kind.getValue().empty())
      return op->emitError()
             << "'" << kLayerKindAttrName
             << "' must be a non-empty string on a kf.cache, got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() == kMaxContextAttrName ||
      attr.getName() == kMaxRowsAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !value || !value.getType().isInteger(64) ||
        value.getInt() < 1)
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' must be a positive i64 on a module, got " << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown kf attribute '"
                         << attr.getName().getValue() << "'";
}
