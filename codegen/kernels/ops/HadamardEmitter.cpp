//===- HadamardEmitter.cpp - The compiled kf.hadamard ---------------------===//
//
// The golden's hadamard (hadamard.cpp) sums y_i = Σ_j ±x_j in fp64 in j
// order, one output at a time (n² additions), then rounds bf16(fp32(y_i ·
// fl64(1 / sqrt(n)))). The kernel takes the same sums by the fast transform:
// log2(n) stages of butterflies (a, b) -> (a + b, a - b) in fp64, those
// within a vector of 16 lanes by shuffles and those across vectors through a
// row of fp64 values on the stack, then the reference's multiply and its two
// roundings.
//
// Every value either order forms is a signed sum of some of the row's
// floats: a multiple of the smallest ulp among them, 2^(e_min - 23) (e_min
// the smallest exponent, -126 for subnormals), and below n · 2^(e_max + 1).
// Where those span at most 53 bits, e_max - e_min <= 29 - log2(n) (22
// binades for n = 128), every addition of both orders is exact, the sums
// are equal and so are the outputs, bit for bit. Wider rows round: the
// reference's sum by at most (n - 1) · 2^-53 · Σ|x_j|, the butterflies' by at
// most log2(n) · 2^-53 · Σ|x_j| (to first order); the roundings after are
// monotone, so the outputs differ by at most the sum of the two times n^-1/2,
// plus one bf16 ulp.
//
// The row's transform is emitFastHadamardRow (RowArithmetic.h). Next to it,
// emitHadamardRowInOrder takes the golden's sums themselves, in j order, 16
// outputs at a time: n² additions rather than n log2 n, bit for bit whatever
// the values, for a kernel that transforms one short row now and then (the
// indexer compressor's entry of 128 values, once per 4 tokens).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/HadamardKernel.h"

#include "RowArithmetic.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kMaxLanes = 16;

} // namespace

std::string HadamardKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_hadamard_n{0}", n).str();
}

std::string HadamardKernelSpec::describe() const {
  return llvm::formatv("hadamard kernel [n = {0}]", n).str();
}

llvm::Error verifyHadamardKernel(const HadamardKernelSpec &spec) {
  if (spec.n <= 0 || !llvm::isPowerOf2_64(static_cast<uint64_t>(spec.n)) ||
      spec.n > HadamardKernelSpec::kMaxN)
    return llvm::createStringError(
        llvm::formatv("{0}: expected n a power of two up to {1}",
                      spec.describe(), HadamardKernelSpec::kMaxN)
            .str());
  return llvm::Error::success();
}

Value emitHadamardScratch(OpBuilder &b, Location loc, int64_t n) {
  KernelBuilder kb(b, loc);
  return LLVM::AllocaOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext()),
                                b.getF64Type(), kb.index(n), /*alignment=*/64);
}

void emitFastHadamardRow(OpBuilder &b, Location loc, Value x, Value y,
                         int64_t n, Value scratch) {
  KernelBuilder kb(b, loc);
  // A row shorter than a vector is one vector.
  const int64_t lanes = std::min(n, kMaxLanes);
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto floats = VectorType::get({lanes}, f32);
  auto doubles = VectorType::get({lanes}, f64);
  const int64_t vectorBytes = 8 * lanes;
  const double norm = 1.0 / std::sqrt(static_cast<double>(n));
  Value sums = scratch;

  // The stages within a vector: lane i meets lane i ^ h; the lane with bit h
  // clear takes the sum, the other the difference (low - high).
  kb.forEach(kb.index(0), kb.index(n), lanes, [&](Value element) {
    Value v = arith::ExtFOp::create(
        b, loc, doubles,
        kb.load(floats, x, arith::MulIOp::create(b, loc, element, kb.index(4)),
                4));
    for (int64_t h = 1; h < lanes; h *= 2) {
      SmallVector<int64_t, kMaxLanes> low, high;
      SmallVector<bool, kMaxLanes> isHigh;
      for (int64_t i = 0; i < lanes; ++i) {
        low.push_back(i & ~h);
        high.push_back(i | h);
        isHigh.push_back((i & h) != 0);
      }
      Value a = vector::ShuffleOp::create(b, loc, v, v, low);
      Value c = vector::ShuffleOp::create(b, loc, v, v, high);
      Value mask = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(VectorType::get({lanes}, b.getI1Type()),
                                 ArrayRef<bool>(isHigh)));
      v = arith::SelectOp::create(b, loc, mask,
                                  arith::SubFOp::create(b, loc, a, c),
                                  arith::AddFOp::create(b, loc, a, c));
    }
    kb.store(v, sums, arith::MulIOp::create(b, loc, element, kb.index(8)), 8);
  });

  // The stages across vectors, h = lanes .. n/2: in each group of 2h
  // values, value j meets value j + h.
  for (int64_t h = lanes; h < n; h *= 2) {
    const int64_t halfBytes = 8 * h;
    kb.forEach(kb.index(0), kb.index(8 * n), 2 * halfBytes, [&](Value group) {
      kb.forEach(
          kb.index(0), kb.index(halfBytes), vectorBytes, [&](Value offset) {
            Value lowOffset = arith::AddIOp::create(b, loc, group, offset);
            Value highOffset =
                arith::AddIOp::create(b, loc, lowOffset, kb.index(halfBytes));
            Value a = kb.load(doubles, sums, lowOffset, 8);
            Value c = kb.load(doubles, sums, highOffset, 8);
            kb.store(arith::AddFOp::create(b, loc, a, c), sums, lowOffset, 8);
            kb.store(arith::SubFOp::create(b, loc, a, c), sums, highOffset, 8);
          });
    });
  }

  // bf16(fp32(sum · n^-1/2)).
  Value scale = kb.splat(doubles, norm);
  kb.forEach(kb.index(0), kb.index(n), lanes, [&](Value element) {
    Value scaled = arith::MulFOp::create(
        b, loc,
        kb.load(doubles, sums,
                arith::MulIOp::create(b, loc, element, kb.index(8)), 8),
        scale);
    kb.store(emitRoundToBf16(b, loc,
                             arith::TruncFOp::create(b, loc, floats, scaled)),
             y, arith::MulIOp::create(b, loc, element, kb.index(4)), 4);
  });
}

// Output i = 16I + l (lane l of group I) takes ±x_j, j = 16J + m, with the
// sign of parity(i & j) = parity(I & J) xor parity(l & m): per block J of
// 16 inputs, the block negated where parity(I & J) is odd, then each of its
// 16 values broadcast and negated in the lanes l where parity(l & m) is
// (a constant mask per m), added in j order.
void emitHadamardRowInOrder(OpBuilder &b, Location loc, Value x, Value y,
                            int64_t n) {
  KernelBuilder kb(b, loc);
  auto floats = VectorType::get({kMaxLanes}, b.getF32Type());
  auto doubles = VectorType::get({kMaxLanes}, b.getF64Type());
  auto masks = VectorType::get({kMaxLanes}, b.getI1Type());
  const double norm = 1.0 / std::sqrt(static_cast<double>(n));
  auto shiftRight = [&](Value v, int64_t bits) -> Value {
    return arith::ShRUIOp::create(b, loc, v, kb.index(bits));
  };
  // parity(l & m) for each lane l, one mask per m.
  SmallVector<Value, kMaxLanes> negated;
  for (int64_t m = 0; m < kMaxLanes; ++m) {
    SmallVector<bool, kMaxLanes> odd;
    for (int64_t l = 0; l < kMaxLanes; ++l)
      odd.push_back(llvm::popcount(static_cast<uint64_t>(l & m)) % 2 != 0);
    negated.push_back(arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(masks, ArrayRef<bool>(odd))));
  }

  kb.forEach(kb.index(0), kb.index(n / kMaxLanes), 1, [&](Value group) {
    // The golden's `double sum = 0`: +0.
    auto blocks =
        scf::ForOp::create(b, loc, kb.index(0), kb.index(n / kMaxLanes),
                           kb.index(1), ValueRange{kb.splat(doubles, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(blocks.getBody());
      Value block = blocks.getInductionVar();
      // parity(I & J), I & J < 2^8 (n <= 4096).
      Value bits = arith::AndIOp::create(b, loc, group, block);
      for (int64_t shift : {4, 2, 1})
        bits = arith::XOrIOp::create(b, loc, bits, shiftRight(bits, shift));
      Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), bits);
      Value v = arith::ExtFOp::create(
          b, loc, doubles,
          kb.load(floats, x,
                  arith::MulIOp::create(b, loc, block, kb.index(4 * kMaxLanes)),
                  4));
      v = arith::SelectOp::create(b, loc, odd, arith::NegFOp::create(b, loc, v),
                                  v);
      Value sum = blocks.getRegionIterArg(0);
      for (int64_t m = 0; m < kMaxLanes; ++m) {
        Value term = vector::BroadcastOp::create(
            b, loc, doubles, vector::ExtractOp::create(b, loc, v, m));
        sum = arith::AddFOp::create(
            b, loc, sum,
            arith::SelectOp::create(b, loc, negated[m],
                                    arith::NegFOp::create(b, loc, term), term));
      }
      scf::YieldOp::create(b, loc, ValueRange{sum});
    }
    // bf16(fp32(sum · n^-1/2)).
    Value scaled = arith::MulFOp::create(b, loc, blocks.getResult(0),
                                         kb.splat(doubles, norm));
    kb.store(emitRoundToBf16(b, loc,
                             arith::TruncFOp::create(b, loc, floats, scaled)),
             y, arith::MulIOp::create(b, loc, group, kb.index(4 * kMaxLanes)),
             4);
  });
}

llvm::Expected<func::FuncOp>
buildHadamardKernel(ModuleOp module, const HadamardKernelSpec &spec,
                    const target::TargetInfo &target) {
  if (llvm::Error err = verifyHadamardKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);

  Value x = emitStepOperand(b, loc, args, 0);
  Value y = emitStepOperand(b, loc, args, 1);
  // The row's fp64 values, at the entry so that LLVM allocates it once.
  Value scratch = emitHadamardScratch(b, loc, spec.n);
  const int64_t rowBytes = 4 * spec.n;

  kb.forEach(args.begin, args.end, 1, [&](Value row) {
    Value rowOffset = arith::MulIOp::create(b, loc, row, kb.index(rowBytes));
    emitFastHadamardRow(b, loc, emitByteOffset(b, loc, x, rowOffset),
                        emitByteOffset(b, loc, y, rowOffset), spec.n, scratch);
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
