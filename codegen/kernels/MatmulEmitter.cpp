//===- MatmulEmitter.cpp - Matmul kernel functions ------------------------===//
//
// A matmul kernel is the loop nest (MatmulLoopNest.cpp) around its family's
// block body: the int8 family's for the quantized formats, the float
// family's for BF16 and F32, chosen by the weight format. A kernel that
// quantizes its activations runs the nest on chunks of columns it has
// packed on its stack.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/MatmulEmitter.h"

#include "MatmulLoopNest.h"
#include "kf/Codegen/Emitters.h"
#include "kf/Tiling/ColumnTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kf::codegen {

void loadKernelDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                      scf::SCFDialect, vector::VectorDialect>();
}

func::FuncOp createKernelFunction(OpBuilder &b, Location &loc, ModuleOp module,
                                  StringRef name, TypeRange args,
                                  const target::TargetInfo &target) {
  MLIRContext *context = module.getContext();
  b.setInsertionPointToEnd(module.getBody());
  loc = NameLoc::get(b.getStringAttr(name));
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  fn->setAttr("target_cpu", b.getStringAttr(target.cpu));
  fn->setAttr("target_features", LLVM::TargetFeaturesAttr::get(
                                     context, target.getLLVMFeatureString()));
  // A kernel calls nothing outside itself, so that a library of kernels
  // loads without a libc: LLVM must not turn its loops into library calls
  // (the fused quantization's copy of F32 activations into memcpy).
  fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("no-builtins")}));
  b.setInsertionPointToStart(fn.addEntryBlock());
  return fn;
}

Value emitNextColumnTile(OpBuilder &b, Location loc, Value remaining,
                         int64_t maxCols) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  // Built from the narrowest width up, so that a wider width that qualifies
  // overrides: the result is the widest, as nextColumnTile's first match.
  Value fallback = constant(1);
  Value width = fallback;
  SmallVector<int64_t, 5> widths = tiling::columnTileWidths(maxCols);
  widths.pop_back(); // 1 is the fallback's start
  for (int64_t w : llvm::reverse(widths)) {
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       remaining, constant(w));
    Value leavesOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            remaining, constant(w + 1));
    Value ok = arith::AndIOp::create(
        b, loc, fits,
        arith::XOrIOp::create(b, loc, leavesOne,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
    fallback = arith::SelectOp::create(b, loc, fits, constant(w), fallback);
    width = arith::SelectOp::create(b, loc, ok, constant(w), width);
  }
  // No width qualified: the widest that fits (or 1).
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, width,
                                     constant(1));
  return arith::SelectOp::create(b, loc, none, fallback, width);
}

namespace {

// The columns of the next chunk a fused quantization packs, of `remaining`
// (>= 1): all of them when they fit in maxCols, else maxCols, or maxCols - 1
// where maxCols would leave one column alone, so that no call of m >= 2
// runs a 1-wide tile unless the kernel's widest tile is 2 or less. Weights
// are read once per chunk: --kf-select-kernels fuses calls of one column (a
// tuning rule may fuse others).
Value emitNextChunk(OpBuilder &b, Location loc, Value remaining,
                    int64_t maxCols) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value wide = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                     remaining, constant(maxCols));
  Value chunk =
      arith::SelectOp::create(b, loc, wide, constant(maxCols), remaining);
  if (maxCols <= 2)
    return chunk;
  Value leavesOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          remaining, constant(maxCols + 1));
  return arith::SelectOp::create(b, loc, leavesOne, constant(maxCols - 1),
                                 chunk);
}

// A kernel with fuseQuantize: x is m rows of K floats; each chunk of them is
// packed into the stack buffer and multiplied by the loop nest into its rows
// of y.
void emitFusedQuantizeNest(OpBuilder &b, Location loc,
                           const MatmulKernelSpec &spec, MatmulBlockBody &body,
                           const KernelArgs &args,
                           const target::TargetInfo &target) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  const QuantizeKernelSpec quantize{spec.k, spec.getActivationFormat()};
  Value packed = emitEntryAlloca(b, loc, b.getInsertionBlock(), b.getI8Type(),
                                 spec.getPrologueBytes());
  emitColumnLoop(b, loc, args.m, [&](Value col) {
    Value chunk = emitNextChunk(
        b, loc, arith::SubIOp::create(b, loc, args.m, col), spec.maxCols);
    Value x = emitByteOffset(
        b, loc, args.x,
        arith::MulIOp::create(b, loc, col, constant(4 * spec.k)));
    emitQuantizeColumns(b, loc, quantize, target, x, constant(spec.k), packed,
                        chunk);
    Value y = emitByteOffset(
        b, loc, args.y,
        arith::MulIOp::create(
            b, loc, arith::MulIOp::create(b, loc, col, args.ldy), constant(4)));
    emitMatmulLoopNest(
        b, loc, spec, body,
        {args.w, packed, y, args.ldy, chunk, args.nBegin, args.nEnd});
    return chunk;
  });
}

} // namespace

llvm::Expected<func::FuncOp>
buildMatmulKernel(ModuleOp module, const MatmulKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifyMatmulKernel(spec, target))
    return std::move(err);
  MLIRContext *context = module.getContext();
  loadKernelDialects(*context);
  OpBuilder b(context);
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  func::FuncOp fn =
      createKernelFunction(b, loc, module, spec.getSymbolName(),
                           {ptr, ptr, ptr, i64, i64, i64, i64}, target);
  Block *entry = &fn.front();
  KernelArgs args{entry->getArgument(0), entry->getArgument(1),
                  entry->getArgument(2), entry->getArgument(3),
                  entry->getArgument(4), entry->getArgument(5),
                  entry->getArgument(6)};
  std::unique_ptr<MatmulBlockBody> body =
      kf::isFloatFormat(spec.format)
          ? createFloatBlockBody(b, loc, spec)
          : createIntegerBlockBody(b, loc, spec, target);
  if (StringRef tuning = body->getTuningFeatures(); !tuning.empty())
    fn->setAttr("target_features", LLVM::TargetFeaturesAttr::get(
                                       context, target.getLLVMFeatureString() +
                                                    "," + tuning.str()));
  body->declareConstants(b, loc, module);
  if (spec.fuseQuantize)
    emitFusedQuantizeNest(b, loc, spec, *body, args, target);
  else
    emitMatmulLoopNest(b, loc, spec, *body, args);
  func::ReturnOp::create(b, loc);
  return fn;
}

} // namespace kf::codegen
