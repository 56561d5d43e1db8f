//===- Bf16DotInstructions.cpp - BF16 dots by vdpbf16ps and bfdot ---------===//
//
// The packed bf16 pairs are the operand layout of both instructions: a lane
// of 32 bits per row holding elements 2g and 2g + 1, and the activation pair
// broadcast to every lane (vpbroadcastd / ld1r), so one instruction adds both
// products of the K-group to every row's fp32 accumulator.
//
// * AVX-512 BF16 `vdpbf16ps` (16 rows): adds the odd product, then the even
//   one, each rounded to nearest even; it treats bf16 inputs and fp32 results
//   below 2^-126 as zero (DAZ, FTZ) whatever MXCSR says.
// * AArch64 `bfdot` (4 rows): without FEAT_EBF16 (or with FPCR.EBF = 0) adds
//   the two products (exact for bf16), then that sum to the accumulator,
//   each rounded to odd (an error below one ulp, so the tests bound it with
//   a unit roundoff of 2^-23, not 2^-24), and flushes subnormal inputs and
//   results to zero.
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kf::codegen {
namespace {

class Bf16PairDot : public FloatDotEmitter {
public:
  explicit Bf16PairDot(StringRef intrinsic) : intrinsic(intrinsic) {}

  SmallVector<Value, 2> prepareWeights(OpBuilder &b, Location loc,
                                       Value lanes) const override {
    return {toPairs(b, loc, lanes)};
  }

  SmallVector<Value, 2> loadActivation(OpBuilder &b, Location loc, Value ptr,
                                       int64_t rows) const override {
    Value word = LLVM::LoadOp::create(b, loc, b.getI32Type(), ptr, 4);
    return {
        toPairs(b, loc,
                vector::BroadcastOp::create(
                    b, loc, VectorType::get({rows}, b.getI32Type()), word))};
  }

  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> weights,
                ArrayRef<Value> activation) const override {
    return emitIntrinsic(b, loc, intrinsic, acc.getType(),
                         {acc, weights.front(), activation.front()});
  }

private:
  /// vector<R x i32> as the vector<2R x bf16> the instructions take.
  static Value toPairs(OpBuilder &b, Location loc, Value words) {
    auto ints = cast<VectorType>(words.getType());
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2 * ints.getNumElements()}, b.getBF16Type()),
        words);
  }

  StringRef intrinsic;
};

} // namespace

std::unique_ptr<FloatDotEmitter> createAvx512Bf16DotEmitter() {
  return std::make_unique<Bf16PairDot>("llvm.x86.avx512bf16.dpbf16ps.512");
}

std::unique_ptr<FloatDotEmitter> createNeonBf16DotEmitter() {
  return std::make_unique<Bf16PairDot>("llvm.aarch64.neon.bfdot.v4f32.v8bf16");
}

} // namespace kf::codegen
