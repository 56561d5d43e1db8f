//===- Avx2Dot.cpp - The AVX2 dot emitter: vpmaddubsw + vpmaddwd ----------===//
//
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into i16 with
// signed saturation; vpmaddwd against ones adds those pairs into i32. The sums
// must never saturate, which decides how lanes are fed:
//  * lanes of at most 7 bits (Q4_0's nibbles, 0..15; MXFP4's looked-up
//    lanes, 0..24, 5 bits; IQ2_XXS's 0..86) go in as they are: a pair is at
//    most 2 * (2^bits - 1) * 127 (3810 for Q4_0, 7874 for MXFP4, 32258 for 7
//    bits), so the i16 results of several operands are added before one
//    vpmaddwd while they stay below 2^15 (one operand at 7 bits);
//  * 8-bit lanes (Q8_0's w + 128, up to 255) would reach 2 * 255 * 127 and
//    saturate, so the signed weight w is restored (xor 0x80) and multiplied as
//    |w| * (sign(w) * x) (vpsignb): pairs of at most 2 * 128 * 127 = 32512,
//    and no correction is needed.
// Both bounds rely on |x| <= 127, which the activation packer guarantees.
// vpmaddwd's multiplier is ones for a plain dot; for a sub-block's scaled dot
// it is the scale in both halves (s, s), which scales the i16 pair sums
// before they widen: at most 2 * 32767 * 32767 < 2^31, so no vpmulld.
// Table lookups of up to 16 bytes are one vpshufb; up to 64, one vpshufb per
// 16 bytes and blends by index bits 4 and 5 (emitSplitPshufbLookup).
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

constexpr int64_t kMaxActivation = 127;
constexpr int64_t kI16Max = 32767;

bool needsSignedWeights(LaneRange range) { return range.bits > 7; }

class Avx2Dot : public DotEmitter, public ScaledSubBlockDot {
public:
  int64_t getCorrectionOffset(LaneRange range) const override {
    assert(!range.isSigned && "reads the unsigned layouts");
    return needsSignedWeights(range) ? 0 : range.offset;
  }

  Value prepareLanes(OpBuilder &b, Location loc, Value lanes,
                     LaneRange range) const override {
    if (!needsSignedWeights(range))
      return lanes;
    auto type = cast<VectorType>(lanes.getType());
    return arith::XOrIOp::create(b, loc, lanes,
                                 emitSplat(b, loc, type, 0x80 - 0x100));
  }

  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> lanes,
                ArrayRef<Value> acts, LaneRange range) const override {
    return emitDotTimes(b, loc, acc, lanes, acts, range,
                        emitSplat(b, loc, pairsType(b), 1));
  }

  const ScaledSubBlockDot *getScaledSubBlockDot() const override {
    return this;
  }

  // (s & 0xffff) | s << 16: the scale in both halves.
  Value prepareScale(OpBuilder &b, Location loc, Value scale) const override {
    return emitInt16Pairs(b, loc, scale, scale);
  }

  Value emitScaledDot(OpBuilder &b, Location loc, Value acc,
                      ArrayRef<Value> lanes, ArrayRef<Value> acts, Value scale,
                      LaneRange range) const override {
    return emitDotTimes(b, loc, acc, lanes, acts, range,
                        vector::BitCastOp::create(b, loc, pairsType(b), scale));
  }

  Value emitPairDot(OpBuilder &b, Location loc, Value acc, Value x,
                    Value y) const override {
    return emitMaddAdd(b, loc, acc,
                       vector::BitCastOp::create(b, loc, pairsType(b), x),
                       vector::BitCastOp::create(b, loc, pairsType(b), y));
  }

  // vpshufb: each index byte picks a byte of its 128-bit lane; one per 16
  // bytes of the table, and blends among them.
  Value emitTableLookup(OpBuilder &b, Location loc, Value indices,
                        ArrayRef<int8_t> table) const override {
    if (table.size() > 64)
      return emitSelectTableLookup(b, loc, indices, table);
    return emitSplitPshufbLookup(b, loc, "llvm.x86.avx2.pshuf.b", indices,
                                 table);
  }

private:
  static VectorType pairsType(OpBuilder &b) {
    return VectorType::get({16}, b.getI16Type());
  }

  /// `acc` (vector<8 x i32>) plus vpmaddwd of the i16 vectors x and y: per
  /// i32 lane, the sum of its two i16 products.
  static Value emitMaddAdd(OpBuilder &b, Location loc, Value acc, Value x,
                           Value y) {
    Value sums =
        emitIntrinsic(b, loc, "llvm.x86.avx2.pmadd.wd", acc.getType(), {x, y});
    return arith::AddIOp::create(b, loc, acc, sums);
  }

  /// `acc` plus the i16 pair sums of the products, each pair sum times the
  /// multiplier's i16 in its place (vpmaddwd).
  Value emitDotTimes(OpBuilder &b, Location loc, Value acc,
                     ArrayRef<Value> lanes, ArrayRef<Value> acts,
                     LaneRange range, Value multiplier) const {
    auto i16Type = pairsType(b);
    auto widen = [&](Value pairs) {
      acc = emitMaddAdd(b, loc, acc, pairs, multiplier);
    };

    if (needsSignedWeights(range)) {
      for (auto [w, x] : llvm::zip_equal(lanes, acts)) {
        // |w| as unsigned is right even for w = -128 (0x80 = 128), and
        // x * sign(w) cannot overflow since |x| <= 127. The |w| of a lane
        // vector is the same for every column; LLVM's CSE keeps one.
        Value zero = emitSplat(b, loc, cast<VectorType>(w.getType()), 0);
        Value negW = arith::SubIOp::create(b, loc, zero, w);
        Value absW = arith::MaxSIOp::create(b, loc, w, negW);
        Value signedX =
            emitIntrinsic(b, loc, "llvm.x86.avx2.psign.b", x.getType(), {x, w});
        widen(emitIntrinsic(b, loc, "llvm.x86.avx2.pmadd.ub.sw", i16Type,
                            {absW, signedX}));
      }
      return acc;
    }

    // Add the i16 pair sums of as many operands as stay below 2^15.
    int64_t pairMax = 2 * ((int64_t(1) << range.bits) - 1) * kMaxActivation;
    int64_t perWiden = std::max<int64_t>(1, kI16Max / pairMax);
    Value pending;
    int64_t count = 0;
    for (auto [w, x] : llvm::zip_equal(lanes, acts)) {
      Value pairs =
          emitIntrinsic(b, loc, "llvm.x86.avx2.pmadd.ub.sw", i16Type, {w, x});
      pending = pending ? arith::AddIOp::create(b, loc, pending, pairs) : pairs;
      if (++count == perWiden) {
        widen(pending);
        pending = nullptr;
        count = 0;
      }
    }
    if (pending)
      widen(pending);
    return acc;
  }
};

} // namespace

std::unique_ptr<DotEmitter> createAvx2DotEmitter() {
  return std::make_unique<Avx2Dot>();
}

} // namespace kf::codegen
