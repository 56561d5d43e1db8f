//===- Avx512VnniDot.cpp - The AVX-512 VNNI dot emitter: vpdpbusd ---------===//
//
// One vpdpbusd per operand: 64 unsigned lanes (4 weights of each of 16 rows)
// times 4 signed activation bytes broadcast to every row, summed by fours
// into the row's i32 lane, without saturation. The lanes' offset comes back
// out through the activation's quant sum (getCorrectionOffset).
//
// A sub-block's integer scale meets its dot in one vpdpwssd when the dot fits
// int16 (FRACTAL64's; Q4_K's and Q5_K's in parts that fit: emitScaledAdd,
// getCheapScaledAddBound), a larger one (VQ3_64's) in fp32 where that is exact
// (prefersFloatSubBlockScales), and a K-quant's min meets the activation's
// sum in one vpdpwssd (emitSumPairTimes); the kernels keep LLVM from
// splitting them (getTuningFeatures).
//
// Table lookups of up to 16 bytes are one vpshufb (AVX-512BW). Up to 64
// bytes, a target with AVX512_VBMI does one vpermb, which picks any of the
// vector's 64 bytes by the index's low 6 bits; without VBMI (Cascade Lake)
// one vpshufb per 16 bytes of the table and masked moves by index bits 4
// and 5 (emitSplitPshufbLookup).
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

constexpr size_t kVectorBytes = 64;

class Avx512VnniDot : public DotEmitter {
public:
  explicit Avx512VnniDot(bool vbmi) : vbmi(vbmi) {}

  int64_t getCorrectionOffset(LaneRange range) const override {
    assert(!range.isSigned && "reads the unsigned layouts");
    return range.offset;
  }

  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> lanes,
                ArrayRef<Value> acts, LaneRange range) const override {
    for (auto [w, x] : llvm::zip_equal(lanes, acts))
      acc = emitIntrinsic(b, loc, "llvm.x86.avx512.vpdpbusd.512", acc.getType(),
                          {acc, w, x});
    return acc;
  }

  // One vpdpwssd when the dot fits int16: its low half times the scale, its
  // high half (the sign extension) times 0 (the scale as (s & 0xffff, 0)),
  // instead of a vpmulld (two uops on port 0, where vpdpbusd runs too) and
  // an add.
  Value emitScaledAdd(OpBuilder &b, Location loc, Value acc, Value dot,
                      Value scale, int64_t dotBound,
                      int64_t scaleBound) const override {
    if (dotBound > getCheapScaledAddBound())
      return DotEmitter::emitScaledAdd(b, loc, acc, dot, scale, dotBound,
                                       scaleBound);
    auto pairs = VectorType::get({32}, b.getI16Type());
    Value lowScale = arith::AndIOp::create(
        b, loc, scale,
        emitSplat(b, loc, cast<VectorType>(scale.getType()), 0xffff));
    return emitIntrinsic(b, loc, "llvm.x86.avx512.vpdpwssd.512", acc.getType(),
                         {acc, vector::BitCastOp::create(b, loc, pairs, dot),
                          vector::BitCastOp::create(b, loc, pairs, lowScale)});
  }

  // (f, f): one vpdpwssd against the column's two int16 sums loaded as one
  // i32 and broadcast from memory adds f * lo + f * hi, instead of a scalar
  // add, a broadcast from a general register (port 5), a vpmulld (two uops
  // on port 0) and an add per column and sub-block.
  Value prepareSumFactor(OpBuilder &b, Location loc,
                         Value factor) const override {
    return emitInt16Pairs(b, loc, factor, factor);
  }

  Value emitSumPairTimes(OpBuilder &b, Location loc, Value acc, Value factor,
                         Value sums) const override {
    auto pairs = VectorType::get({32}, b.getI16Type());
    Value sumPair = vector::BroadcastOp::create(
        b, loc, acc.getType(), emitLoad(b, loc, b.getI32Type(), sums, 0));
    return emitIntrinsic(b, loc, "llvm.x86.avx512.vpdpwssd.512", acc.getType(),
                         {acc, vector::BitCastOp::create(b, loc, pairs, factor),
                          vector::BitCastOp::create(b, loc, pairs, sumPair)});
  }

  int64_t getCheapScaledAddBound() const override { return 32767; }

  // A dot beyond int16 (VQ3_64's) meets its scale as an fp32 FMA, which runs
  // on port 0 or 5, instead of a vpshufb of its bytes (port 5) and a vpdpwssd
  // (port 0, where every vpdpbusd runs) or a vpmulld (two port-0 uops).
  bool prefersFloatSubBlockScales() const override { return true; }

  // On Intel CPUs LLVM splits a vpdpwssd that adds to a chain into vpmaddwd
  // and vpaddd (a MachineCombiner pattern shortening the chain's latency):
  // two uops on ports 0 and 5 instead of one, where the dot loops are bound
  // by those ports' throughput, not by the chains' latency.
  StringRef getTuningFeatures() const override { return "+fast-dpwssd"; }

  Value emitTableLookup(OpBuilder &b, Location loc, Value indices,
                        ArrayRef<int8_t> table) const override {
    auto type = cast<VectorType>(indices.getType());
    if (table.size() > kVectorBytes)
      return emitSelectTableLookup(b, loc, indices, table);
    if (vbmi && table.size() > 16 &&
        type.getNumElements() == static_cast<int64_t>(kVectorBytes)) {
      // vpermb(table, indices): the table padded with zeros to the vector,
      // which no index reaches.
      SmallVector<int8_t, kVectorBytes> bytes(table.begin(), table.end());
      bytes.resize(kVectorBytes, 0);
      Value tableVector = arith::ConstantOp::create(
          b, loc, type, DenseElementsAttr::get(type, ArrayRef(bytes)));
      return emitIntrinsic(b, loc, "llvm.x86.avx512.permvar.qi.512", type,
                           {tableVector, indices});
    }
    return emitSplitPshufbLookup(b, loc, "llvm.x86.avx512.pshuf.b.512", indices,
                                 table);
  }

private:
  bool vbmi;
};

} // namespace

std::unique_ptr<DotEmitter> createAvx512VnniDotEmitter(bool vbmi) {
  return std::make_unique<Avx512VnniDot>(vbmi);
}

} // namespace kf::codegen
