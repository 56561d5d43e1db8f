//===- SubBlockScaling.cpp - How the int8 dots meet sub-block scales ------===//
//
// The int8 block body's SubBlockSums (IntegerBlockBody.h): how a block's lane
// dots become its integer sums per activation block and column, meeting the
// sub-blocks' integer scales (K-quant, IQ1_M, FRACTAL64 and VQ3_64
// sub-blocks) on the way. They are apart from the loop that drives them
// because the choice among them is by bounds on the dots and the ISA's
// costs, with the exactness argument of each:
//
//  * SubBlockChains, the general case: int32 chains per sub-block, or per
//    part of one, each starting from its correction, scaled when complete,
//    in integers (IntegerScaling: the dot emitter's emitScaledAdd, one
//    vpdpwssd on AVX-512 when the dot fits int16, FRACTAL64's; Q4_K's and
//    Q5_K's sub-blocks are kept in parts whose dots fit,
//    SubBlockScaleCosts) or, where the emitter prefers it and it is
//    exact, in fp32 (FloatScaling, VQ3_64's on AVX-512).
//  * ScaledSubBlocks: where the dot instruction takes the scale for free
//    (AVX2: vpmaddwd's multiplier) and each decode step yields whole
//    sub-blocks, the dots are scaled as they are computed, with no
//    correction in them, and the corrections -offset * s_k * asum_k join the
//    sum two sub-blocks at a time as one int16 pair dot.
//
//===----------------------------------------------------------------------===//

#include "IntegerBlockBody.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

/// How SubBlockChains' parts meet their sub-blocks' scales: per block,
/// prepare(sub) once per part before addPart per column.
class PartScaling {
public:
  explicit PartScaling(const IntegerBlockContext &ctx) : ctx(ctx) {}
  virtual ~PartScaling() = default;

  /// The bits every chain starts from besides its correction (i32).
  virtual int32_t getBias() const { return 0; }
  /// Called before a block's parts.
  virtual void startBlock() = 0;
  /// Sub-block `sub`'s scale, read once per block from the packed block.
  virtual void prepare(Value block, int64_t sub) = 0;
  /// `isum` (null: none yet) plus the part's dot `iacc` (its chains joined)
  /// times its sub-block `sub`'s scale.
  virtual Value addPart(Value isum, Value iacc, int64_t sub) = 0;
  /// An addPart sum as fp32, exactly.
  virtual Value toFloat(Value isum) const {
    return arith::SIToFPOp::create(ctx.b, ctx.loc,
                                   ctx.rowsOf(ctx.b.getF32Type()), isum);
  }

protected:
  const IntegerBlockContext &ctx;
};

/// The parts' dots meet their integer scales in integers: dot emitter's
/// emitScaledAdd, or an add for a format without sub-block scales.
class IntegerScaling : public PartScaling {
public:
  IntegerScaling(const IntegerBlockContext &ctx, int64_t dotBound)
      : PartScaling(ctx), dotBound(dotBound) {}

  void startBlock() override { scales.assign(ctx.getSubBlocks(), Value()); }
  void prepare(Value block, int64_t sub) override {
    Value &scale = scales[sub];
    if (!scale)
      scale = ctx.decode.getSubBlockScale(ctx.b, ctx.loc, block, ctx.spec.rows,
                                          sub, ctx.dot);
  }
  Value addPart(Value isum, Value iacc, int64_t sub) override {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    if (Value scale = scales[sub])
      return ctx.dot.emitScaledAdd(
          b, loc,
          isum ? isum : emitSplat(b, loc, ctx.rowsOf(b.getI32Type()), 0), iacc,
          scale, dotBound, ctx.decode.getSubBlockScaleBound());
    return isum ? arith::AddIOp::create(b, loc, isum, iacc) : iacc;
  }

private:
  /// The bound of a part's signed dot.
  int64_t dotBound;
  /// The block's sub-block scales, read as the parts need them.
  SmallVector<Value, 16> scales;
};

// A part's dot beyond the cheap bound meets its scale in fp32, where the dot
// emitter prefers it, when that is exact: each chain starts from the bits of
// B = 1.5 * 2^23 (0x4b400000) besides its correction, so the int32 it ends
// with, read as a float, is exactly B + dot while |dot| < 2^22 (the exponent
// stays 2^23's, the dot in the mantissa's low bits). The first part of an
// activation block is fma(B + dot, s, -s * B) = s * dot, each next fma(B +
// dot - B, s, sum), the scales s and -s * B converted once per row group and
// block for every column; every product and sum is an integer below 2^24,
// exact in fp32, so the activation block's sum is the integer one kf::dot
// converts (VQ3_64: 4 * 8 * 128 * 127 * 9 < 2^23).
class FloatScaling : public PartScaling {
public:
  using PartScaling::PartScaling;

  static constexpr int32_t kBias = 0x4b400000;

  int32_t getBias() const override { return kBias; }
  void startBlock() override {
    floatScales.assign(ctx.getSubBlocks(), {});
    bias = floatConstant(llvm::bit_cast<float>(kBias));
    negBias = floatConstant(-llvm::bit_cast<float>(kBias));
  }
  void prepare(Value block, int64_t sub) override {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    auto &[s, sNegBias] = floatScales[sub];
    if (!s) {
      s = ctx.decode.getFloatSubBlockScale(b, loc, block, ctx.spec.rows, sub,
                                           ctx.dot);
      if (!s) {
        Value integer = ctx.decode.getSubBlockScale(
            b, loc, block, ctx.spec.rows, sub, ctx.dot);
        assert(integer && "formats with sub-blocks have sub-block scales");
        s = arith::SIToFPOp::create(b, loc, ctx.rowsOf(b.getF32Type()),
                                    integer);
      }
      sNegBias = arith::MulFOp::create(b, loc, s, negBias);
    }
  }
  Value addPart(Value isum, Value iacc, int64_t sub) override {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    auto &[s, sNegBias] = floatScales[sub];
    Value biased =
        vector::BitCastOp::create(b, loc, ctx.rowsOf(b.getF32Type()), iacc);
    return isum ? LLVM::FMAOp::create(
                      b, loc, arith::SubFOp::create(b, loc, biased, bias), s,
                      isum)
                : LLVM::FMAOp::create(b, loc, biased, s, sNegBias);
  }
  Value toFloat(Value isum) const override { return isum; }

private:
  Value floatConstant(float value) const {
    return arith::ConstantOp::create(
        ctx.b, ctx.loc,
        DenseElementsAttr::get(ctx.rowsOf(ctx.b.getF32Type()), value));
  }

  /// B and -B, as fp32 rows.
  Value bias, negBias;
  /// The sub-blocks' scales s and -s * B as fp32.
  SmallVector<std::pair<Value, Value>, 16> floatScales;
};

/// Per part and column, independent int32 partial sums, chain 0 starting
/// from the correction: -offset * sum(q), what the lanes' offset adds to the
/// dot. A part is folded into the block's integer sum (times its
/// sub-block's integer scale, if any) as soon as its last lanes are in.
class SubBlockChains : public SubBlockSums {
public:
  explicit SubBlockChains(const IntegerBlockContext &ctx);

  /// The sub-blocks' corrections, where there are any: each group's int32
  /// chains start from a broadcast load of them (a load-port uop) rather
  /// than a scalar multiply and a broadcast from a general register (a
  /// port-5 uop per column and sub-block, of the 104 port-0/5 uops an
  /// 8-column Q8_0 block issues).
  int64_t getTileEntries(int64_t) const override {
    return ctx.correction != 0 ? ctx.getSubBlocks() : 0;
  }
  Value emitTileEntry(Value xBlock, int64_t sub) const override {
    Type i32 = ctx.b.getI32Type();
    return withBias(arith::MulIOp::create(
        ctx.b, ctx.loc, ctx.emitSubBlockSum(xBlock, sub),
        arith::ConstantIntOp::create(ctx.b, ctx.loc, i32, -ctx.correction)));
  }

  void emitSums(const BlockOperands &operands, const LaneSource &lanes,
                MutableArrayRef<SmallVector<Value, 8>> isums) override;
  Value toFloat(Value isum) const override { return scaling->toFloat(isum); }

private:
  /// The scalar correction `start` (i32) plus the scaling's bias.
  Value withBias(Value start) const {
    if (!scaling->getBias())
      return start;
    return arith::AddIOp::create(
        ctx.b, ctx.loc, start,
        arith::ConstantIntOp::create(ctx.b, ctx.loc, ctx.b.getI32Type(),
                                     scaling->getBias()));
  }
  /// Independent int32 accumulators per column and block. A dot instruction
  /// waits for the previous one on the same accumulator (vpdpbusd's latency,
  /// which `kf-bench ports` measures), so a narrow tile with one accumulator
  /// per column would run at that latency, not at the dot units' throughput;
  /// splitting each column's block dot over chains keeps about 4 in flight,
  /// wide tiles having them already.
  int64_t getIntChains(int64_t width) const {
    int64_t stepsPerPart = std::max<int64_t>(1, ctx.decode.getStepsPerBlock() *
                                                    partElems / ctx.blockElems);
    return std::clamp<int64_t>(4 / width, 1, stepsPerPart);
  }

  /// The unit of scaling: a sub-block or a part of it.
  int64_t partElems;
  std::unique_ptr<PartScaling> scaling;
};

// A sub-block's signed dot is at most subElems * max|w| * 127, which decides
// how the dot emitter may scale it (FRACTAL64's 8 * 17 * 127 fits int16, and
// IQ1_M's 16 * 9 * 127, its lanes' offset notwithstanding: max|w| is
// LaneRange::maxWeight where the format sets it).
// Where the emitter scales a smaller dot without a multiply and the lanes
// carry no offset (Q4_K's, Q5_K's codes), the sub-block's dot is kept in parts
// of half, a quarter... of it, down to that bound (Q4_K 16 * 15 * 127, Q5_K 8
// * 31 * 127 fit int16), each scaled on its own: on AVX-512 a vpdpwssd per
// part instead of a vpmulld (two uops on port 0) and an add per sub-block.
// With an offset, the correction is one sum over the sub-block and no part's
// dot is bounded by the weights.
//
// A part's dot beyond that bound meets its scale in fp32 (FloatScaling) where
// the emitter prefers it and the sums stay exact. A dot within the bound
// costs one instruction already (FRACTAL64's vpdpwssd), fewer than the two
// float ones.
SubBlockChains::SubBlockChains(const IntegerBlockContext &ctx)
    : SubBlockSums(ctx) {
  const LaneRange &range = ctx.range;
  const int64_t correction = ctx.correction;
  const int64_t maxLane = (int64_t(1) << range.bits) - 1;
  const int64_t maxWeight = range.maxWeight != 0 ? range.maxWeight
                            : range.isSigned
                                ? int64_t(1) << (range.bits - 1)
                                : std::max(correction, maxLane - correction);
  const SubBlockScaleCosts costs = ctx.dot.getSubBlockScaleCosts();
  const int64_t cheapBound = costs.cheapScaledAddBound;
  partElems = ctx.subElems;
  if (correction == 0)
    while (partElems * maxWeight * 127 > cheapBound && partElems % 8 == 0)
      partElems /= 2;
  if (partElems * maxWeight * 127 > cheapBound)
    partElems = ctx.subElems;
  const int64_t dotBound = partElems * maxWeight * 127;
  const int64_t partsPerSum =
      std::min(ctx.blockElems, ctx.act.blockElems) / partElems;
  if (costs.prefersFloat && ctx.subElems < ctx.blockElems &&
      dotBound > cheapBound && dotBound < (int64_t(1) << 22) &&
      partsPerSum * dotBound * ctx.decode.getSubBlockScaleBound() <
          (int64_t(1) << 24))
    scaling = std::make_unique<FloatScaling>(ctx);
  else
    scaling = std::make_unique<IntegerScaling>(ctx, dotBound);
}

void SubBlockChains::emitSums(const BlockOperands &operands,
                              const LaneSource &lanes,
                              MutableArrayRef<SmallVector<Value, 8>> isums) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value block = operands.weights, blk = operands.index;
  ArrayRef<Value> xBlocks = operands.activations;
  const int64_t width = xBlocks.size();
  // prepareTile's corrections, where there are any.
  TileSlice corrections = ctx.getTileSlice(*this, operands);
  VectorType i32Rows = ctx.rowsOf(b.getI32Type());
  SmallVector<DecodedLanes, 2> decoded;
  SmallVector<Value, 2> laneValues, acts;
  const int64_t numChains = getIntChains(width);
  const int64_t numParts = ctx.blockElems / partElems;
  struct Part {
    SmallVector<SmallVector<Value, 4>, 8> chains; // [column][chain]
    int64_t steps = 0, elems = 0;
  };
  SmallVector<Part, 32> parts(numParts);
  scaling->startBlock();
  auto startPart = [&](Part &part, int64_t index) {
    const int64_t sub = index * partElems / ctx.subElems;
    part.chains.resize(width);
    for (auto [j, xBlock, columnChains] :
         llvm::enumerate(xBlocks, part.chains)) {
      // The correction (computed before the tile's row groups when cache
      // blocked, prepareTile) has the scaling's bias in it.
      Value start = emitSplat(b, loc, i32Rows, scaling->getBias());
      if (corrections) {
        Value init = corrections.emitLoad(ctx, j, blk, sub);
        start = vector::BroadcastOp::create(b, loc, i32Rows, init);
      } else if (ctx.correction != 0) {
        Value init = withBias(arith::MulIOp::create(
            b, loc, ctx.emitSubBlockSum(xBlock, sub),
            arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                         -ctx.correction)));
        start = vector::BroadcastOp::create(b, loc, i32Rows, init);
      }
      columnChains.push_back(start);
      for (int64_t c = 1; c < numChains; ++c)
        columnChains.push_back(emitSplat(b, loc, i32Rows, 0));
    }
  };
  // Integer sums are exact in any order, so joining the chains, the parts
  // and the sub-blocks keeps the block's integer sum exact.
  auto foldPart = [&](Part &part, int64_t index) {
    const int64_t sub = index * partElems / ctx.subElems;
    scaling->prepare(block, sub);
    for (auto [columnChains, isum] : llvm::zip_equal(
             part.chains, isums[index * partElems / ctx.act.blockElems])) {
      Value iacc = columnChains.front();
      for (Value chain : ArrayRef(columnChains).drop_front())
        iacc = arith::AddIOp::create(b, loc, iacc, chain);
      isum = scaling->addPart(isum, iacc, sub);
    }
  };

  for (int64_t step = 0; step < ctx.decode.getStepsPerBlock(); ++step) {
    lanes.emitStep(operands, step, decoded);
    // The step's lanes by part (of their first element), in the order
    // decoded.
    SmallVector<std::pair<int64_t, SmallVector<int64_t, 4>>, 4> byPart;
    for (auto [i, d] : llvm::enumerate(decoded)) {
      int64_t index = (d.kOffset + llvm::countr_zero(d.mask)) / partElems;
      assert((d.kOffset + llvm::Log2_32(d.mask)) / partElems == index &&
             "a lane vector's elements lie in one part");
      if (byPart.empty() || byPart.back().first != index)
        byPart.push_back({index, {}});
      byPart.back().second.push_back(i);
    }
    for (auto &[index, members] : byPart) {
      Part &part = parts[index];
      if (part.chains.empty())
        startPart(part, index);
      laneValues.clear();
      for (int64_t i : members)
        laneValues.push_back(decoded[i].lanes);
      for (auto [j, columnChains] : llvm::enumerate(part.chains)) {
        acts.clear();
        for (int64_t i : members)
          acts.push_back(lanes.emitActivation(operands, j, decoded[i]));
        Value &chain = columnChains[part.steps % numChains];
        chain = ctx.dot.emitDot(b, loc, chain, laneValues, acts, ctx.range);
      }
      ++part.steps;
      for (int64_t i : members)
        part.elems += llvm::popcount(decoded[i].mask);
      if (part.elems == partElems)
        foldPart(part, index);
    }
  }
}

// Every sub-block's lanes come in one step, so its dot goes into its
// activation block's integer sum already times its scale (ScaledSubBlockDot),
// with no correction in it. The corrections -offset * s_k * asum_k go in two
// sub-blocks at a time: the rows' int16 pair (-offset * s_k, -offset *
// s_k+1), computed once for the tile's columns, dotted with the column's two
// adjacent int16 sums of 8 loaded as one i32 (emitPairDot), instead of a
// scalar multiply and a broadcast per column and sub-block. Exact: |offset *
// s| <= 128 * 9 = 1152 (VQ3_64; FRACTAL64 14 * 19 = 266) fits int16, and a
// pair dot is at most 2 * 1152 * 8 * 127 < 2^22. The integer sums stay
// those of the chains (|sum| < 2^31 by the formats' bounds) in another order.
class ScaledSubBlocks : public SubBlockSums {
public:
  ScaledSubBlocks(const IntegerBlockContext &ctx,
                  const ScaledSubBlockDot &scaledDot)
      : SubBlockSums(ctx), scaledDot(scaledDot) {}

  void emitSums(const BlockOperands &operands, const LaneSource &lanes,
                MutableArrayRef<SmallVector<Value, 8>> isums) override;

private:
  const ScaledSubBlockDot &scaledDot;
};

void ScaledSubBlocks::emitSums(const BlockOperands &operands,
                               const LaneSource &lanes,
                               MutableArrayRef<SmallVector<Value, 8>> isums) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value block = operands.weights;
  ArrayRef<Value> xBlocks = operands.activations;
  const int64_t numSubs = ctx.getSubBlocks();
  const int64_t subElems = ctx.subElems;
  const kf::ActivationLayout &act = ctx.act;
  VectorType i32Rows = ctx.rowsOf(b.getI32Type());
  SmallVector<Value, 16> scales(numSubs), scaleOperands(numSubs);
  auto scaleOf = [&](int64_t index) {
    Value &scale = scales[index];
    if (!scale)
      scale = ctx.decode.getSubBlockScale(b, loc, block, ctx.spec.rows, index,
                                          ctx.dot);
    assert(scale && "decoders of whole sub-blocks have sub-block scales");
    return scale;
  };
  auto addTo = [&](Value &isum, auto term) {
    isum = term(isum ? isum : emitSplat(b, loc, i32Rows, 0));
  };

  if (ctx.correction != 0) {
    const kf::ActivationSums &sums = act.fineSums;
    assert(sums.elems == subElems && sums.bytes == 2 &&
           act.blockElems % (2 * subElems) == 0 &&
           "one int16 sum per sub-block, pairs in one activation block");
    auto pairType = VectorType::get({2 * ctx.spec.rows}, b.getI16Type());
    for (int64_t index = 0; index < numSubs; index += 2) {
      Value pair = vector::BitCastOp::create(
          b, loc, pairType,
          emitInt16Pairs(b, loc, scaleOf(index), scaleOf(index + 1)));
      Value rowPair = vector::BitCastOp::create(
          b, loc, i32Rows,
          arith::MulIOp::create(b, loc, pair,
                                emitSplat(b, loc, pairType, -ctx.correction)));
      const int64_t e = index * subElems;
      for (auto [xBlock, isum] :
           llvm::zip_equal(xBlocks, isums[e / act.blockElems])) {
        Value sumPair = emitLoad(
            b, loc, b.getI32Type(), ctx.emitActivationBlock(xBlock, e),
            sums.offset + e % act.blockElems / sums.elems * sums.bytes);
        Value columnPair =
            vector::BroadcastOp::create(b, loc, i32Rows, sumPair);
        addTo(isum, [&](Value acc) {
          return ctx.dot.emitPairDot(b, loc, acc, rowPair, columnPair);
        });
      }
    }
  }

  SmallVector<DecodedLanes, 4> decoded;
  SmallVector<Value, 4> laneValues, acts;
  for (int64_t step = 0; step < ctx.decode.getStepsPerBlock(); ++step) {
    lanes.emitStep(operands, step, decoded);
    for (size_t first = 0; first < decoded.size();) {
      const int64_t index = decoded[first].kOffset / subElems;
      laneValues.clear();
      size_t end = first;
      for (; end < decoded.size() && decoded[end].kOffset / subElems == index;
           ++end)
        laneValues.push_back(decoded[end].lanes);
      assert(4 * static_cast<int64_t>(laneValues.size()) == subElems &&
             "a whole sub-block per step");
      Value &operand = scaleOperands[index];
      if (!operand)
        operand = scaledDot.prepareScale(b, loc, scaleOf(index));
      for (auto [j, isum] :
           llvm::enumerate(isums[index * subElems / act.blockElems])) {
        acts.clear();
        for (size_t i = first; i < end; ++i)
          acts.push_back(lanes.emitActivation(operands, j, decoded[i]));
        addTo(isum, [&](Value acc) {
          return scaledDot.emitScaledDot(b, loc, acc, laneValues, acts, operand,
                                         ctx.range);
        });
      }
      first = end;
    }
  }
}

} // namespace

std::unique_ptr<SubBlockSums>
createSubBlockChains(const IntegerBlockContext &ctx) {
  return std::make_unique<SubBlockChains>(ctx);
}

std::unique_ptr<SubBlockSums>
createScaledSubBlocks(const IntegerBlockContext &ctx,
                      const ScaledSubBlockDot &scaledDot) {
  return std::make_unique<ScaledSubBlocks>(ctx, scaledDot);
}

} // namespace kf::codegen
