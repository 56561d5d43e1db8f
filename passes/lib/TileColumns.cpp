//===- TileColumns.cpp - Split M token columns into micro-kernel widths ---===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "kf/Tiling/ColumnTiles.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFTILECOLUMNS
#include "kf/Passes/Passes.h.inc"

namespace {

struct TileColumnsPass : impl::KfTileColumnsBase<TileColumnsPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (!isMatmulOp(op))
        return WalkResult::advance();
      for (const Matmul &matmul : getMatmuls(op)) {
        KernelAttr kernel = getKernelOrError(op, matmul, "kf-tile-columns");
        if (!kernel)
          return WalkResult::interrupt();
        // Tiles set by hand are kept; a matmul of no columns has none.
        if (kernel.hasColumnTiles() || matmul.m == 0)
          continue;
        if (ShapedType::isDynamic(matmul.m)) {
          setKernel(op, matmul.name, kernel.withColumnTiles(std::nullopt));
          continue;
        }
        SmallVector<int64_t, 4> tiles =
            ::kf::tiling::decomposeColumns(matmul.m, kernel.getMaxCols());
        setKernel(op, matmul.name, kernel.withColumnTiles(ArrayRef(tiles)));
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kf
