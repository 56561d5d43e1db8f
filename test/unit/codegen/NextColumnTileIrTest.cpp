// The IR a kernel evaluates at run time to pick its next column tile agrees
// with the C++ rule (kf/Tiling/ColumnTiles.h, tested in
// test/unit/target/tiling).
#include "kf/Codegen/MatmulEmitter.h"
#include "kf/Tiling/ColumnTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "gtest/gtest.h"

namespace kf::codegen {
namespace {

// emitNextColumnTile on a constant folds to the constant nextColumnTile gives.
TEST(NextColumnTileIr, FoldsToTheRuleOfColumnTilesH) {
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
      EXPECT_EQ(folded.value(), tiling::nextColumnTile(remaining, maxCols))
          << "remaining = " << remaining << ", maxCols = " << maxCols;
    }
}

} // namespace
} // namespace kf::codegen
