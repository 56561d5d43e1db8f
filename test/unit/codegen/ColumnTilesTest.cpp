// The column tiling rule: docs/codegen.md's examples, an exhaustive check that
// taking tiles one at a time gives the fewest tiles, widest first, and the IR
// a kernel evaluates at run time agrees with the C++ rule.
#include "kf/Codegen/ColumnTiles.h"
#include "kf/Codegen/MatmulEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

namespace kf::codegen {
namespace {

using Tiles = std::vector<int64_t>;

Tiles tiles(int64_t m, int64_t maxCols = 8) {
  llvm::SmallVector<int64_t, 4> t = decomposeColumns(m, maxCols);
  return Tiles(t.begin(), t.end());
}

TEST(ColumnTiles, DocumentedExamples) {
  EXPECT_EQ(tiles(1), (Tiles{1}));
  EXPECT_EQ(tiles(2), (Tiles{2}));
  EXPECT_EQ(tiles(5), (Tiles{3, 2}));
  EXPECT_EQ(tiles(8), (Tiles{8}));
  EXPECT_EQ(tiles(9), (Tiles{4, 3, 2}));
  EXPECT_EQ(tiles(10), (Tiles{8, 2}));
  EXPECT_EQ(tiles(11), (Tiles{8, 3}));
  EXPECT_EQ(tiles(12), (Tiles{8, 4}));
  EXPECT_EQ(tiles(13), (Tiles{8, 3, 2}));
  EXPECT_EQ(tiles(14), (Tiles{8, 4, 2}));
  EXPECT_EQ(tiles(15), (Tiles{8, 4, 3}));
  EXPECT_EQ(tiles(17), (Tiles{8, 4, 3, 2}));
  EXPECT_EQ(tiles(25), (Tiles{8, 8, 4, 3, 2}));
}

// The optimum by exhaustive search over how many tiles of each allowed width
// (8, 4, 3, 2 up to maxCols) sum to m: the fewest tiles, and among those the
// widest first (lexicographically greatest in non-increasing order).
Tiles bestTiles(int64_t m, int64_t maxCols) {
  auto allowed = [&](int64_t w) { return w <= maxCols ? m / w : 0; };
  Tiles best;
  for (int64_t a = 0; a <= allowed(8); ++a)
    for (int64_t b = 0; b <= allowed(4); ++b)
      for (int64_t c = 0; c <= allowed(3); ++c) {
        int64_t rest = m - 8 * a - 4 * b - 3 * c;
        if (rest < 0 || rest % 2 != 0 || (rest > 0 && maxCols < 2))
          continue;
        Tiles t;
        t.insert(t.end(), a, 8);
        t.insert(t.end(), b, 4);
        t.insert(t.end(), c, 3);
        t.insert(t.end(), rest / 2, 2);
        if (best.empty() || t.size() < best.size() ||
            (t.size() == best.size() && t > best))
          best = t;
      }
  return best;
}

TEST(ColumnTiles, FewestTilesThenWidestFirst) {
  for (int64_t maxCols = 3; maxCols <= 8; ++maxCols)
    for (int64_t m = 2; m <= 100; ++m)
      EXPECT_EQ(tiles(m, maxCols), bestTiles(m, maxCols))
          << "m = " << m << ", maxCols = " << maxCols;
}

TEST(ColumnTiles, NarrowKernelsFallBackToOne) {
  EXPECT_EQ(tiles(3, 1), (Tiles{1, 1, 1}));
  EXPECT_EQ(tiles(3, 2), (Tiles{2, 1}));
  EXPECT_EQ(tiles(4, 2), (Tiles{2, 2}));
  EXPECT_EQ(columnTileWidths(4), (llvm::SmallVector<int64_t, 5>{4, 3, 2, 1}));
}

// emitNextColumnTile on a constant folds to the constant nextColumnTile gives.
TEST(ColumnTiles, RunTimeRuleMatches) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  loadKernelDialects(context);
  for (int64_t maxCols = 1; maxCols <= 8; ++maxCols)
    for (int64_t remaining = 1; remaining <= 40; ++remaining) {
      mlir::OpBuilder b(&context);
      mlir::Location loc = b.getUnknownLoc();
      mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
      b.setInsertionPointToEnd(module->getBody());
      auto fn = mlir::func::FuncOp::create(
          b, loc, "next", b.getFunctionType({}, {b.getI64Type()}));
      b.setInsertionPointToStart(fn.addEntryBlock());
      mlir::Value r =
          mlir::arith::ConstantIntOp::create(b, loc, b.getI64Type(), remaining);
      mlir::Value width = emitNextColumnTile(b, loc, r, maxCols);
      mlir::func::ReturnOp::create(b, loc, width);
      mlir::PassManager pm(&context);
      pm.addPass(mlir::createCanonicalizerPass());
      ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
      auto ret = llvm::cast<mlir::func::ReturnOp>(
          fn.getBody().front().getTerminator());
      auto folded =
          ret.getOperand(0).getDefiningOp<mlir::arith::ConstantIntOp>();
      ASSERT_TRUE(folded) << "remaining = " << remaining;
      EXPECT_EQ(folded.value(), nextColumnTile(remaining, maxCols))
          << "remaining = " << remaining << ", maxCols = " << maxCols;
    }
}

} // namespace
} // namespace kf::codegen
