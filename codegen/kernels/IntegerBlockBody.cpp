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
// A block is 32 weights, or a K-quant's super-block of 256 in sub-blocks with
// integer scales (and mins): then the int32 dots are kept per sub-block (each
// starting from -offset * its activation sum), multiplied by the sub-block's
// integer scale and added up, and the mins' term sum_j min_j * asum_j is a
// second integer sum; both meet the float scales once per block, as kf::dot's
// K-quant dot does (docs/codegen.md, "Super-blocks").
//
// A block of 64 (FRACTAL64, VQ3_64) spans two Q8_0 activation blocks and has
// integer sub-scales per 8 weights; each half's integer sum meets its own
// activation scale, as kf::dot adds the halves. A sub-block's dot meets its
// scale through the dot emitter (emitScaledAdd: one vpdpwssd on AVX-512 when
// the dot fits int16, FRACTAL64's; Q4_K's and Q5_K's sub-blocks are kept in
// parts whose dots fit, getCheapScaledAddBound) or, where the emitter prefers
// it and it is exact, in fp32 (VQ3_64's on AVX-512: choosePartsAndScaling).
// Where the dot instruction takes the scale for free (AVX2: vpmaddwd's
// multiplier) and each decode step yields whole sub-blocks, the dots are
// scaled as they are computed, with no correction in them, and the
// corrections -offset * s_k * asum_k join the sum two sub-blocks at a time as
// one int16 pair dot (emitScaledSubBlocks).
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
// order) is computed once before the tile's row groups (prepareTile).
//
// The int32 accumulator starts from -offset * sum(q) so it ends holding the
// signed block dot exactly; the float work per block and row lane is then the
// reference dot's, in its order, and the kernel's sums equal kf::dot's bit for
// bit.
//
//===----------------------------------------------------------------------===//

#include "MatmulLoopNest.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Tiling/CacheBlocks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <functional>

using namespace mlir;

namespace kf::codegen {
namespace {

class IntegerBlockBody : public MatmulBlockBody {
public:
  IntegerBlockBody(OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
                   std::unique_ptr<WeightDecodeEmitter> decodeEmitter,
                   std::unique_ptr<DotEmitter> dotEmitter)
      : b(b), loc(loc), spec(spec), decodeOwner(std::move(decodeEmitter)),
        dotOwner(std::move(dotEmitter)), decode(*decodeOwner), dot(*dotOwner),
        range(decode.getLaneRange()),
        correction(dot.getCorrectionOffset(range)),
        blockBytes(kf::packed_block_bytes(spec.getWeightLayout())),
        blockElems(decode.getBlockElems()), subElems(decode.getSubBlockElems()),
        act(kf::activation_layout(spec.getActivationFormat())),
        actBlocks(blockElems / act.block_elems),
        scaledDot(decode.decodesWholeSubBlocks() ? dot.getScaledSubBlockDot()
                                                 : nullptr),
        entry(b.getInsertionBlock()) {
    assert(blockElems % subElems == 0 && subElems % act.fine_sums.elems == 0);
    assert(blockElems % act.block_elems == 0 &&
           (act.block_elems % subElems == 0 || actBlocks == 1) &&
           "a sub-block lies in one activation block");
    choosePartsAndScaling();
    assert(!(decode.hasPackedOrderSteps() && decode.hasSubBlockMins()) &&
           "the tile buffer holds the packed order's words or the mins' sums");
    if (decode.hasPackedOrderSteps() && !scaledDot) {
      SmallVector<ActivationWord, 32> words;
      decode.getPackedOrderWords(words);
      for (const ActivationWord &word : words)
        if (!isWholeWord(word) && !llvm::is_contained(preparedWords, word))
          preparedWords.push_back(word);
    }
    assert(getDecodedBlockBytes() ==
               getDecodedMinPairsOffset(
                   decode.hasSubBlockMins() ? blockElems / subElems / 2 : 0) &&
           "decodedRowBlockBytes is emitDecode's layout");
  }

  int64_t getBlockElems() const override { return blockElems; }
  int64_t getBlockBytes() const override { return blockBytes; }
  // The lanes, then for formats with mins their int16 pairs (emitDecode).
  int64_t getDecodedBlockBytes() const override {
    return spec.rows * tiling::decodedRowBlockBytes(spec.format);
  }
  void emitDecode(OpBuilder &, Location, Value weights, Value decoded) override;
  Value prepareTile(OpBuilder &, Location, const KernelArgs &args,
                    int64_t width, Value col, Value kBegin,
                    Value kEnd) override;
  void emitBlock(OpBuilder &, Location, const BlockOperands &block,
                 SmallVectorImpl<Value> &accs) override;
  StringRef getTuningFeatures() const override {
    return dot.getTuningFeatures();
  }
  Value finishSum(OpBuilder &b, Location loc, Value sum) override {
    return decode.finishSum(b, loc, sum);
  }
  void declareConstants(OpBuilder &b, Location loc, ModuleOp module) override {
    decode.declareConstants(b, loc, module);
  }

private:
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  VectorType rowsOf(Type element) {
    return VectorType::get({spec.rows}, element);
  }
  bool isCacheBlocked() const { return spec.l1K != 0 || spec.l2Rows != 0; }
  /// Whether a tile of `width` columns decodes in the packed order
  /// (WeightDecodeEmitter::hasPackedOrderSteps): a one-column tile, whose
  /// masked activation words prepareTile computes once. (The one-column
  /// tile of a wide call decoding once, possible with maxCols <= 2 only,
  /// reads the decoded lanes and leaves its prepared words unused.)
  bool usesPackedOrder(int64_t width) const {
    return width == 1 && isCacheBlocked() && decode.hasPackedOrderSteps() &&
           !scaledDot;
  }
  /// Whether `word` is 4 bytes of one activation block, loaded as they lie.
  bool isWholeWord(const ActivationWord &word) const {
    return word.mask == 0xf &&
           word.kOffset % act.block_elems + 4 <= act.block_elems;
  }
  /// prepareTile's entries per column and block: the sub-blocks'
  /// corrections, where the chains start from them, then the packed order's
  /// prepared words.
  int64_t getCorrectionEntries() const {
    return correction != 0 && !scaledDot ? blockElems / subElems : 0;
  }
  int64_t getTileEntries(int64_t width) const {
    return getCorrectionEntries() +
           (usesPackedOrder(width) ? static_cast<int64_t>(preparedWords.size())
                                   : 0);
  }
  /// Sets partElems, dotBound and floatBias (emitSubBlockChains).
  void choosePartsAndScaling();
  /// The scalar correction `start` (i32) plus floatBias.
  Value withFloatBias(Value start) {
    if (!floatBias)
      return start;
    return arith::AddIOp::create(
        b, loc, start,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), floatBias));
  }
  /// Independent int32 accumulators per column and block. A dot instruction
  /// waits for the previous one on the same accumulator (vpdpbusd: about 5
  /// cycles), so a narrow tile with one accumulator per column would run at
  /// that latency, not at the dot units' throughput; splitting each column's
  /// block dot over chains keeps about 4 in flight, wide tiles having them
  /// already.
  int64_t getIntChains(int64_t width, int64_t partElems) const {
    int64_t stepsPerPart = std::max<int64_t>(1, decode.getStepsPerBlock() *
                                                    partElems / blockElems);
    return std::clamp<int64_t>(4 / width, 1, stepsPerPart);
  }
  /// The activation block (of the actBlocks from xBlock) holding element
  /// kOffset of the weight block.
  Value emitActivationBlock(Value xBlock, int64_t kOffset) {
    return emitByteOffset(b, loc, xBlock,
                          kOffset / act.block_elems * act.block_bytes);
  }
  Value emitActivation(Value xBlock, int64_t kOffset);
  /// The activation word `word` of column j broadcast to every row: loaded as
  /// it lies where it is whole, else from prepareTile's buffer `prepared`
  /// (of `perBlock` entries per column and block).
  Value emitActivation(Value xBlock, const ActivationWord &word, Value prepared,
                       int64_t perBlock, int64_t j, Value blk);
  /// An activation word (i32) broadcast to every row, as the dot takes it
  /// (vector<4R x i8>).
  Value emitWordSplat(Value word) {
    return vector::BitCastOp::create(
        b, loc, VectorType::get({4 * spec.rows}, b.getI8Type()),
        vector::BroadcastOp::create(b, loc, rowsOf(b.getI32Type()), word));
  }
  /// Element `e`'s activation byte of the weight block at xBlock (i8).
  Value emitActivationByte(Value xBlock, int64_t e) {
    return emitLoad(b, loc, b.getI8Type(), emitActivationBlock(xBlock, e),
                    act.quants_offset + e % act.block_elems);
  }
  /// The mins' integer sums msums[j] per column (emitBlock's comment says
  /// where), for formats with mins; nothing for the others.
  void emitMinSums(const BlockOperands &operands, MutableArrayRef<Value> msums);
  /// The block's integer sums isums[h][j] (activation block h, column j),
  /// from int32 chains per sub-block: the general case.
  void emitSubBlockChains(const BlockOperands &operands,
                          MutableArrayRef<SmallVector<Value, 8>> isums);
  /// The same for decoders of whole sub-blocks (decodesWholeSubBlocks).
  void emitScaledSubBlocks(const BlockOperands &operands,
                           MutableArrayRef<SmallVector<Value, 8>> isums);
  /// Decode step `step`'s lanes as the dot emitter takes them
  /// (prepareLanes'): decoded from the packed block (in the packed order
  /// where `packedOrder`), or, decoded once, the step's share of the block
  /// loaded from where emitDecode stored it.
  void emitStepLanes(const BlockOperands &operands, int64_t step,
                     SmallVectorImpl<DecodedLanes> &out,
                     bool packedOrder = false);
  /// Sub-blocks 2 * pair and 2 * pair + 1's mins of the R rows as int16
  /// pairs (vector<R x i32>), the row operand of the mins' pair dots.
  Value emitMinPairs(Value block, int64_t pair) {
    return emitInt16Pairs(
        b, loc, decode.getSubBlockMin(b, loc, block, spec.rows, 2 * pair),
        decode.getSubBlockMin(b, loc, block, spec.rows, 2 * pair + 1));
  }
  /// Where a decoded block keeps pair `pair` of emitMinPairs, after its
  /// lanes.
  int64_t getDecodedMinPairsOffset(int64_t pair) const {
    return blockElems * spec.rows + pair * spec.rows * 4;
  }
  /// The activations' integer sum over sub-block `sub` (i32).
  Value emitSubBlockSum(Value xBlock, int64_t sub);
  /// Where entry `index` (of perBlock) of column j's block `blk` is in
  /// prepareTile's buffer: buffer[j][blk][index].
  Value emitTileSlot(Value buffer, int64_t j, Value blk, int64_t index,
                     int64_t perBlock) {
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blk, i64(perBlock)),
        i64((j * (spec.k / blockElems)) * perBlock + index));
    return emitByteOffset(b, loc, buffer,
                          arith::MulIOp::create(b, loc, slot, i64(4)));
  }

  OpBuilder &b;
  Location loc;
  const MatmulKernelSpec &spec;
  std::unique_ptr<WeightDecodeEmitter> decodeOwner;
  std::unique_ptr<DotEmitter> dotOwner;
  const WeightDecodeEmitter &decode;
  const DotEmitter &dot;
  LaneRange range;
  int64_t correction;
  int64_t blockBytes;
  int64_t blockElems, subElems;
  kf::ActivationLayout act;
  int64_t actBlocks; ///< activation blocks per weight block
  /// When set, emitScaledSubBlocks rather than emitSubBlockChains.
  const ScaledSubBlockDot *scaledDot;
  Block *entry;
  /// emitSubBlockChains' unit of scaling: a sub-block or a part of it, and
  /// the bound of its signed dot.
  int64_t partElems = 0, dotBound = 0;
  /// The bits of the fp32 B = 1.5 * 2^23 when the parts' dots meet their
  /// scales in fp32 (DotEmitter::prefersFloatSubBlockScales), 0 otherwise.
  int32_t floatBias = 0;
  /// The packed order's activation words that are not whole words
  /// (isWholeWord), in prepareTile's order.
  SmallVector<ActivationWord, 8> preparedWords;
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
// A part's dot beyond that bound meets its scale in fp32, where the dot
// emitter prefers it, when that is exact: each chain starts from the bits of
// B = 1.5 * 2^23 (0x4b400000) besides its correction, so the int32 it ends
// with, read as a float, is exactly B + dot while |dot| < 2^22 (the exponent
// stays 2^23's, the dot in the mantissa's low bits). The first part of an
// activation block is fma(B + dot, s, -s * B) = s * dot, each next fma(B +
// dot - B, s, sum), the scales s and -s * B converted once per row group and
// block for every column; every product and sum is an integer below 2^24,
// exact in fp32, so the activation block's sum is the integer one kf::dot
// converts (VQ3_64: 4 * 8 * 128 * 127 * 9 < 2^23). A dot within the bound
// costs one instruction already (FRACTAL64's vpdpwssd), fewer than the two
// float ones.
void IntegerBlockBody::choosePartsAndScaling() {
  const int64_t maxLane = (int64_t(1) << range.bits) - 1;
  const int64_t maxWeight = range.maxWeight != 0 ? range.maxWeight
                            : range.isSigned
                                ? int64_t(1) << (range.bits - 1)
                                : std::max(correction, maxLane - correction);
  const int64_t cheapBound = dot.getCheapScaledAddBound();
  partElems = subElems;
  if (correction == 0)
    while (partElems * maxWeight * 127 > cheapBound && partElems % 8 == 0)
      partElems /= 2;
  if (partElems * maxWeight * 127 > cheapBound)
    partElems = subElems;
  dotBound = partElems * maxWeight * 127;
  const int64_t partsPerSum = std::min(blockElems, act.block_elems) / partElems;
  if (dot.prefersFloatSubBlockScales() && subElems < blockElems && !scaledDot &&
      dotBound > cheapBound && dotBound < (int64_t(1) << 22) &&
      partsPerSum * dotBound * decode.getSubBlockScaleBound() <
          (int64_t(1) << 24))
    floatBias = 0x4b400000;
}

// The block's lanes, prepared for the dot, in K order: lane vector i holds
// elements 4i .. 4i + 3 of the R rows; then the mins' pairs, where the format
// has mins. Stored as the dot takes them, the
// tiles that read them back do no more per lane vector than Q8_0's tiles: one
// load.
void IntegerBlockBody::emitDecode(OpBuilder &, Location, Value weights,
                                  Value decoded) {
  SmallVector<DecodedLanes, 4> stepLanes;
  for (int64_t step = 0; step < decode.getStepsPerBlock(); ++step) {
    stepLanes.clear();
    decode.decodeStep(b, loc, weights, spec.rows, step, dot, stepLanes);
    for (const DecodedLanes &d : stepLanes)
      LLVM::StoreOp::create(
          b, loc, dot.prepareLanes(b, loc, d.lanes, range),
          emitByteOffset(b, loc, decoded, d.kOffset * spec.rows), 1);
  }
  // The mins' pairs too: unpacking them (Q4_K's 6-bit fields) took some 40
  // of the 850 vector uops of an 8-column tile's block at M = 512.
  if (decode.hasSubBlockMins())
    for (int64_t pair = 0; pair < blockElems / subElems / 2; ++pair)
      LLVM::StoreOp::create(
          b, loc, emitMinPairs(weights, pair),
          emitByteOffset(b, loc, decoded, getDecodedMinPairsOffset(pair)), 4);
}

// Decoded once, step `step` reads the step's share of the block in K order,
// whatever order the decoder yields its lanes in: each sub-block's lanes
// then come one after another, so a tile keeps one sub-block's chains
// live per column at a time rather than the decoder's several (Q4_K's
// steps feed two sub-blocks, 64 weights apart).
void IntegerBlockBody::emitStepLanes(const BlockOperands &operands,
                                     int64_t step,
                                     SmallVectorImpl<DecodedLanes> &out,
                                     bool packedOrder) {
  out.clear();
  if (operands.prefetch)
    operands.prefetch(step, decode.getStepsPerBlock());
  if (packedOrder || !operands.decoded) {
    if (packedOrder)
      decode.decodePackedOrderStep(b, loc, operands.weights, spec.rows, step,
                                   dot, out);
    else
      decode.decodeStep(b, loc, operands.weights, spec.rows, step, dot, out);
    for (DecodedLanes &d : out)
      d.lanes = dot.prepareLanes(b, loc, d.lanes, range);
    return;
  }
  const int64_t stepElems = blockElems / decode.getStepsPerBlock();
  assert(stepElems % 4 == 0 && "a step holds whole lane vectors");
  auto lanesType = VectorType::get({4 * spec.rows}, b.getI8Type());
  for (int64_t kOffset = step * stepElems; kOffset < (step + 1) * stepElems;
       kOffset += 4)
    out.push_back(
        {emitLoad(b, loc, lanesType, operands.decoded, kOffset * spec.rows),
         kOffset});
}

Value IntegerBlockBody::prepareTile(OpBuilder &, Location,
                                    const KernelArgs &args, int64_t width,
                                    Value col, Value kBegin, Value kEnd) {
  if (!isCacheBlocked())
    return {};
  // With cache blocks a tile runs over many row groups: what its columns
  // need per block from the activations alone is computed once into a stack
  // buffer (emitTileSlot), and each group loads it back.
  //  * The corrections -offset * sum(q) per sub-block: each group's int32
  //    chains start from a broadcast load of them (a load-port uop) rather
  //    than a scalar multiply and a broadcast from a general register (a
  //    port-5 uop per column and sub-block, of the 104 port-0/5 uops an
  //    8-column Q8_0 block issues).
  //  * For formats with mins, the activation sums over two sub-blocks as an
  //    int16 pair (each at most 32 * 128 in magnitude), so that the mins'
  //    term takes one pair dot per two sub-blocks (emitBlock).
  //  * A one-column tile that decodes in the packed order, the activation
  //    words its lanes meet that are not 4 bytes of one activation block:
  //    the bytes of the word's elements, zeros for the others.
  std::function<Value(Value xBlock, int64_t index)> value;
  const int64_t numSubs = blockElems / subElems;
  int64_t perBlock = getTileEntries(width);
  if (perBlock != 0) {
    value = [&](Value xBlock, int64_t index) -> Value {
      Type i32 = b.getI32Type();
      const int64_t corrections = getCorrectionEntries();
      if (index < corrections)
        return withFloatBias(arith::MulIOp::create(
            b, loc, emitSubBlockSum(xBlock, index),
            arith::ConstantIntOp::create(b, loc, i32, -correction)));
      const ActivationWord &word = preparedWords[index - corrections];
      Value bytes = arith::ConstantIntOp::create(b, loc, i32, 0);
      for (int64_t i = 0; i < 4; ++i)
        if (word.mask >> i & 1)
          bytes = arith::OrIOp::create(
              b, loc, bytes,
              arith::ShLIOp::create(
                  b, loc,
                  arith::ExtUIOp::create(
                      b, loc, i32,
                      emitActivationByte(xBlock, word.kOffset + i)),
                  arith::ConstantIntOp::create(b, loc, i32, 8 * i)));
      return bytes;
    };
  } else if (decode.hasSubBlockMins()) {
    assert(correction == 0 && numSubs % 2 == 0 &&
           "the mins' formats have unsigned codes, sub-blocks in pairs");
    perBlock = numSubs / 2;
    value = [&](Value xBlock, int64_t pair) {
      Value lo = emitSubBlockSum(xBlock, 2 * pair);
      Value hi = emitSubBlockSum(xBlock, 2 * pair + 1);
      auto i32 = [&](int64_t v) {
        return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
      };
      return arith::OrIOp::create(
          b, loc, arith::AndIOp::create(b, loc, lo, i32(0xffff)),
          arith::ShLIOp::create(b, loc, hi, i32(16)));
    };
  } else {
    return {};
  }
  Value buffer = emitEntryAlloca(b, loc, entry, b.getI32Type(),
                                 width * (spec.k / blockElems) * perBlock);
  int64_t columnBytes = spec.getActivationColumnBytes();
  scf::ForOp::create(
      b, loc, kBegin, kEnd, i64(1), ValueRange{},
      [&](OpBuilder &, Location, Value blk, ValueRange) {
        Value xOffset = arith::MulIOp::create(b, loc, blk,
                                              i64(actBlocks * act.block_bytes));
        for (int64_t j = 0; j < width; ++j) {
          Value column = arith::AddIOp::create(b, loc, col, i64(j));
          Value xBlock = emitByteOffset(
              b, loc,
              emitByteOffset(
                  b, loc, args.x,
                  arith::MulIOp::create(b, loc, column, i64(columnBytes))),
              xOffset);
          for (int64_t index = 0; index < perBlock; ++index)
            LLVM::StoreOp::create(b, loc, value(xBlock, index),
                                  emitTileSlot(buffer, j, blk, index, perBlock),
                                  4);
        }
        scf::YieldOp::create(b, loc);
      });
  return buffer;
}

void IntegerBlockBody::emitBlock(OpBuilder &, Location,
                                 const BlockOperands &operands,
                                 SmallVectorImpl<Value> &accs) {
  const int64_t width = operands.activations.size();
  Value block = operands.weights;
  ArrayRef<Value> xBlocks = operands.activations;
  VectorType f32Rows = rowsOf(b.getF32Type());
  Value wScales = decode.decodeScales(b, loc, block, spec.rows);
  // xScales[h][j]: activation block h of column j's scale.
  SmallVector<SmallVector<Value, 8>, 2> xScales(actBlocks);
  for (auto [h, scales] : llvm::enumerate(xScales))
    for (Value xBlock : xBlocks) {
      Value d = emitLoad(b, loc, b.getF32Type(), xBlock,
                         h * act.block_bytes + act.scale_offset);
      scales.push_back(vector::BroadcastOp::create(b, loc, f32Rows, d));
    }

  // The mins' integer sums (formats with mins). A one-column tile adds them
  // after the block's dots: it is bound by the weights' stream, and its
  // loads and prefetches stay in the decode's order (first, Q4_K's cold M =
  // 1 was 3-4 % slower). A wider tile, bound by its ports and registers,
  // adds them first, so that they are done before the chains take the
  // registers (after, Q5_K's 8-column tile spilled 175 vector moves per
  // block instead of 102, and ran 6-10 % slower).
  SmallVector<Value, 8> msums(width);
  if (width > 1)
    emitMinSums(operands, msums);
  // isums[h][j]: the integer sum over activation block h, column j.
  SmallVector<SmallVector<Value, 8>, 2> isums(actBlocks,
                                              SmallVector<Value, 8>(width));
  if (scaledDot)
    emitScaledSubBlocks(operands, isums);
  else
    emitSubBlockChains(operands, isums);
  if (width == 1)
    emitMinSums(operands, msums);

  // Each activation block's contribution added in K order, as kf::dot does.
  for (int64_t h = 0; h < actBlocks; ++h)
    for (auto [acc, isum, msum, xScale] :
         llvm::zip_equal(accs, isums[h], msums, xScales[h])) {
      Value sum =
          floatBias ? isum : arith::SIToFPOp::create(b, loc, f32Rows, isum);
      Value contribution = decode.scaleBlock(b, loc, sum, wScales, xScale);
      if (msum)
        contribution =
            decode.subtractMins(b, loc, contribution,
                                arith::SIToFPOp::create(b, loc, f32Rows, msum),
                                block, spec.rows, xScale);
      acc = arith::AddFOp::create(b, loc, acc, contribution);
    }
}

// The mins' integer sum, sum_j min_j * asum_j, for formats with mins (the
// K-quants, whose block is one activation block and whose sub-block's
// activation sum is two int16 sums of 16): with cache blocks two sub-blocks
// at a time, the rows' mins as int16 pairs (decoded once, or unpacked from the
// block) against the column's sums pair from prepareTile (emitPairDot: one
// vpdpwssd on AVX-512), else each term as the dot emitter multiplies a sum
// pair (emitSumPairTimes).
void IntegerBlockBody::emitMinSums(const BlockOperands &operands,
                                   MutableArrayRef<Value> msums) {
  if (!decode.hasSubBlockMins())
    return;
  Value block = operands.weights;
  VectorType i32Rows = rowsOf(b.getI32Type());
  const int64_t numSubs = blockElems / subElems;
  const kf::ActivationSums &sums = act.fine_sums;
  assert(actBlocks == 1 && sums.bytes == 2 && subElems == 2 * sums.elems &&
         "mins over one activation block, a sub-block's sum two int16");
  auto addTo = [&](Value &msum, auto term) {
    msum = term(msum ? msum : emitSplat(b, loc, i32Rows, 0));
  };
  if (Value pairSums = operands.tileState) {
    for (int64_t pair = 0; pair < numSubs / 2; ++pair) {
      Value factors = operands.decoded
                          ? emitLoad(b, loc, i32Rows, operands.decoded,
                                     getDecodedMinPairsOffset(pair))
                          : emitMinPairs(block, pair);
      for (auto [j, msum] : llvm::enumerate(msums)) {
        Value columnPair = vector::BroadcastOp::create(
            b, loc, i32Rows,
            LLVM::LoadOp::create(
                b, loc, b.getI32Type(),
                emitTileSlot(pairSums, j, operands.index, pair, numSubs / 2),
                4));
        addTo(msum, [&](Value acc) {
          return dot.emitPairDot(b, loc, acc, factors, columnPair);
        });
      }
    }
    return;
  }
  for (int64_t index = 0; index < numSubs; ++index) {
    Value factor = dot.prepareSumFactor(
        b, loc, decode.getSubBlockMin(b, loc, block, spec.rows, index));
    for (auto [xBlock, msum] : llvm::zip_equal(operands.activations, msums))
      addTo(msum, [&](Value acc) {
        return dot.emitSumPairTimes(
            b, loc, acc, factor,
            emitByteOffset(b, loc, xBlock,
                           sums.offset +
                               index * subElems / sums.elems * sums.bytes));
      });
  }
}

void IntegerBlockBody::emitSubBlockChains(
    const BlockOperands &operands,
    MutableArrayRef<SmallVector<Value, 8>> isums) {
  Value block = operands.weights, blk = operands.index;
  ArrayRef<Value> xBlocks = operands.activations;
  const int64_t width = xBlocks.size();
  // prepareTile's buffer holds the corrections where there are any, then
  // the packed order's words.
  Value corrections =
      getCorrectionEntries() != 0 ? operands.tileState : Value();
  const int64_t tileEntries = getTileEntries(width);
  const bool packedOrder =
      usesPackedOrder(width) && operands.tileState && !operands.decoded;
  VectorType i32Rows = rowsOf(b.getI32Type());
  SmallVector<DecodedLanes, 2> decoded;
  SmallVector<Value, 2> lanes, acts;
  // Per part and column, independent int32 partial sums (see getIntChains),
  // chain 0 starting from the correction: -offset * sum(q), what the lanes'
  // offset adds to the dot. A part is folded into the block's integer sum
  // (times its sub-block's integer scale, if any) as soon as its last lanes
  // are in.
  const int64_t numChains = getIntChains(width, partElems);
  const int64_t numParts = blockElems / partElems;
  struct Part {
    SmallVector<SmallVector<Value, 4>, 8> chains; // [column][chain]
    int64_t steps = 0, elems = 0;
  };
  SmallVector<Part, 32> parts(numParts);
  SmallVector<Value, 16> scales(blockElems / subElems);
  // With floatBias: the sub-blocks' scales s and -s * B as fp32.
  SmallVector<std::pair<Value, Value>, 16> floatScales(blockElems / subElems);
  VectorType f32Rows = rowsOf(b.getF32Type());
  auto floatConstant = [&](float value) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(f32Rows, value));
  };
  // B and -B, with floatBias.
  Value bias, negBias;
  if (floatBias) {
    bias = floatConstant(llvm::bit_cast<float>(floatBias));
    negBias = floatConstant(-llvm::bit_cast<float>(floatBias));
  }
  auto startPart = [&](Part &part, int64_t index) {
    const int64_t sub = index * partElems / subElems;
    part.chains.resize(width);
    for (auto [j, xBlock, columnChains] :
         llvm::enumerate(xBlocks, part.chains)) {
      // The correction (computed before the tile's row groups when cache
      // blocked, prepareTile) has floatBias in it.
      Value start = emitSplat(b, loc, i32Rows, floatBias);
      if (corrections) {
        Value init = LLVM::LoadOp::create(
            b, loc, b.getI32Type(),
            emitTileSlot(corrections, j, blk, sub, tileEntries), 4);
        start = vector::BroadcastOp::create(b, loc, i32Rows, init);
      } else if (correction != 0) {
        Value init = withFloatBias(arith::MulIOp::create(
            b, loc, emitSubBlockSum(xBlock, sub),
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), -correction)));
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
    const int64_t sub = index * partElems / subElems;
    Value &scale = scales[sub];
    if (floatBias) {
      auto &[s, sNegBias] = floatScales[sub];
      if (!s) {
        s = decode.getFloatSubBlockScale(b, loc, block, spec.rows, sub, dot);
        if (!s) {
          Value integer =
              decode.getSubBlockScale(b, loc, block, spec.rows, sub, dot);
          assert(integer && "formats with sub-blocks have sub-block scales");
          s = arith::SIToFPOp::create(b, loc, f32Rows, integer);
        }
        sNegBias = arith::MulFOp::create(b, loc, s, negBias);
      }
    } else if (!scale) {
      scale = decode.getSubBlockScale(b, loc, block, spec.rows, sub, dot);
    }
    for (auto [columnChains, isum] : llvm::zip_equal(
             part.chains, isums[index * partElems / act.block_elems])) {
      Value iacc = columnChains.front();
      for (Value chain : ArrayRef(columnChains).drop_front())
        iacc = arith::AddIOp::create(b, loc, iacc, chain);
      if (floatBias) {
        auto &[s, sNegBias] = floatScales[sub];
        Value biased = vector::BitCastOp::create(b, loc, f32Rows, iacc);
        isum = isum ? LLVM::FMAOp::create(
                          b, loc, arith::SubFOp::create(b, loc, biased, bias),
                          s, isum)
                    : LLVM::FMAOp::create(b, loc, biased, s, sNegBias);
      } else if (scale)
        isum = dot.emitScaledAdd(
            b, loc, isum ? isum : emitSplat(b, loc, i32Rows, 0), iacc, scale,
            dotBound, decode.getSubBlockScaleBound());
      else
        isum = isum ? arith::AddIOp::create(b, loc, isum, iacc) : iacc;
    }
  };

  for (int64_t step = 0; step < decode.getStepsPerBlock(); ++step) {
    emitStepLanes(operands, step, decoded, packedOrder);
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
      lanes.clear();
      for (int64_t i : members)
        lanes.push_back(decoded[i].lanes);
      for (auto [j, xBlock, columnChains] :
           llvm::enumerate(xBlocks, part.chains)) {
        acts.clear();
        for (int64_t i : members)
          acts.push_back(emitActivation(
              xBlock, {decoded[i].kOffset, decoded[i].mask},
              packedOrder ? operands.tileState : Value(), tileEntries, j, blk));
        Value &chain = columnChains[part.steps % numChains];
        chain = dot.emitDot(b, loc, chain, lanes, acts, range);
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
void IntegerBlockBody::emitScaledSubBlocks(
    const BlockOperands &operands,
    MutableArrayRef<SmallVector<Value, 8>> isums) {
  Value block = operands.weights;
  ArrayRef<Value> xBlocks = operands.activations;
  const int64_t numSubs = blockElems / subElems;
  VectorType i32Rows = rowsOf(b.getI32Type());
  SmallVector<Value, 16> scales(numSubs), scaleOperands(numSubs);
  auto scaleOf = [&](int64_t index) {
    Value &scale = scales[index];
    if (!scale)
      scale = decode.getSubBlockScale(b, loc, block, spec.rows, index, dot);
    assert(scale && "decoders of whole sub-blocks have sub-block scales");
    return scale;
  };
  auto addTo = [&](Value &isum, auto term) {
    isum = term(isum ? isum : emitSplat(b, loc, i32Rows, 0));
  };

  if (correction != 0) {
    const kf::ActivationSums &sums = act.fine_sums;
    assert(sums.elems == subElems && sums.bytes == 2 &&
           act.block_elems % (2 * subElems) == 0 &&
           "one int16 sum per sub-block, pairs in one activation block");
    auto pairType = VectorType::get({2 * spec.rows}, b.getI16Type());
    for (int64_t index = 0; index < numSubs; index += 2) {
      Value pair = vector::BitCastOp::create(
          b, loc, pairType,
          emitInt16Pairs(b, loc, scaleOf(index), scaleOf(index + 1)));
      Value rowPair = vector::BitCastOp::create(
          b, loc, i32Rows,
          arith::MulIOp::create(b, loc, pair,
                                emitSplat(b, loc, pairType, -correction)));
      const int64_t e = index * subElems;
      for (auto [xBlock, isum] :
           llvm::zip_equal(xBlocks, isums[e / act.block_elems])) {
        Value sumPair = emitLoad(
            b, loc, b.getI32Type(), emitActivationBlock(xBlock, e),
            sums.offset + e % act.block_elems / sums.elems * sums.bytes);
        Value columnPair =
            vector::BroadcastOp::create(b, loc, i32Rows, sumPair);
        addTo(isum, [&](Value acc) {
          return dot.emitPairDot(b, loc, acc, rowPair, columnPair);
        });
      }
    }
  }

  SmallVector<DecodedLanes, 4> decoded;
  SmallVector<Value, 4> lanes, acts;
  for (int64_t step = 0; step < decode.getStepsPerBlock(); ++step) {
    emitStepLanes(operands, step, decoded);
    for (size_t first = 0; first < decoded.size();) {
      const int64_t index = decoded[first].kOffset / subElems;
      lanes.clear();
      size_t end = first;
      for (; end < decoded.size() && decoded[end].kOffset / subElems == index;
           ++end)
        lanes.push_back(decoded[end].lanes);
      assert(4 * static_cast<int64_t>(lanes.size()) == subElems &&
             "a whole sub-block per step");
      Value &operand = scaleOperands[index];
      if (!operand)
        operand = scaledDot->prepareScale(b, loc, scaleOf(index));
      for (auto [xBlock, isum] : llvm::zip_equal(
               xBlocks, isums[index * subElems / act.block_elems])) {
        acts.clear();
        for (size_t i = first; i < end; ++i)
          acts.push_back(emitActivation(xBlock, decoded[i].kOffset));
        addTo(isum, [&](Value acc) {
          return scaledDot->emitScaledDot(b, loc, acc, lanes, acts, operand,
                                          range);
        });
      }
      first = end;
    }
  }
}

Value IntegerBlockBody::emitActivation(Value xBlock, const ActivationWord &word,
                                       Value prepared, int64_t perBlock,
                                       int64_t j, Value blk) {
  if (isWholeWord(word))
    return emitActivation(xBlock, word.kOffset);
  assert(prepared && "prepareTile computed the packed order's words");
  const auto *found = llvm::find(preparedWords, word);
  assert(found != preparedWords.end() &&
         "getPackedOrderWords lists every word of the packed-order steps");
  const int64_t index =
      getCorrectionEntries() + (found - preparedWords.begin());
  return emitWordSplat(
      LLVM::LoadOp::create(b, loc, b.getI32Type(),
                           emitTileSlot(prepared, j, blk, index, perBlock), 4));
}

// The 4 activation bytes at element kOffset of the weight block, broadcast
// to every row: one i32 load and splat (vpbroadcastd, or an embedded
// broadcast).
Value IntegerBlockBody::emitActivation(Value xBlock, int64_t kOffset) {
  return emitWordSplat(emitLoad(b, loc, b.getI32Type(),
                                emitActivationBlock(xBlock, kOffset),
                                act.quants_offset + kOffset % act.block_elems));
}

// The activations' sums over the sub-block added: the coarsest sums that
// tile it (a Q8_0 block's int32 sum for a sub-block of 32, its int16 sums of
// 8 for one of 8; Q8_K's int16 sums of 16).
Value IntegerBlockBody::emitSubBlockSum(Value xBlock, int64_t sub) {
  const kf::ActivationSums &sums =
      subElems % act.sums.elems == 0 ? act.sums : act.fine_sums;
  Type i32 = b.getI32Type();
  Type sumType = b.getIntegerType(8 * sums.bytes);
  Value total;
  for (int64_t e = sub * subElems; e < (sub + 1) * subElems; e += sums.elems) {
    Value sum =
        emitLoad(b, loc, sumType, emitActivationBlock(xBlock, e),
                 sums.offset + e % act.block_elems / sums.elems * sums.bytes);
    if (sumType != i32)
      sum = arith::ExtSIOp::create(b, loc, i32, sum);
    total = total ? arith::AddIOp::create(b, loc, total, sum) : sum;
  }
  return total;
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
