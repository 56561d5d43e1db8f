//===- HcMix.cpp - What the hyper-connection kernels share ----------------===//
//
// The golden accumulates its dot products and sums one term at a time, from
// 0, in fp64. The kernels keep that order: a sum over a stream's values runs
// through ordered vector reductions (vector.reduction without reassociation
// lowers to LLVM's sequential llvm.vector.reduce.fadd), a sum over streams
// is an elementwise chain, and every product of two floats is exact in fp64.
// So each sum is the golden's to the bit; what parallelism there is comes
// from independent sums in flight together.
//
//===----------------------------------------------------------------------===//

#include "HcMix.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/HcPreKernel.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <utility>

using namespace mlir;

namespace kf::codegen::hc {

namespace {

/// Dot products in flight per pass over a token's streams: enough
/// independent chains to cover the fp64 adder's latency, few enough that
/// their accumulators stay in registers.
constexpr int64_t kChains = 8;

Value f64Splat(OpBuilder &b, Location loc, VectorType type, double v) {
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF64FloatAttr(v)));
}

Value f64Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF64Type(),
                                        llvm::APFloat(v));
}

} // namespace

llvm::Error verifyShape(const std::string &what, int64_t mult, int64_t d) {
  if (mult < 1 || mult > kMaxHcMult)
    return llvm::createStringError(
        llvm::formatv("{0}: expected mult in [1, {1}]", what, kMaxHcMult)
            .str());
  if (d <= 0 || d % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}", what,
                      kLanes)
            .str());
  return llvm::Error::success();
}

llvm::Error verifyEpsilons(const std::string &what, float eps, float normEps) {
  for (auto [name, value] : {std::pair("eps", eps), {"norm_eps", normEps}})
    if (!std::isfinite(value) || value < 0)
      return llvm::createStringError(
          llvm::formatv("{0}: expected a finite {1} >= 0", what, name).str());
  return llvm::Error::success();
}

std::string getSymbolName(StringRef op, int64_t mult, int64_t d) {
  return llvm::formatv("kf_{0}_m{1}_d{2}", op, mult, d).str();
}

std::string describe(StringRef op, int64_t mult, int64_t d, StringRef more) {
  return llvm::formatv("{0} kernel [mult = {1}, D = {2}{3}]", op, mult, d, more)
      .str();
}

std::string getBitsHex(float v) {
  return llvm::formatv(
             "{0}", llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(v), 8))
      .str();
}

func::FuncOp buildTokenKernel(ModuleOp module, StringRef name,
                              const target::TargetInfo &target,
                              int64_t operandCount, TokenBody body) {
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args = createStepKernelFunction(b, loc, module, name, target);
  SmallVector<Value> operands;
  for (int64_t i = 0; i < operandCount; ++i)
    operands.push_back(emitStepOperand(b, loc, args, i));
  auto tokens =
      scf::ForOp::create(b, loc, args.begin, args.end, emitIndex(b, loc, 1));
  b.setInsertionPointToStart(tokens.getBody());
  body(b, loc, operands, tokens.getInductionVar());
  b.setInsertionPointAfter(tokens);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

Value emitTokenRow(OpBuilder &b, Location loc, Value ptr, Value token,
                   int64_t floats) {
  return emitByteOffset(
      b, loc, ptr,
      arith::MulIOp::create(b, loc, token, emitIndex(b, loc, 4 * floats)));
}

Value emitIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

Value emitLoadFloats(OpBuilder &b, Location loc, Value ptr, Value bytes,
                     int64_t lanes) {
  return LLVM::LoadOp::create(b, loc, VectorType::get({lanes}, b.getF32Type()),
                              emitByteOffset(b, loc, ptr, bytes),
                              /*alignment=*/4);
}

Value emitLoadFloat(OpBuilder &b, Location loc, Value ptr, int64_t index) {
  return LLVM::LoadOp::create(b, loc, b.getF32Type(),
                              emitByteOffset(b, loc, ptr, 4 * index),
                              /*alignment=*/4);
}

Value emitBroadcast(OpBuilder &b, Location loc, Value value, int64_t lanes) {
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({lanes}, value.getType()), value);
}

SmallVector<Value> emitMixes(OpBuilder &b, Location loc, Value z, Value fn,
                             int64_t width, int64_t rows, float normEps) {
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto doubles = VectorType::get({kLanes}, f64);
  auto widen = [&](Value floats) -> Value {
    return arith::ExtFOp::create(b, loc, doubles, floats);
  };
  auto accumulate = [&](Value products, Value acc) -> Value {
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                       products, acc);
  };
  const int64_t rowBytes = 4 * width;
  SmallVector<Value> dots;
  Value sumOfSquares;
  // Passes of kChains rows each; the first also sums the squares.
  for (int64_t first = 0; first < rows; first += kChains) {
    const int64_t count = std::min(kChains, rows - first);
    const bool squares = first == 0;
    SmallVector<Value> rowStart;
    for (int64_t i = 0; i < count; ++i)
      rowStart.push_back(emitByteOffset(b, loc, fn, (first + i) * rowBytes));
    SmallVector<Value> init(count + (squares ? 1 : 0), f64Const(b, loc, 0.0));
    auto loop = scf::ForOp::create(b, loc, emitIndex(b, loc, 0),
                                   emitIndex(b, loc, rowBytes),
                                   emitIndex(b, loc, 4 * kLanes), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value offset = loop.getInductionVar();
      Value values = widen(emitLoadFloats(b, loc, z, offset, kLanes));
      SmallVector<Value> next;
      for (int64_t i = 0; i < count; ++i) {
        Value w = widen(emitLoadFloats(b, loc, rowStart[i], offset, kLanes));
        next.push_back(accumulate(arith::MulFOp::create(b, loc, values, w),
                                  loop.getRegionIterArg(i)));
      }
      if (squares)
        next.push_back(accumulate(arith::MulFOp::create(b, loc, values, values),
                                  loop.getRegionIterArg(count)));
      scf::YieldOp::create(b, loc, next);
    }
    for (int64_t i = 0; i < count; ++i)
      dots.push_back(loop.getResult(i));
    if (squares)
      sumOfSquares = loop.getResult(count);
  }

  // inverseRms: mean and var in fp32, the inverse root in fp64.
  Value mean = arith::TruncFOp::create(
      b, loc, f32,
      arith::DivFOp::create(b, loc, sumOfSquares,
                            f64Const(b, loc, static_cast<double>(width))));
  Value var = arith::AddFOp::create(
      b, loc, mean,
      arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                     llvm::APFloat(normEps)));
  Value r = arith::TruncFOp::create(
      b, loc, f32,
      arith::DivFOp::create(
          b, loc, f64Const(b, loc, 1.0),
          LLVM::SqrtOp::create(b, loc,
                               arith::ExtFOp::create(b, loc, f64, var))));
  SmallVector<Value> m;
  for (Value dot : dots)
    m.push_back(arith::MulFOp::create(
        b, loc, arith::TruncFOp::create(b, loc, f32, dot), r));
  return m;
}

Value emitSigmoid(OpBuilder &b, Location loc, Value x) {
  auto floats = cast<VectorType>(x.getType());
  auto doubles = VectorType::get(floats.getShape(), b.getF64Type());
  Value one = f64Splat(b, loc, doubles, 1.0);
  Value e = emitExp(
      b, loc,
      arith::NegFOp::create(b, loc, arith::ExtFOp::create(b, loc, doubles, x)));
  return arith::TruncFOp::create(
      b, loc, floats,
      arith::DivFOp::create(b, loc, one,
                            arith::AddFOp::create(b, loc, one, e)));
}

Value emitVectorOf(OpBuilder &b, Location loc, ArrayRef<Value> parts) {
  return vector::FromElementsOp::create(
      b, loc,
      VectorType::get({static_cast<int64_t>(parts.size())},
                      parts.front().getType()),
      parts);
}

Value emitPreWeights(OpBuilder &b, Location loc, ArrayRef<Value> m, Value base,
                     Value scale, float eps) {
  const int64_t mult = static_cast<int64_t>(m.size());
  Value arg = arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, emitBroadcast(b, loc, scale, mult),
                            emitVectorOf(b, loc, m)),
      emitLoadFloats(b, loc, base, emitIndex(b, loc, 0), mult));
  Value epsSplat = arith::ConstantOp::create(
      b, loc, VectorType::get({mult}, b.getF32Type()),
      DenseElementsAttr::get(VectorType::get({mult}, b.getF32Type()),
                             b.getF32FloatAttr(eps)));
  return arith::AddFOp::create(b, loc, emitSigmoid(b, loc, arg), epsSplat);
}

void emitWeightedStreamSum(OpBuilder &b, Location loc, Value streams,
                           Value weights, int64_t d, Value out) {
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  const int64_t mult = cast<VectorType>(weights.getType()).getNumElements();
  SmallVector<Value> weightSplats, streamStart;
  for (int64_t j = 0; j < mult; ++j) {
    Value w = arith::ExtFOp::create(
        b, loc, b.getF64Type(),
        Value(vector::ExtractOp::create(b, loc, weights, j)));
    weightSplats.push_back(emitBroadcast(b, loc, w, kLanes));
    streamStart.push_back(emitByteOffset(b, loc, streams, 4 * j * d));
  }
  Value zeros = f64Splat(b, loc, doubles, 0.0);
  auto loop =
      scf::ForOp::create(b, loc, emitIndex(b, loc, 0), emitIndex(b, loc, 4 * d),
                         emitIndex(b, loc, 4 * kLanes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value offset = loop.getInductionVar();
  Value sum = zeros;
  for (int64_t j = 0; j < mult; ++j) {
    Value values = arith::ExtFOp::create(
        b, loc, doubles,
        emitLoadFloats(b, loc, streamStart[j], offset, kLanes));
    sum = arith::AddFOp::create(
        b, loc, sum, arith::MulFOp::create(b, loc, weightSplats[j], values));
  }
  LLVM::StoreOp::create(
      b, loc,
      emitRoundToBf16(b, loc, arith::TruncFOp::create(b, loc, floats, sum)),
      emitByteOffset(b, loc, out, offset), /*alignment=*/4);
}

} // namespace kf::codegen::hc
