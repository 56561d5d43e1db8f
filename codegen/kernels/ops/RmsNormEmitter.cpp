//===- RmsNormEmitter.cpp - The compiled kf.rms_norm ----------------------===//
//
// The reference's arithmetic (the DeepSeek-V4 golden, docs/engine.md, "Op
// kernels"), in vectors of 16 floats:
//
// - f32 compute: mean = fp32(sum of x² in fp64 / D), var = mean + eps in
//   fp32, r = fp32(1 / sqrt(var) in fp64), y = bf16(w · (x · r)). Each x² is
//   exact in fp64 (24-bit mantissas, 48-bit product); the sum runs in 16
//   lanes and is then reduced, where the reference adds in row order, so the
//   fp64 sums may differ in their last bits — which changes mean only when
//   it lies within that of an fp32 rounding boundary.
// - bf16 compute (weightless): mean = bf16(fp32(sum of bf16(x²) / D)), var
//   = bf16(mean + eps), r = bf16(fp32(1 / sqrt(var))), y = bf16(x · r). The
//   bf16 squares have 8 significant bits, so their fp64 sum is exact, and
//   equal in any order, whenever they lie within 2^45 of each other.
//
// The row's arithmetic is emitRmsNormRow (RowArithmetic.h), which can also
// add the squares one at a time in row order, the golden's order, for a
// kernel that norms one row now and then (the compressor's entry) and so
// can afford the chain of fp64 additions to be bit for bit whatever the
// values; the kf.rms_norm kernel takes the 16 lanes.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/RmsNormKernel.h"

#include "RowArithmetic.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

} // namespace

std::string RmsNormKernelSpec::getSymbolName() const {
  return llvm::formatv(
             "kf_rms_norm_d{0}_{1}_e{2}{3}", d, weighted ? "w" : "nw",
             llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(eps), 8),
             bf16Compute ? "_bf16" : "")
      .str();
}

std::string RmsNormKernelSpec::describe() const {
  return llvm::formatv("rms_norm kernel [D = {0}, {1}, eps = {2}{3}]", d,
                       weighted ? "weighted" : "weightless",
                       formatShortest(eps), bf16Compute ? ", bf16 compute" : "")
      .str();
}

llvm::Error verifyRmsNormKernel(const RmsNormKernelSpec &spec) {
  if (spec.d <= 0 || spec.d % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  if (!std::isfinite(spec.eps) || spec.eps < 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected a finite eps >= 0");
  if (spec.bf16Compute && spec.weighted)
    return llvm::createStringError(
        spec.describe() +
        ": a bf16 compute is the weightless per-head scaling");
  return llvm::Error::success();
}

void emitRmsNormRow(OpBuilder &b, Location loc, Value x, Value weight, Value y,
                    int64_t d, float eps, bool bf16Compute,
                    SquareSumOrder order) {
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, f64);
  auto f32Const = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  auto f64Const = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64),
                                          llvm::APFloat(v));
  };
  // One float rounded to bf16, through the vector rounding.
  auto roundBf16 = [&](Value v) -> Value {
    Value lane =
        vector::BroadcastOp::create(b, loc, VectorType::get({1}, f32), v);
    return vector::ExtractOp::create(b, loc, emitRoundToBf16(b, loc, lane), 0);
  };
  // x² in fp64: exact from the fp32 x; or bf16(x²) in fp32, as the bf16
  // compute squares.
  auto square = [&](Value v, Type wideType) -> Value {
    if (bf16Compute) {
      Value sq = arith::MulFOp::create(b, loc, v, v);
      sq = isa<VectorType>(v.getType()) ? emitRoundToBf16(b, loc, sq)
                                        : roundBf16(sq);
      return arith::ExtFOp::create(b, loc, wideType, sq);
    }
    Value wide = arith::ExtFOp::create(b, loc, wideType, v);
    return arith::MulFOp::create(b, loc, wide, wide);
  };
  const int64_t rowBytes = 4 * d;

  Value sum;
  if (order == SquareSumOrder::Lanes) {
    // The sum of squares, 16 lanes of fp64.
    Value zeros = arith::ConstantOp::create(
        b, loc, doubles, DenseElementsAttr::get(doubles, b.getF64FloatAttr(0)));
    auto sumLoop = scf::ForOp::create(b, loc, kb.index(0), kb.index(rowBytes),
                                      kb.index(4 * kLanes), ValueRange{zeros});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(sumLoop.getBody());
      Value v = kb.load(floats, x, sumLoop.getInductionVar(), 4);
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::AddFOp::create(b, loc, sumLoop.getRegionIterArg(0),
                                           square(v, doubles))});
    }
    sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                      sumLoop.getResult(0));
  } else {
    // The golden's `double sumSq = 0; sumSq += x²` in row order.
    auto sumLoop = scf::ForOp::create(b, loc, kb.index(0), kb.index(rowBytes),
                                      kb.index(4), ValueRange{f64Const(0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(sumLoop.getBody());
      Value v = kb.load(f32, x, sumLoop.getInductionVar(), 4);
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::AddFOp::create(b, loc, sumLoop.getRegionIterArg(0),
                                           square(v, f64))});
    }
    sum = sumLoop.getResult(0);
  }

  // mean, var and the inverse root, each rounded where the reference is.
  Value mean = arith::TruncFOp::create(
      b, loc, f32,
      arith::DivFOp::create(b, loc, sum, f64Const(static_cast<double>(d))));
  if (bf16Compute)
    mean = roundBf16(mean);
  Value var = arith::AddFOp::create(b, loc, mean, f32Const(eps));
  if (bf16Compute)
    var = roundBf16(var);
  Value r = arith::TruncFOp::create(
      b, loc, f32,
      arith::DivFOp::create(
          b, loc, f64Const(1.0),
          LLVM::SqrtOp::create(b, loc,
                               arith::ExtFOp::create(b, loc, f64, var))));
  if (bf16Compute)
    r = roundBf16(r);
  Value rSplat = vector::BroadcastOp::create(b, loc, floats, r);

  // y = bf16(w · (x · r)), or bf16(x · r).
  kb.forEach(kb.index(0), kb.index(rowBytes), 4 * kLanes, [&](Value offset) {
    Value v =
        arith::MulFOp::create(b, loc, kb.load(floats, x, offset, 4), rSplat);
    if (weight)
      v = arith::MulFOp::create(b, loc, kb.load(floats, weight, offset, 4), v);
    kb.store(emitRoundToBf16(b, loc, v), y, offset, /*alignment=*/4);
  });
}

llvm::Expected<func::FuncOp>
buildRmsNormKernel(ModuleOp module, const RmsNormKernelSpec &spec,
                   const target::TargetInfo &target) {
  if (llvm::Error err = verifyRmsNormKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);

  int64_t next = 0;
  Value x = emitStepOperand(b, loc, args, next++);
  Value weight =
      spec.weighted ? emitStepOperand(b, loc, args, next++) : Value();
  Value y = emitStepOperand(b, loc, args, next++);
  const int64_t rowBytes = 4 * spec.d;

  kb.forEach(args.begin, args.end, 1, [&](Value row) {
    Value rowOffset = arith::MulIOp::create(b, loc, row, kb.index(rowBytes));
    emitRmsNormRow(b, loc, emitByteOffset(b, loc, x, rowOffset), weight,
                   emitByteOffset(b, loc, y, rowOffset), spec.d, spec.eps,
                   spec.bf16Compute, SquareSumOrder::Lanes);
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
