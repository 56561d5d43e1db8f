//===- BoundContext.cpp - Static shapes for the caches' entries -----------===//
//
// A plan's memory is static: its caches hold sequences of at most
// `max-context` tokens, so a compressed cache at most max-context / ratio
// entries. This pass records the bound on the module and gives every read
// of a compressed cache, and the ops with a dimension per entry, that many
// rows (docs/engine.md, "State").
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "kf/Dialect/KfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFBOUNDCONTEXT
#include "kf/Passes/Passes.h.inc"

namespace {

/// `type` with its dimension `d` set to `size`.
RankedTensorType withDim(Type type, int64_t d, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[d] = size;
  return tensor.clone(shape);
}

struct BoundContextPass : impl::KfBoundContextBase<BoundContextPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxContext < 1) {
      module.emitError() << "kf-bound-context: max-context must be positive, "
                            "got "
                         << static_cast<int64_t>(maxContext);
      return signalPassFailure();
    }
    if (auto bound =
            module->getAttrOfType<IntegerAttr>(KfDialect::kMaxContextAttrName);
        bound && bound.getInt() != maxContext) {
      module.emitError() << "kf-bound-context: the module is bounded to "
                         << bound.getInt() << " tokens already, not "
                         << static_cast<int64_t>(maxContext);
      return signalPassFailure();
    }
    module->setAttr(
        KfDialect::kMaxContextAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), maxContext));
    // In op order, so that an entry count reaches its users before they
    // are visited.
    module.walk([&](Operation *op) {
      if (auto read = dyn_cast<CacheReadOp>(op)) {
        auto cache = dyn_cast<CompressedCacheType>(read.getCache().getType());
        if (cache)
          read.getResult().setType(
              withDim(read.getType(), 0, cache.getCapacity(maxContext)));
      } else if (auto visible = dyn_cast<VisibleEntriesOp>(op)) {
        visible.getResult().setType(
            withDim(visible.getType(), 1,
                    cast<RankedTensorType>(visible.getEntries().getType())
                        .getDimSize(0)));
      } else if (auto scores = dyn_cast<IndexerScoresOp>(op)) {
        scores.getResult().setType(withDim(
            scores.getType(), 1,
            cast<RankedTensorType>(scores.getKeys().getType()).getDimSize(0)));
      } else if (auto topk = dyn_cast<IndexerTopKOp>(op)) {
        int64_t entries =
            cast<RankedTensorType>(topk.getScores().getType()).getDimSize(1);
        if (!ShapedType::isDynamic(entries))
          topk.getResult().setType(
              withDim(topk.getType(), 1,
                      std::min(static_cast<int64_t>(topk.getK()), entries)));
      }
    });
    // A function returning one of them returns it with its bound.
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
      fn.setType(FunctionType::get(&getContext(), fn.getArgumentTypes(),
                                   ret.getOperandTypes()));
    }
  }
};

} // namespace
} // namespace mlir::kf
