//===- FloatFmaDot.cpp - Float dots by multiply-add: F32, and widened BF16 ===//
//
// F32 weights on every ISA, and BF16 weights on the ISAs without a bf16 dot
// instruction (x86-64-v4 and other AVX-512 targets without avx512bf16, AVX2,
// NEON without bf16, the portable kernel). A bf16 value is the top half of
// the fp32 with the same value, so widening is integer work on the packed
// pair: a shift left by 16 gives element 2g of each row, a mask of the high
// half element 2g + 1; the activation word is widened the same way once per
// column and K-group. The products of two bf16 values are exact in fp32 (8-bit
// significands), so a multiply and an add round as one FMA does; the
// portable kernel therefore needs no FMA instruction for BF16 (it has none
// on x86-64-v2, where llvm.fma would become a library call), and rounds its
// F32 products once more than an FMA would.
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kf::codegen {
namespace {

class FloatFmaDot : public FloatDotEmitter {
public:
  FloatFmaDot(bool bf16, bool fused) : bf16(bf16), fused(fused) {}

  SmallVector<Value, 2> prepareWeights(OpBuilder &b, Location loc,
                                       Value lanes) const override {
    return toFloats(b, loc, lanes);
  }

  SmallVector<Value, 2> loadActivation(OpBuilder &b, Location loc, Value ptr,
                                       int64_t rows) const override {
    if (!bf16) {
      Value x = LLVM::LoadOp::create(b, loc, b.getF32Type(), ptr, 4);
      return {vector::BroadcastOp::create(
          b, loc, VectorType::get({rows}, b.getF32Type()), x)};
    }
    Value word = LLVM::LoadOp::create(b, loc, b.getI32Type(), ptr, 4);
    return toFloats(b, loc,
                    vector::BroadcastOp::create(
                        b, loc, VectorType::get({rows}, b.getI32Type()), word));
  }

  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> weights,
                ArrayRef<Value> activation) const override {
    // Element order: 2g, then 2g + 1.
    for (auto [w, x] : llvm::zip_equal(weights, activation))
      acc = fused ? vector::FMAOp::create(b, loc, w, x, acc).getResult()
                  : arith::AddFOp::create(b, loc, acc,
                                          arith::MulFOp::create(b, loc, w, x))
                        .getResult();
    return acc;
  }

private:
  /// A vector<R x i32> of packed words as the fp32 values they hold: one
  /// f32, or the two bf16 widened.
  SmallVector<Value, 2> toFloats(OpBuilder &b, Location loc,
                                 Value words) const {
    auto ints = cast<VectorType>(words.getType());
    auto floats = VectorType::get(ints.getShape(), b.getF32Type());
    if (!bf16)
      return {vector::BitCastOp::create(b, loc, floats, words)};
    Value even =
        arith::ShLIOp::create(b, loc, words, emitSplat(b, loc, ints, 16));
    Value odd = arith::AndIOp::create(
        b, loc, words,
        emitSplat(b, loc, ints, static_cast<int32_t>(0xffff0000u)));
    return {vector::BitCastOp::create(b, loc, floats, even),
            vector::BitCastOp::create(b, loc, floats, odd)};
  }

  bool bf16, fused;
};

} // namespace

std::unique_ptr<FloatDotEmitter> createFloatFmaDotEmitter(kf::Format format,
                                                          bool fused) {
  return std::make_unique<FloatFmaDot>(format == kf::Format::BF16, fused);
}

} // namespace kf::codegen
