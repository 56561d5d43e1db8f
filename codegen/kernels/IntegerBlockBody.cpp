//===- IntegerBlockBody.cpp - The int8 family's K block -------------------===//
//
// One K block of a column tile's row group for the quantized formats:
//
//   s_w = decode's R scales
//   for each column j: iacc[j] = -offset*sum_j
//   for each decode step: lanes = decode(block, step)
//     for each column j: iacc[j] = dot(iacc[j], lanes, x[j] bytes)
//   for each column j: acc[j] += scale(float(iacc[j]), s_w, d_j)
//
// emitBlock is that loop; the ways its steps differ by format and ISA are
// strategy objects chosen once, when the body is built (IntegerBlockBody.h):
// where a step's lanes come from (a LaneSource, here), how the dots become
// the block's integer sums through the sub-blocks' scales (a SubBlockSums,
// SubBlockScaling.cpp) and, for formats with mins, their term (here).
//
// A block is 32 weights, or a K-quant's super-block of 256 in sub-blocks with
// integer scales (and mins): then the int32 dots are kept per sub-block (each
// starting from -offset * its activation sum), multiplied by the sub-block's
// integer scale and added up, and the mins' term sum_j min_j * asum_j is a
// second integer sum; both meet the float scales once per block, as kf::dot's
// K-quant dot does (docs/codegen.md, "Super-blocks"). A block of 64
// (FRACTAL64, VQ3_64) spans two Q8_0 activation blocks and has integer
// sub-scales per 8 weights; each half's integer sum meets its own activation
// scale, as kf::dot adds the halves.
//
// A kernel that decodes once (MatmulKernelSpec::decodeOnce) stores each
// block's lanes, prepared for the dot, where the loop nest says (emitDecode),
// and its column tiles load them back step by step instead of decoding them;
// the K-quants' mins are stored after them as the int16 pairs the tiles' pair
// dots take, the scales and sub-block scales still read from the packed block.
//
// With cache blocks, what a tile needs per block from its activations alone
// (the corrections, the mins' activation sums over two sub-blocks, a
// one-column tile's masked activation words where the decoder has a packed
// order) is computed once before the tile's row groups (prepareTile), each
// part's entries after the previous part's (TileEntries).
//
// The int32 accumulator starts from -offset * sum(q) so it ends holding the
// signed block dot exactly; the float work per block and row lane is then the
// reference dot's, in its order, and the kernel's sums equal kf::dot's bit for
// bit.
//
//===----------------------------------------------------------------------===//

#include "IntegerBlockBody.h"

#include "kf/Tiling/CacheBlocks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {

//===----------------------------------------------------------------------===//
// Lane sources
//===----------------------------------------------------------------------===//

namespace {

/// The lanes decoded from the packed block, in K order (decodeStep's).
class KOrderDecode : public LaneSource {
public:
  using LaneSource::LaneSource;

protected:
  void emitLanes(const BlockOperands &operands, int64_t step,
                 SmallVectorImpl<DecodedLanes> &out) const override {
    ctx.decode.decodeStep(ctx.b, ctx.loc, operands.weights, ctx.spec.rows, step,
                          ctx.dot, out);
    for (DecodedLanes &d : out)
      d.lanes = ctx.dot.prepareLanes(ctx.b, ctx.loc, d.lanes, ctx.range);
  }
};

/// The lanes decoded in the decoder's packed order (PackedOrderSteps), for a
/// one-column tile with cache blocks: each lane vector meets the activation
/// bytes of its own elements, loaded as they lie where they are 4 bytes of one
/// activation block, else from the masked words prepareTile computed once (its
/// entries).
class PackedOrderDecode : public LaneSource, public TileEntries {
public:
  PackedOrderDecode(const IntegerBlockContext &ctx,
                    const PackedOrderSteps &steps)
      : LaneSource(ctx), steps(steps) {
    SmallVector<ActivationWord, 32> words;
    steps.getPackedOrderWords(words);
    for (const ActivationWord &word : words)
      if (!isWholeWord(word) && !llvm::is_contained(preparedWords, word))
        preparedWords.push_back(word);
  }

  /// A tile of `width` columns decodes in the packed order when it is a
  /// one-column tile, whose masked activation words prepareTile computes
  /// once. (The one-column tile of a wide call decoding once, possible with
  /// maxCols <= 2 only, reads the decoded lanes and leaves its prepared
  /// words unused.)
  int64_t getTileEntries(int64_t width) const override {
    return width == 1 && ctx.isCacheBlocked()
               ? static_cast<int64_t>(preparedWords.size())
               : 0;
  }
  // The bytes of the word's elements, zeros for the others.
  Value emitTileEntry(Value xBlock, int64_t index) const override {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    Type i32 = b.getI32Type();
    const ActivationWord &word = preparedWords[index];
    Value bytes = arith::ConstantIntOp::create(b, loc, i32, 0);
    for (int64_t i = 0; i < 4; ++i)
      if (word.mask >> i & 1)
        bytes = arith::OrIOp::create(
            b, loc, bytes,
            arith::ShLIOp::create(
                b, loc,
                arith::ExtUIOp::create(
                    b, loc, i32,
                    ctx.emitActivationByte(xBlock, word.kOffset + i)),
                arith::ConstantIntOp::create(b, loc, i32, 8 * i)));
    return bytes;
  }

  Value emitActivation(const BlockOperands &operands, int64_t j,
                       const DecodedLanes &lanes) const override {
    const ActivationWord word{lanes.kOffset, lanes.mask};
    if (isWholeWord(word))
      return ctx.emitActivation(operands.activations[j], word.kOffset);
    TileSlice prepared = ctx.getTileSlice(*this, operands);
    assert(prepared && "prepareTile computed the packed order's words");
    const auto *found = llvm::find(preparedWords, word);
    assert(found != preparedWords.end() &&
           "getPackedOrderWords lists every word of the packed-order steps");
    return ctx.emitWordSplat(prepared.emitLoad(ctx, j, operands.index,
                                               found - preparedWords.begin()));
  }

protected:
  void emitLanes(const BlockOperands &operands, int64_t step,
                 SmallVectorImpl<DecodedLanes> &out) const override {
    steps.decodePackedOrderStep(ctx.b, ctx.loc, operands.weights, ctx.spec.rows,
                                step, ctx.dot, out);
    for (DecodedLanes &d : out)
      d.lanes = ctx.dot.prepareLanes(ctx.b, ctx.loc, d.lanes, ctx.range);
  }

private:
  /// Whether `word` is 4 bytes of one activation block, loaded as they lie.
  bool isWholeWord(const ActivationWord &word) const {
    return word.mask == 0xf &&
           word.kOffset % ctx.act.blockElems + 4 <= ctx.act.blockElems;
  }

  const PackedOrderSteps &steps;
  /// The packed order's activation words that are not whole words, in
  /// prepareTile's order.
  SmallVector<ActivationWord, 8> preparedWords;
};

/// A kernel that decodes once: emitDecode stores a block's lanes, prepared
/// for the dot, in K order (lane vector i holds elements 4i .. 4i + 3 of the
/// R rows); stored as the dot takes them, the tiles that read them back do
/// no more per lane vector than Q8_0's tiles: one load.
class DecodeOnce : public LaneSource {
public:
  using LaneSource::LaneSource;

  void emitDecode(Value weights, Value decoded) const {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    SmallVector<DecodedLanes, 4> stepLanes;
    for (int64_t step = 0; step < ctx.decode.getStepsPerBlock(); ++step) {
      stepLanes.clear();
      ctx.decode.decodeStep(b, loc, weights, ctx.spec.rows, step, ctx.dot,
                            stepLanes);
      for (const DecodedLanes &d : stepLanes)
        LLVM::StoreOp::create(
            b, loc, ctx.dot.prepareLanes(b, loc, d.lanes, ctx.range),
            emitByteOffset(b, loc, decoded, d.kOffset * ctx.spec.rows), 1);
    }
  }

protected:
  // Step `step` reads the step's share of the block in K order, whatever
  // order the decoder yields its lanes in: each sub-block's lanes then come
  // one after another, so a tile keeps one sub-block's chains live per
  // column at a time rather than the decoder's several (Q4_K's steps feed
  // two sub-blocks, 64 weights apart).
  void emitLanes(const BlockOperands &operands, int64_t step,
                 SmallVectorImpl<DecodedLanes> &out) const override {
    const int64_t stepElems = ctx.blockElems / ctx.decode.getStepsPerBlock();
    assert(stepElems % 4 == 0 && "a step holds whole lane vectors");
    auto lanesType = VectorType::get({4 * ctx.spec.rows}, ctx.b.getI8Type());
    for (int64_t kOffset = step * stepElems; kOffset < (step + 1) * stepElems;
         kOffset += 4)
      out.push_back({emitLoad(ctx.b, ctx.loc, lanesType, operands.decoded,
                              kOffset * ctx.spec.rows),
                     kOffset});
  }
};

//===----------------------------------------------------------------------===//
// The mins' term
//===----------------------------------------------------------------------===//

/// The mins' integer sum, sum_j min_j * asum_j, for formats with mins (the
/// K-quants, whose block is one activation block and whose sub-block's
/// activation sum is two int16 sums of 16): with cache blocks two sub-blocks
/// at a time, the rows' mins as int16 pairs (decoded once, or unpacked from
/// the block) against the column's sums pair from prepareTile (emitPairDot:
/// one vpdpwssd on AVX-512), else each term as the dot emitter multiplies a
/// sum pair (emitSumPairTimes).
class SubBlockMinSums : public TileEntries {
public:
  SubBlockMinSums(const IntegerBlockContext &ctx,
                  const SubBlockMinDecode &minDecode)
      : ctx(ctx), minDecode(minDecode) {
    assert(ctx.correction == 0 && ctx.getSubBlocks() % 2 == 0 &&
           "the mins' formats have unsigned codes, sub-blocks in pairs");
  }

  /// With cache blocks, the activation sums over two sub-blocks as an int16
  /// pair (each at most 32 * 128 in magnitude), so that the mins' term takes
  /// one pair dot per two sub-blocks.
  int64_t getTileEntries(int64_t) const override {
    return ctx.getSubBlocks() / 2;
  }
  Value emitTileEntry(Value xBlock, int64_t pair) const override {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    Value lo = ctx.emitSubBlockSum(xBlock, 2 * pair);
    Value hi = ctx.emitSubBlockSum(xBlock, 2 * pair + 1);
    auto i32 = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
    };
    return arith::OrIOp::create(b, loc,
                                arith::AndIOp::create(b, loc, lo, i32(0xffff)),
                                arith::ShLIOp::create(b, loc, hi, i32(16)));
  }

  /// The mins' integer sums msums[j] per column.
  void emitSums(const BlockOperands &operands,
                MutableArrayRef<Value> msums) const;
  /// The block's contribution `scaled` minus the mins' term of msum.
  Value subtractFrom(Value scaled, Value msum, Value block,
                     Value xScale) const {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    return minDecode.subtractMins(
        b, loc, scaled,
        arith::SIToFPOp::create(b, loc, ctx.rowsOf(b.getF32Type()), msum),
        block, ctx.spec.rows, xScale);
  }

  /// Decoding once, the mins' pairs are stored after the lanes: unpacking
  /// them (Q4_K's 6-bit fields) took some 40 of the 850 vector uops of an
  /// 8-column tile's block at M = 512.
  void emitDecode(Value weights, Value decoded) const {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    for (int64_t pair = 0; pair < ctx.getSubBlocks() / 2; ++pair)
      LLVM::StoreOp::create(
          b, loc, emitMinPairs(weights, pair),
          emitByteOffset(b, loc, decoded, getDecodedPairOffset(pair)), 4);
  }
  /// Where a decoded block keeps pair `pair` of emitMinPairs, after its
  /// lanes.
  int64_t getDecodedPairOffset(int64_t pair) const {
    return ctx.blockElems * ctx.spec.rows + pair * ctx.spec.rows * 4;
  }

private:
  /// Sub-blocks 2 * pair and 2 * pair + 1's mins of the R rows as int16
  /// pairs (vector<R x i32>), the row operand of the mins' pair dots.
  Value emitMinPairs(Value block, int64_t pair) const {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    return emitInt16Pairs(
        b, loc,
        minDecode.getSubBlockMin(b, loc, block, ctx.spec.rows, 2 * pair),
        minDecode.getSubBlockMin(b, loc, block, ctx.spec.rows, 2 * pair + 1));
  }

  const IntegerBlockContext &ctx;
  const SubBlockMinDecode &minDecode;
};

void SubBlockMinSums::emitSums(const BlockOperands &operands,
                               MutableArrayRef<Value> msums) const {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value block = operands.weights;
  VectorType i32Rows = ctx.rowsOf(b.getI32Type());
  const int64_t numSubs = ctx.getSubBlocks();
  const kf::ActivationSums &sums = ctx.act.fineSums;
  assert(ctx.actBlocks == 1 && sums.bytes == 2 &&
         ctx.subElems == 2 * sums.elems &&
         "mins over one activation block, a sub-block's sum two int16");
  auto addTo = [&](Value &msum, auto term) {
    msum = term(msum ? msum : emitSplat(b, loc, i32Rows, 0));
  };
  if (TileSlice pairSums = ctx.getTileSlice(*this, operands)) {
    for (int64_t pair = 0; pair < numSubs / 2; ++pair) {
      Value factors = operands.decoded
                          ? emitLoad(b, loc, i32Rows, operands.decoded,
                                     getDecodedPairOffset(pair))
                          : emitMinPairs(block, pair);
      for (auto [j, msum] : llvm::enumerate(msums)) {
        Value columnPair = vector::BroadcastOp::create(
            b, loc, i32Rows, pairSums.emitLoad(ctx, j, operands.index, pair));
        addTo(msum, [&](Value acc) {
          return ctx.dot.emitPairDot(b, loc, acc, factors, columnPair);
        });
      }
    }
    return;
  }
  for (int64_t index = 0; index < numSubs; ++index) {
    Value factor = ctx.dot.prepareSumFactor(
        b, loc, minDecode.getSubBlockMin(b, loc, block, ctx.spec.rows, index));
    for (auto [xBlock, msum] : llvm::zip_equal(operands.activations, msums))
      addTo(msum, [&](Value acc) {
        return ctx.dot.emitSumPairTimes(
            b, loc, acc, factor,
            emitByteOffset(b, loc, xBlock,
                           sums.offset +
                               index * ctx.subElems / sums.elems * sums.bytes));
      });
  }
}

//===----------------------------------------------------------------------===//
// The body
//===----------------------------------------------------------------------===//

class IntegerBlockBody : public MatmulBlockBody {
public:
  IntegerBlockBody(OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
                   std::unique_ptr<WeightDecodeEmitter> decodeEmitter,
                   std::unique_ptr<DotEmitter> dotEmitter);

  int64_t getBlockElems() const override { return ctx.blockElems; }
  int64_t getBlockBytes() const override { return blockBytes; }
  // The lanes, then for formats with mins their int16 pairs (emitDecode).
  int64_t getDecodedBlockBytes() const override {
    return ctx.spec.rows * tiling::decodedRowBlockBytes(ctx.spec.format);
  }
  void emitDecode(OpBuilder &, Location, Value weights,
                  Value decoded) override {
    assert(decodeOnce && "a kernel that decodes once");
    decodeOnce->emitDecode(weights, decoded);
    if (mins)
      mins->emitDecode(weights, decoded);
  }
  Value prepareTile(OpBuilder &, Location, const KernelArgs &args,
                    int64_t width, Value col, Value kBegin,
                    Value kEnd) override;
  void emitBlock(OpBuilder &, Location, const BlockOperands &block,
                 SmallVectorImpl<Value> &accs) override;
  StringRef getTuningFeatures() const override {
    return ctx.dot.getTuningFeatures();
  }
  Value finishSum(OpBuilder &b, Location loc, Value sum) override {
    return ctx.decode.finishSum(b, loc, sum);
  }
  void declareConstants(OpBuilder &b, Location loc, ModuleOp module) override {
    ctx.decode.declareConstants(b, loc, module);
  }

private:
  /// Where the block's lanes come from: loaded where the nest decoded them
  /// once, decoded in the packed order where the tile has its words, else
  /// decoded in K order.
  const LaneSource &getLaneSource(const BlockOperands &operands) const {
    if (operands.decoded)
      return *decodeOnce;
    if (packedOrder && ctx.getTileSlice(*packedOrder, operands))
      return *packedOrder;
    return kOrder;
  }

  std::unique_ptr<WeightDecodeEmitter> decodeOwner;
  std::unique_ptr<DotEmitter> dotOwner;
  IntegerBlockContext ctx;
  int64_t blockBytes;
  Block *entry;
  KOrderDecode kOrder;
  /// Where the decoder has packed-order steps and the dots take the lanes
  /// one by one (not ScaledSubBlockDot's whole sub-blocks).
  std::unique_ptr<PackedOrderDecode> packedOrder;
  /// Where the kernel decodes once.
  std::unique_ptr<DecodeOnce> decodeOnce;
  std::unique_ptr<SubBlockSums> sums;
  /// For formats with mins.
  std::unique_ptr<SubBlockMinSums> mins;
};

IntegerBlockBody::IntegerBlockBody(
    OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
    std::unique_ptr<WeightDecodeEmitter> decodeEmitter,
    std::unique_ptr<DotEmitter> dotEmitter)
    : decodeOwner(std::move(decodeEmitter)), dotOwner(std::move(dotEmitter)),
      ctx(b, loc, spec, *decodeOwner, *dotOwner),
      blockBytes(kf::packedBlockBytes(spec.getWeightLayout())),
      entry(b.getInsertionBlock()), kOrder(ctx) {
  const WeightDecodeEmitter &decode = ctx.decode;
  // Where the dot instruction takes a sub-block's scale for free and each
  // decode step yields whole sub-blocks, the dots are scaled as they are
  // computed; else they are summed in chains and scaled after.
  const ScaledSubBlockDot *scaledDot =
      decode.decodesWholeSubBlocks() ? ctx.dot.getScaledSubBlockDot() : nullptr;
  sums = scaledDot ? createScaledSubBlocks(ctx, *scaledDot)
                   : createSubBlockChains(ctx);
  ctx.tileParts.push_back(sums.get());
  const PackedOrderSteps *packedOrderSteps = decode.getPackedOrderSteps();
  const SubBlockMinDecode *minDecode = decode.getSubBlockMins();
  assert(!(packedOrderSteps && minDecode) &&
         "the tile buffer holds the packed order's words or the mins' sums");
  if (packedOrderSteps && !scaledDot) {
    packedOrder = std::make_unique<PackedOrderDecode>(ctx, *packedOrderSteps);
    ctx.tileParts.push_back(packedOrder.get());
  }
  if (minDecode) {
    mins = std::make_unique<SubBlockMinSums>(ctx, *minDecode);
    ctx.tileParts.push_back(mins.get());
  }
  if (spec.decodeOnce)
    decodeOnce = std::make_unique<DecodeOnce>(ctx);
  assert(getDecodedBlockBytes() ==
             ctx.blockElems * spec.rows +
                 (mins ? ctx.getSubBlocks() / 2 * spec.rows * 4 : 0) &&
         "decodedRowBlockBytes is emitDecode's layout");
}

Value IntegerBlockBody::prepareTile(OpBuilder &, Location,
                                    const KernelArgs &args, int64_t width,
                                    Value col, Value kBegin, Value kEnd) {
  if (!ctx.isCacheBlocked())
    return {};
  // With cache blocks a tile runs over many row groups: what its columns
  // need per block from the activations alone is computed once into a stack
  // buffer (emitTileSlot), and each group loads it back; each part's
  // entries (TileEntries) follow the previous part's.
  const int64_t perBlock = ctx.getTileEntries(width);
  if (perBlock == 0)
    return {};
  auto value = [&](Value xBlock, int64_t index) -> Value {
    for (const TileEntries *part : ctx.tileParts) {
      const int64_t entries = part->getTileEntries(width);
      if (index < entries)
        return part->emitTileEntry(xBlock, index);
      index -= entries;
    }
    llvm_unreachable("an entry of some part");
  };
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value buffer =
      emitEntryAlloca(b, loc, entry, b.getI32Type(),
                      width * (ctx.spec.k / ctx.blockElems) * perBlock);
  int64_t columnBytes = ctx.spec.getActivationColumnBytes();
  scf::ForOp::create(
      b, loc, kBegin, kEnd, ctx.i64(1), ValueRange{},
      [&](OpBuilder &, Location, Value blk, ValueRange) {
        Value xOffset = arith::MulIOp::create(
            b, loc, blk, ctx.i64(ctx.actBlocks * ctx.act.blockBytes));
        for (int64_t j = 0; j < width; ++j) {
          Value column = arith::AddIOp::create(b, loc, col, ctx.i64(j));
          Value xBlock = emitByteOffset(
              b, loc,
              emitByteOffset(
                  b, loc, args.x,
                  arith::MulIOp::create(b, loc, column, ctx.i64(columnBytes))),
              xOffset);
          for (int64_t index = 0; index < perBlock; ++index)
            LLVM::StoreOp::create(
                b, loc, value(xBlock, index),
                ctx.emitTileSlot(buffer, j, blk, index, perBlock), 4);
        }
        scf::YieldOp::create(b, loc);
      });
  return buffer;
}

void IntegerBlockBody::emitBlock(OpBuilder &, Location,
                                 const BlockOperands &operands,
                                 SmallVectorImpl<Value> &accs) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const int64_t width = operands.activations.size();
  VectorType f32Rows = ctx.rowsOf(b.getF32Type());
  // s_w, the weights' scales, and xScales[h][j]: activation block h of
  // column j's scale.
  Value wScales =
      ctx.decode.decodeScales(b, loc, operands.weights, ctx.spec.rows);
  SmallVector<SmallVector<Value, 8>, 2> xScales(ctx.actBlocks);
  for (auto [h, scales] : llvm::enumerate(xScales))
    for (Value xBlock : operands.activations) {
      Value d = emitLoad(b, loc, b.getF32Type(), xBlock,
                         h * ctx.act.blockBytes + ctx.act.scaleOffset);
      scales.push_back(vector::BroadcastOp::create(b, loc, f32Rows, d));
    }

  // The mins' integer sums (formats with mins). A one-column tile adds them
  // after the block's dots: it is bound by the weights' stream, and its
  // loads and prefetches stay in the decode's order. A wider tile, bound by
  // its ports and registers, adds them first, so that they are done before
  // the chains take the registers (docs/codegen-measurements.md, "The mins
  // two sub-blocks at a time, and where a tile adds them").
  SmallVector<Value, 8> msums(width);
  if (mins && width > 1)
    mins->emitSums(operands, msums);
  // isums[h][j]: the integer sum over activation block h, column j, of the
  // decode steps' dots.
  SmallVector<SmallVector<Value, 8>, 2> isums(ctx.actBlocks,
                                              SmallVector<Value, 8>(width));
  sums->emitSums(operands, getLaneSource(operands), isums);
  if (mins && width == 1)
    mins->emitSums(operands, msums);

  // Each activation block's contribution added in K order, as kf::dot does.
  for (int64_t h = 0; h < ctx.actBlocks; ++h)
    for (auto [acc, isum, msum, xScale] :
         llvm::zip_equal(accs, isums[h], msums, xScales[h])) {
      Value contribution =
          ctx.decode.scaleBlock(b, loc, sums->toFloat(isum), wScales, xScale);
      if (msum)
        contribution =
            mins->subtractFrom(contribution, msum, operands.weights, xScale);
      acc = arith::AddFOp::create(b, loc, acc, contribution);
    }
}

} // namespace

std::unique_ptr<MatmulBlockBody>
createIntegerBlockBody(OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
                       const target::TargetInfo &target) {
  std::unique_ptr<DotEmitter> dot = createDotEmitter(spec.isa, target);
  std::unique_ptr<WeightDecodeEmitter> decode =
      createWeightDecodeEmitter(spec.getWeightLayout(), target, *dot);
  return std::make_unique<IntegerBlockBody>(b, loc, spec, std::move(decode),
                                            std::move(dot));
}

} // namespace kf::codegen
