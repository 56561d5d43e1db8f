//===- QuantSimEmitter.cpp - The compiled kf.fp8_sim and kf.fp4_sim -------===//
//
// The golden's fp8Sim and fp4Sim (quant_sim.cpp), bit for bit, in vectors of
// 16 floats. Per block of a row's leading values:
//
// - amax = max |x|: the largest of the magnitudes' bit patterns (a
//   non-negative float orders as its bits do), exact in any order.
// - s = 2^k, k = ceil_log2(max(amax, floor) · fl32(1 / maxCode)): the fp32
//   product is the reference's multiply, and ceil_log2 reads its exponent
//   field, plus one if any mantissa bit is set, as the reference does. Both
//   floors keep k in [-126, 126], so s and 1 / s are normal floats.
// - x / s as x · (1 / s): both are the exact quotient x · 2^-k rounded once
//   (to a subnormal where it falls below 2^-126), so they are the same float.
// - clamp to ±maxCode, then round to the grid with `m` mantissa bits whose
//   smallest normal is 2^minExp: the grid's step is 2^(e - m), e the value's
//   exponent or minExp below it. |y| · 2^(m - e) is exact and below 2^(m+1),
//   so adding and removing 1.5 · 2^23 rounds it to an integer, ties to even,
//   as nearbyint does in the default rounding mode; times the step (exact),
//   with y's sign put back (nearbyint keeps the sign of a zero).
// - times s: the reference's multiply. The product needs no bf16 rounding
//   (a code of at most 4 significant bits times a normal power of two), and
//   the reference rounds none.
//
// A span's arithmetic is emitQuantSimSpan (RowArithmetic.h), which the
// compressor's kernel reuses for its entries.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/QuantSimKernel.h"

#include "RowArithmetic.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

/// A simulation's minifloat and scale, as quant_sim.cpp defines them.
struct MiniFloat {
  const char *opName;
  float maxCode;    ///< the largest code, and the clamp
  float floor;      ///< the smallest amax the scale is taken from
  int mantissaBits; ///< fraction bits of the grid
  int minExponent;  ///< exponent of the smallest normal code
};

MiniFloat getMiniFloat(QuantSimFormat format) {
  switch (format) {
  case QuantSimFormat::E4m3:
    return {"fp8_sim", 448.0f, 1e-4f, 3, -6};
  case QuantSimFormat::E2m1:
    return {"fp4_sim", 6.0f, 0x1.8p-124f /* 6 · 2^-126 */, 1, 0};
  }
  llvm_unreachable("a quant-sim format");
}

} // namespace

std::string QuantSimKernelSpec::getSymbolName() const {
  std::string name =
      llvm::formatv("kf_{0}_n{1}_b{2}", getMiniFloat(format).opName, rowLength,
                    block)
          .str();
  // A span of the whole row is the whole row's kernel.
  if (getSpan() != rowLength)
    name += llvm::formatv("_l{0}", leading).str();
  return name;
}

std::string QuantSimKernelSpec::describe() const {
  std::string text =
      llvm::formatv("{0} kernel [row = {1}, block = {2}",
                    getMiniFloat(format).opName, rowLength, block)
          .str();
  if (leading != 0)
    text += llvm::formatv(", leading = {0}", leading).str();
  return text + "]";
}

llvm::Error verifyQuantSimKernel(const QuantSimKernelSpec &spec) {
  if (spec.rowLength <= 0 || spec.rowLength % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected a row length that is a positive "
                      "multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  if (spec.block <= 0 || spec.block % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected a block that is a positive multiple of "
                      "{1}",
                      spec.describe(), kLanes)
            .str());
  if (spec.leading < 0 || spec.leading > spec.rowLength)
    return llvm::createStringError(
        spec.describe() + ": expected leading within the row (0: none)");
  if (spec.getSpan() % spec.block != 0)
    return llvm::createStringError(
        spec.describe() + ": expected the simulated span (leading, or the "
                          "row) to be a multiple of the block");
  return llvm::Error::success();
}

void emitQuantSimSpan(OpBuilder &b, Location loc, QuantSimFormat format,
                      Value x, Value y, int64_t span, int64_t block) {
  const MiniFloat mini = getMiniFloat(format);
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto words = VectorType::get({kLanes}, i32);
  auto word = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto f32Const = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  auto wordSplat = [&](int64_t v) { return emitSplat(b, loc, words, v); };
  auto toFloats = [&](Value v) -> Value {
    return arith::BitcastOp::create(b, loc, floats, v);
  };
  auto toWords = [&](Value v) -> Value {
    return arith::BitcastOp::create(b, loc, words, v);
  };
  const int64_t spanBytes = 4 * span;
  const int64_t blockBytes = 4 * block;
  const int64_t stepBytes = 4 * kLanes;

  auto blocks = scf::ForOp::create(b, loc, kb.index(0), kb.index(spanBytes),
                                   kb.index(blockBytes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(blocks.getBody());
  Value xBlock = emitByteOffset(b, loc, x, blocks.getInductionVar());
  Value yBlock = emitByteOffset(b, loc, y, blocks.getInductionVar());

  // amax: the largest magnitude's bits.
  auto amaxLoop =
      scf::ForOp::create(b, loc, kb.index(0), kb.index(blockBytes),
                         kb.index(stepBytes), ValueRange{wordSplat(0)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(amaxLoop.getBody());
    Value magnitude = arith::AndIOp::create(
        b, loc, kb.load(words, xBlock, amaxLoop.getInductionVar(), 4),
        wordSplat(0x7fffffff));
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::MaxUIOp::create(
                             b, loc, amaxLoop.getRegionIterArg(0), magnitude)});
  }
  Value amax = arith::BitcastOp::create(
      b, loc, f32,
      vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXUI,
                                  amaxLoop.getResult(0)));

  // k + 127 = the biased exponent of max(amax, floor) · fl32(1/maxCode),
  // plus one unless it is a power of two.
  Value amaxFloor = f32Const(mini.floor);
  Value a = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, amax, amaxFloor),
      amaxFloor, amax);
  Value product = arith::BitcastOp::create(
      b, loc, i32,
      arith::MulFOp::create(b, loc, a, f32Const(1.0f / mini.maxCode)));
  Value hasMantissa = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, product, word(0x7fffff)), word(0));
  Value biasedK = arith::AddIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, product, word(23)),
      arith::ExtUIOp::create(b, loc, i32, hasMantissa));
  auto powerOfTwo = [&](Value biased) -> Value {
    Value bits = vector::BroadcastOp::create(
        b, loc, words, arith::ShLIOp::create(b, loc, biased, word(23)));
    return toFloats(bits);
  };
  Value scale = powerOfTwo(biasedK);
  Value inverse = powerOfTwo(arith::SubIOp::create(b, loc, word(254), biasedK));

  Value maxCode = kb.splat(floats, mini.maxCode);
  Value minusMaxCode = kb.splat(floats, -mini.maxCode);
  Value roundingMagic = kb.splat(floats, 0x1.8p23f);
  kb.forEach(kb.index(0), kb.index(blockBytes), stepBytes, [&](Value offset) {
    Value v = arith::MulFOp::create(b, loc, kb.load(floats, xBlock, offset, 4),
                                    inverse);
    // std::clamp(v, -maxCode, maxCode).
    v = arith::SelectOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, v,
                              minusMaxCode),
        minusMaxCode,
        arith::SelectOp::create(b, loc,
                                arith::CmpFOp::create(b, loc,
                                                      arith::CmpFPredicate::OLT,
                                                      maxCode, v),
                                maxCode, v));
    Value bits = toWords(v);
    Value sign = arith::AndIOp::create(
        b, loc, bits, wordSplat(static_cast<int32_t>(0x80000000u)));
    Value magnitude =
        arith::AndIOp::create(b, loc, bits, wordSplat(0x7fffffff));
    // e + 127: the exponent field (0 below 2^-126), at least minExp's.
    Value exponent = arith::MaxSIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, magnitude, wordSplat(23)),
        wordSplat(mini.minExponent + 127));
    Value toSteps = toFloats(arith::ShLIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, wordSplat(254 + mini.mantissaBits),
                              exponent),
        wordSplat(23)));
    Value step = toFloats(arith::ShLIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, exponent, wordSplat(mini.mantissaBits)),
        wordSplat(23)));
    Value steps = arith::MulFOp::create(b, loc, toFloats(magnitude), toSteps);
    Value rounded = arith::SubFOp::create(
        b, loc, arith::AddFOp::create(b, loc, steps, roundingMagic),
        roundingMagic);
    Value code = toFloats(arith::OrIOp::create(
        b, loc, toWords(arith::MulFOp::create(b, loc, rounded, step)), sign));
    kb.store(arith::MulFOp::create(b, loc, code, scale), yBlock, offset,
             /*alignment=*/4);
  });
}

llvm::Expected<func::FuncOp>
buildQuantSimKernel(ModuleOp module, const QuantSimKernelSpec &spec,
                    const target::TargetInfo &target) {
  if (llvm::Error err = verifyQuantSimKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  auto words = VectorType::get({kLanes}, b.getI32Type());

  Value x = emitStepOperand(b, loc, args, 0);
  Value y = emitStepOperand(b, loc, args, 1);
  const int64_t rowBytes = 4 * spec.rowLength;
  const int64_t spanBytes = 4 * spec.getSpan();

  kb.forEach(args.begin, args.end, 1, [&](Value row) {
    Value rowOffset = arith::MulIOp::create(b, loc, row, kb.index(rowBytes));
    Value xRow = emitByteOffset(b, loc, x, rowOffset);
    Value yRow = emitByteOffset(b, loc, y, rowOffset);
    emitQuantSimSpan(b, loc, spec.format, xRow, yRow, spec.getSpan(),
                     spec.block);
    // The values past the span, unchanged.
    if (spanBytes < rowBytes)
      kb.forEach(kb.index(spanBytes), kb.index(rowBytes), 4 * kLanes,
                 [&](Value offset) {
                   kb.store(kb.load(words, xRow, offset, 4), yRow, offset, 4);
                 });
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
