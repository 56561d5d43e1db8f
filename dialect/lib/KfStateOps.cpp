//===- KfStateOps.cpp - kf weight and cache ops: verifiers ----------------===//

#include "kf/Dialect/KfDialect.h"

#include "OpRules.h"

using namespace mlir;
using namespace mlir::kf;
using namespace mlir::kf::rules;

//===----------------------------------------------------------------------===//
// Weights and state
//===----------------------------------------------------------------------===//

namespace {

template <typename DeclOp>
LogicalResult verifyDeclaredType(Operation *op, FlatSymbolRefAttr name,
                                 Type type, SymbolTableCollection &symbols,
                                 StringRef declKind) {
  auto decl = symbols.lookupNearestSymbolFrom<DeclOp>(op, name);
  if (!decl)
    return op->emitOpError() << "'" << name.getValue() << "' is not a "
                             << declKind << " of the module";
  if (decl.getType() != type)
    return op->emitOpError()
           << "result type " << type << " differs from the declared "
           << decl.getType() << " of '" << name.getValue() << "'";
  return success();
}

} // namespace

LogicalResult
GetWeightOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDeclaredType<WeightOp>(*this, getNameAttr(), getType(),
                                      symbolTable, "kf.weight");
}

LogicalResult GetCacheOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDeclaredType<CacheOp>(*this, getNameAttr(), getType(),
                                     symbolTable, "kf.cache");
}

LogicalResult CacheAppendOp::verify() {
  WindowCacheType cache = getCache().getType();
  int64_t t = tokens(getRows());
  if (failed(checkShape(*this, "rows", getRows().getType(),
                        {kAny, cache.getDim()})) ||
      failed(checkShape(*this, "positions", getPositions().getType(), {t})))
    return failure();
  return success();
}

LogicalResult CacheReadOp::verify() {
  if (auto ring = dyn_cast<WindowCacheType>(getCache().getType()))
    return checkShape(*this, "result", getType(),
                      {ring.getRows(), ring.getDim()});
  auto compressed = cast<CompressedCacheType>(getCache().getType());
  return checkShape(*this, "result", getType(), {kAny, compressed.getDim()});
}
