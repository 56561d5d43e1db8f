//===- IqGridDecode.cpp - Decode emitters of the IQ grid formats ----------===//
//
// The IQ grid formats hold per 8 weights of a row an index into a grid of
// 8-byte entries. A decode step is one grid slot (8 weights) of the R rows:
// their R entries gathered from the grid, a constant table in the kernel's
// module (2 KiB for IQ2_XXS, 16 KiB for IQ1_S and IQ1_M, read from L1),
// made into lanes and split into
// the slot's two K-groups. The table holds lane bytes rather than the grid's
// values, so that the lanes need no arithmetic beyond the signs (IQ2_XXS)
// or the delta (IQ1_S, IQ1_M; at Iq1Decode). Where the dot emitter has a
// code book lookup (AVX-512 with VBMI), IQ2_XXS's steps are a sub-block's
// slots looked up as 2-bit codes by byte permutes instead, with no gather;
// with GFNI and BMI2 from the code book layout, whose indices and sign masks
// the lookup takes as they lie.
//
// IQ2_XXS (kf/runtime/packed_layout.h): grid bytes are magnitudes |w| in
// {8, 25, 43} and a sign mask per slot negates some; the table holds 43 +
// |w|, the negation is 86 - (43 + |w|) = 43 - |w|, so the lanes hold w + 43
// (0..86, 7 bits, offset 43). The eight sign masks of 8 rows are the 64-bit
// lane mask of their 64 lanes (one kmov and a masked subtract on AVX-512).
// Each sub-block of 32 weights has the integer scale 2 ls + 1, and kf::dot's
// float work is (d * d_x) * isum per super-block, then 0.125 * sum once
// after the last (finishSum), so the kernel rounds exactly as it does.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "quant/grids.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <array>

using namespace mlir;

namespace kf::codegen {
namespace {

/// IQ2_XXS's lane offset: its largest magnitude.
constexpr int64_t kIq2xxsOffset = 43;

/// IQ2_XXS's magnitudes, by code.
constexpr std::array<int64_t, 3> kIq2xxsMagnitudes = {8, 25, 43};

/// The module's symbol of IQ2_XXS's lane table.
constexpr llvm::StringLiteral kIq2xxsTable = "kf_iq2_xxs_lanes";

/// The 8-byte entries of `grid` with each byte b replaced by lane(b): a
/// grid's values as the lanes a kernel's dot reads.
template <size_t N, typename Grid, typename Lane>
std::array<uint64_t, N> mapGridBytes(const Grid &grid, Lane lane) {
  std::array<uint64_t, N> table;
  for (auto [entry, value] : llvm::zip_equal(table, grid)) {
    entry = 0;
    for (int j = 0; j < 8; ++j)
      entry |= static_cast<uint64_t>(
                   lane(static_cast<uint8_t>(value >> 8 * j)) & 0xff)
               << 8 * j;
  }
  return table;
}

/// iq2xxs_grid with kIq2xxsOffset added to every byte.
std::array<uint64_t, 256> iq2xxsLaneTable() {
  return mapGridBytes<256>(quant::grids::iq2xxs_grid, [](uint8_t b) {
    return static_cast<int64_t>(b) + kIq2xxsOffset;
  });
}

/// iq2xxs_grid as a code book (CodeBookLookup::emitCodeBookLanes): each byte's
/// magnitude 8, 25 or 43 as the 2-bit code 0, 1 or 2.
std::array<uint16_t, 256> iq2xxsCodeBook() {
  std::array<uint16_t, 256> book;
  for (auto [entry, value] : llvm::zip_equal(book, quant::grids::iq2xxs_grid)) {
    entry = 0;
    for (int j = 0; j < 8; ++j) {
      const uint8_t magnitude = static_cast<uint8_t>(value >> 8 * j);
      const auto *code = llvm::find(kIq2xxsMagnitudes, magnitude);
      assert(code != kIq2xxsMagnitudes.end() && "IQ2_XXS's magnitudes");
      entry |=
          static_cast<uint16_t>((code - kIq2xxsMagnitudes.begin()) << 2 * j);
    }
  }
  return book;
}

/// The R rows' 8-byte entries (vector<8R x i8>, row r's in bytes 8r .. 8r + 7)
/// split into the slot's two K-groups, elements kOffset .. + 3 and + 4 .. + 7.
void splitSlot(OpBuilder &b, Location loc, Value entries, int64_t rows,
               int64_t kOffset, llvm::SmallVectorImpl<DecodedLanes> &out) {
  for (int64_t half = 0; half < 2; ++half) {
    SmallVector<int64_t> mask;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t t = 0; t < 4; ++t)
        mask.push_back(8 * r + 4 * half + t);
    out.push_back({vector::ShuffleOp::create(b, loc, entries, entries, mask),
                   kOffset + 4 * half});
  }
}

/// A splat of 0.125 of the f32 vector `type`: the IQ formats' factor 1/8.
Value emitEighth(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(cast<VectorType>(type),
                             b.getF32FloatAttr(0.125f)));
}

/// (value >> shift) & mask, on i32 lanes.
Value extractBits(OpBuilder &b, Location loc, Value value, int64_t shift,
                  int64_t mask) {
  auto type = cast<VectorType>(value.getType());
  if (shift != 0)
    value =
        arith::ShRUIOp::create(b, loc, value, emitSplat(b, loc, type, shift));
  return arith::AndIOp::create(b, loc, value, emitSplat(b, loc, type, mask));
}

/// Where the dot emitter has a code book lookup (getCodeBookLookup), a step
/// is the slots of as many indices (AVX-512 VBMI: 4 slots of 16 rows, a
/// sub-block), looked up as 2-bit codes; elsewhere one slot, gathered. The
/// code book layout is read only where the lookup takes its indices and
/// masks as they lie (CodeBookLookup::hasCodeBookMaskedLanes; the kernel's
/// verification requires it).
class Iq2XxsDecode : public WeightDecodeEmitter {
public:
  Iq2XxsDecode(const kf::PackedLayout &layout, bool hardwareHalf,
               const DotEmitter &isa)
      : packed(layout), slotsPerStep(1), hardwareHalf(hardwareHalf) {
    const int64_t rows = layout.rows;
    const CodeBookLookup *lookup = isa.getCodeBookLookup();
    const int64_t indices = lookup ? lookup->getCodeBookIndices() : 0;
    if (indices != 0 && indices % rows == 0 && 32 % (indices / rows) == 0)
      slotsPerStep = indices / rows;
    assert((!isCodeBook() || (lookup && lookup->hasCodeBookMaskedLanes() &&
                              slotsPerStep == 4)) &&
           "the code book layout needs the masked code book lookup");
  }

  LaneRange getLaneRange() const override { return {7, kIq2xxsOffset}; }
  int64_t getBlockElems() const override { return 256; }
  int64_t getSubBlockElems() const override { return 32; }
  int64_t getStepsPerBlock() const override { return 32 / slotsPerStep; }

  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    return loadHalfScales(b, loc, block, rows, iq2xxsDOffset(0), hardwareHalf);
  }

  // 2 ls + 1, ls the 4-bit scale of group j (nibble j % 2 of byte j / 2).
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j, const DotEmitter &) const override {
    auto bytes = VectorType::get({rows}, b.getI8Type());
    Value pair = emitWeightLoad(b, loc, bytes, block,
                                iq2xxsScaleOffset(packed, j / 2, 0));
    Value ls =
        j % 2 == 0
            ? arith::AndIOp::create(b, loc, pair, emitSplat(b, loc, bytes, 15))
                  .getResult()
            : arith::ShRUIOp::create(b, loc, pair, emitSplat(b, loc, bytes, 4))
                  .getResult();
    auto words = VectorType::get({rows}, b.getI32Type());
    Value wide = arith::ExtUIOp::create(b, loc, words, ls);
    Value twice =
        arith::ShLIOp::create(b, loc, wide, emitSplat(b, loc, words, 1));
    return arith::OrIOp::create(b, loc, twice, emitSplat(b, loc, words, 1));
  }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    if (slotsPerStep == 1)
      decodeGatheredSlot(b, loc, block, rows, step, out);
    else if (isCodeBook())
      decodeMaskedSlots(b, loc, block, step, isa, out);
    else
      decodeCodedSlots(b, loc, block, rows, step, isa, out);
  }

  void declareConstants(OpBuilder &b, Location loc,
                        ModuleOp module) const override {
    if (slotsPerStep != 1) // the code book is the dot emitter's constants
      return;
    static const std::array<uint64_t, 256> lanes = iq2xxsLaneTable();
    declareConstantTable(b, loc, module, kIq2xxsTable, lanes);
  }

  // kf::dot's IQ2_XXS sum: (d * d_x) * isum per super-block ...
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, wScales, xScale);
    return arith::MulFOp::create(b, loc, scale, dot);
  }

  // ... and 0.125 * sum after the last.
  Value finishSum(OpBuilder &b, Location loc, Value sum) const override {
    return arith::MulFOp::create(b, loc, emitEighth(b, loc, sum.getType()),
                                 sum);
  }

private:
  bool isCodeBook() const {
    return packed.coding == kf::WeightCoding::CodeBook;
  }

  /// The lane values of codes 0..3: 43 + |w|; code 3 does not occur, and its
  /// value keeps the map affine over GF(2).
  static std::array<int8_t, 4> codeValues() {
    std::array<int8_t, 4> values;
    for (int64_t c = 0; c < 3; ++c)
      values[c] = static_cast<int8_t>(kIq2xxsOffset + kIq2xxsMagnitudes[c]);
    values[3] = values[0] ^ values[1] ^ values[2];
    return values;
  }

  /// The lanes of slots 4 * step .. + 3 in order, two K-groups each.
  static void appendSlotLanes(ArrayRef<Value> lanes, int64_t first,
                              llvm::SmallVectorImpl<DecodedLanes> &out) {
    for (auto [i, l] : llvm::enumerate(lanes))
      out.push_back({l, 8 * first + 4 * static_cast<int64_t>(i)});
  }

  // Slot `step`: its R entries gathered from the lane table, negated by the
  // sign masks, split into K-groups.
  void decodeGatheredSlot(OpBuilder &b, Location loc, Value block, int64_t rows,
                          int64_t step,
                          llvm::SmallVectorImpl<DecodedLanes> &out) const {
    auto rowBytes = VectorType::get({rows}, b.getI8Type());
    Value indices = arith::ExtUIOp::create(
        b, loc, VectorType::get({rows}, b.getI32Type()),
        emitWeightLoad(b, loc, rowBytes, block,
                       iq2xxsIndexOffset(packed, step, 0)));
    Value table = emitConstantTableAddress(b, loc, kIq2xxsTable);
    auto bytes = VectorType::get({8 * rows}, b.getI8Type());
    Value plus = vector::BitCastOp::create(
        b, loc, bytes, emitTableGather(b, loc, table, indices));
    Value minus = arith::SubIOp::create(
        b, loc, emitSplat(b, loc, bytes, 2 * kIq2xxsOffset), plus);
    Value signs = emitWeightLoad(b, loc, rowBytes, block,
                                 iq2xxsSignsOffset(packed, step, 0));
    Value negate = vector::BitCastOp::create(
        b, loc, VectorType::get({8 * rows}, b.getI1Type()), signs);
    Value entries = arith::SelectOp::create(b, loc, negate, minus, plus);
    splitSlot(b, loc, entries, rows, 8 * step, out);
  }

  // Slots slotsPerStep * step ..: their indices and sign bytes (side by side
  // per slot in the layout, [index][signs]) as two vectors, looked up as
  // codes, whose lanes are 43 + |w| or, negated, 43 - |w|.
  void decodeCodedSlots(OpBuilder &b, Location loc, Value block, int64_t rows,
                        int64_t step, const DotEmitter &isa,
                        llvm::SmallVectorImpl<DecodedLanes> &out) const {
    const int64_t first = slotsPerStep * step;
    auto pairs = VectorType::get({2 * slotsPerStep * rows}, b.getI8Type());
    Value both = emitWeightLoad(b, loc, pairs, block,
                                iq2xxsIndexOffset(packed, first, 0));
    SmallVector<int64_t> indexMask, signMask;
    for (int64_t s = 0; s < slotsPerStep; ++s)
      for (int64_t r = 0; r < rows; ++r) {
        indexMask.push_back(2 * s * rows + r);
        signMask.push_back((2 * s + 1) * rows + r);
      }
    Value indices = vector::ShuffleOp::create(b, loc, both, both, indexMask);
    Value signs = vector::ShuffleOp::create(b, loc, both, both, signMask);
    static const std::array<uint16_t, 256> book = iq2xxsCodeBook();
    SmallVector<Value, 8> lanes;
    isa.getCodeBookLookup()->emitCodeBookLanes(
        b, loc, indices, signs, book, codeValues(), 2 * kIq2xxsOffset, lanes);
    assert(static_cast<int64_t>(lanes.size()) == 2 * slotsPerStep &&
           "two K-groups per slot");
    appendSlotLanes(lanes, first, out);
  }

  // Sub-block `step` of the code book layout: its 64 indices in the lookup's
  // order (one load) and per slot and K-group the 64-bit mask of its lanes
  // (a kmovq from memory each).
  void decodeMaskedSlots(OpBuilder &b, Location loc, Value block, int64_t step,
                         const DotEmitter &isa,
                         llvm::SmallVectorImpl<DecodedLanes> &out) const {
    const int64_t first = slotsPerStep * step;
    Value indices =
        emitWeightLoad(b, loc, VectorType::get({64}, b.getI8Type()), block,
                       iq2xxsCodebookStepOffset(packed, step));
    SmallVector<Value, 8> masks;
    for (int64_t s = first; s < first + slotsPerStep; ++s)
      for (int j : {0, 4})
        masks.push_back(
            emitWeightLoad(b, loc, b.getI64Type(), block,
                           iq2xxsCodebookSignBit(packed, s, /*r=*/0, j) / 8));
    static const std::array<uint16_t, 256> book = iq2xxsCodeBook();
    SmallVector<Value, 8> lanes;
    isa.getCodeBookLookup()->emitCodeBookMaskedLanes(
        b, loc, indices, masks, book, codeValues(), 2 * kIq2xxsOffset, lanes);
    appendSlotLanes(lanes, first, out);
  }

  kf::PackedLayout packed;
  int64_t slotsPerStep;
  bool hardwareHalf;
};

/// IQ1_S's and IQ1_M's lane offset: 8 w + 9 for w = v + delta / 8.
constexpr int64_t kIq1Offset = 9;
/// The largest |8 w| = |8 v + delta| of IQ1_S and IQ1_M (LaneRange::maxWeight).
constexpr int64_t kIq1MaxEighths = 9;

/// The module's symbol of IQ1_S's and IQ1_M's lane table.
constexpr llvm::StringLiteral kIq1sTable = "kf_iq1s_lanes";

/// iq1s_grid as lanes: 8 (v + 1) for each value v in {-1, 0, 1}, so 0, 8 or
/// 16, to which a slot's delta adds 0 or 2.
std::array<uint64_t, 2048> iq1sLaneTable() {
  return mapGridBytes<2048>(quant::grids::iq1s_grid, [](uint8_t b) {
    return 8 * (static_cast<int64_t>(static_cast<int8_t>(b)) + 1);
  });
}

/// IQ1_S and IQ1_M: an 11-bit index per slot (a low byte and 3 high bits)
/// and a delta of +-1/8 (one per group of 32 for IQ1_S, per slot for
/// IQ1_M). With the delta in units of 1/8, 8 w = 8 v + delta, and the lanes
/// hold 8 w + 9: the table's 8 (v + 1), plus 2 where the delta is
/// positive. The offset 9 comes back out through the activation's sums of
/// 16, so each sub-block's integer dot is sum_j (8 v_j + delta_j) q_j, and
/// the block's integer sum is kf::dot's 8 sumi + sumiDelta (below 2^23).
///
/// The ternary layouts (kf/runtime/packed_layout.h) make the same lanes
/// without the table: a step is a K-group of 2-bit codes c = v + 1 for 16
/// weights of each row, and each of its four lane vectors is one shift that
/// puts the codes of 4 weights at bits 3..4 of their bytes (8 c), a mask, and
/// an or of the deltas' 2: about two instructions per 4R lanes where the
/// gather path spends a gather of R entries per 8 weights.
class Iq1Decode : public WeightDecodeEmitter {
public:
  Iq1Decode(const kf::PackedLayout &layout, bool hardwareHalf)
      : format(layout.format),
        ternary(layout.coding == kf::WeightCoding::Ternary),
        hardwareHalf(hardwareHalf) {}

  // 8 w = 8 v + delta is at most 9 in magnitude: a sub-block's dot, at most
  // 16 * 9 * 127 for IQ1_M, fits int16 (one vpdpwssd meets its scale on
  // AVX-512; IQ1_S's 32 * 9 * 127 does not).
  LaneRange getLaneRange() const override {
    return {5, kIq1Offset, false, kIq1MaxEighths};
  }
  int64_t getBlockElems() const override { return 256; }
  /// IQ1_M has a scale per 16 weights, IQ1_S per 32.
  int64_t getSubBlockElems() const override { return isM() ? 16 : 32; }
  /// A grid slot of 8 weights, or a ternary K-group of 16.
  int64_t getStepsPerBlock() const override { return ternary ? 16 : 32; }

  // IQ1_M's fp16 d is the top nibbles of its four scale words: u =
  // (w0 >> 12) | (w1 >> 8 & 0xf0) | (w2 >> 4 & 0xf00) | (w3 & 0xf000).
  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    auto halves = VectorType::get({rows}, b.getI16Type());
    if (!isM())
      return loadHalfScales(b, loc, block, rows, iq1sDOffset(0), hardwareHalf);
    auto splat = [&](int64_t v) { return emitSplat(b, loc, halves, v); };
    Value bits;
    for (int64_t p = 0; p < 4; ++p) {
      Value word = emitWeightLoad(b, loc, halves, block,
                                  iq1mScalesOffset(layout(rows), p, 0));
      if (p < 3)
        word = arith::ShRUIOp::create(b, loc, word, splat(12 - 4 * p));
      Value nibble = arith::AndIOp::create(b, loc, word, splat(0xf << 4 * p));
      bits = bits ? arith::OrIOp::create(b, loc, bits, nibble) : nibble;
    }
    return emitHalfToFloat(b, loc, bits, hardwareHalf);
  }

  // 2 s + 1, s the sub-block's 3-bit scale: IQ1_S's bits 12..14 of its
  // group's qh (in a ternary layout, bits 3j.. of the row's scale word);
  // IQ1_M's bits 6(g % 2) + 3h.. of scale word g / 2 (g = j / 2, h = j % 2).
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j, const DotEmitter &) const override {
    auto halves = VectorType::get({rows}, b.getI16Type());
    auto words = VectorType::get({rows}, b.getI32Type());
    Value word;
    int64_t shift;
    if (ternary && !isM()) {
      word = emitWeightLoad(b, loc, words, block,
                            iq1sTernaryScalesOffset(layout(rows), 0));
      shift = 3 * j;
    } else if (isM()) {
      word = emitWeightLoad(b, loc, halves, block,
                            iq1mScalesOffset(layout(rows), j / 4, 0));
      shift = 6 * (j / 2 % 2) + 3 * (j % 2);
    } else {
      word = emitWeightLoad(b, loc, halves, block,
                            iq1sQhOffset(layout(rows), j, 0));
      shift = 12;
    }
    if (word.getType() != words)
      word = arith::ExtUIOp::create(b, loc, words, word);
    Value s = extractBits(b, loc, word, shift, 7);
    Value twice = arith::ShLIOp::create(b, loc, s, emitSplat(b, loc, words, 1));
    return arith::OrIOp::create(b, loc, twice, emitSplat(b, loc, words, 1));
  }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    if (ternary)
      decodeTernaryStep(b, loc, block, rows, step, out);
    else
      decodeGridStep(b, loc, block, rows, step, out);
  }

  void declareConstants(OpBuilder &b, Location loc,
                        ModuleOp module) const override {
    if (ternary) // no table: the codes decode with shifts
      return;
    static const std::array<uint64_t, 2048> lanes = iq1sLaneTable();
    declareConstantTable(b, loc, module, kIq1sTable, lanes);
  }

  // kf::dot's IQ1 sum: (d * d_x) * (sumi + 0.125 * sumiDelta), which is
  // (d * d_x) * (isum * 0.125) exactly: isum = 8 sumi + sumiDelta is below
  // 2^23, so both sides are the exact value of isum / 8 before the product.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, wScales, xScale);
    Value eighths =
        arith::MulFOp::create(b, loc, dot, emitEighth(b, loc, dot.getType()));
    return arith::MulFOp::create(b, loc, scale, eighths);
  }

private:
  bool isM() const { return format == kf::Format::IQ1_M; }
  kf::PackedLayout layout(int64_t rows) const {
    return {format, static_cast<int>(rows), kf::LaneEncoding::Unsigned,
            ternary ? kf::WeightCoding::Ternary : kf::WeightCoding::File};
  }

  // Slot `step`: its R grid entries gathered, plus the deltas.
  void decodeGridStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                      int64_t step,
                      llvm::SmallVectorImpl<DecodedLanes> &out) const {
    const int64_t g = step / 4, l = step % 4;
    kf::PackedLayout packed = layout(rows);
    auto words = VectorType::get({rows}, b.getI32Type());
    auto widen = [&](Type element, int64_t offset) -> Value {
      return arith::ExtUIOp::create(
          b, loc, words,
          emitWeightLoad(b, loc, VectorType::get({rows}, element), block,
                         offset));
    };
    Value low = widen(b.getI8Type(), isM() ? iq1mIndexOffset(packed, step, 0)
                                           : iq1sIndexOffset(packed, step, 0));
    // The high index bits and the delta's sign bit: IQ1_S's group qh, bits
    // 3l.. and 15; IQ1_M's qh byte 2g + l / 2, nibble l % 2 (bits 0..2, 3).
    Value qh;
    int64_t highShift, signBit;
    if (isM()) {
      qh = widen(b.getI8Type(), iq1mQhOffset(packed, 2 * g + l / 2, 0));
      highShift = 4 * (l % 2);
      signBit = highShift + 3;
    } else {
      qh = widen(b.getI16Type(), iq1sQhOffset(packed, g, 0));
      highShift = 3 * l;
      signBit = 15;
    }
    Value high =
        arith::ShLIOp::create(b, loc, extractBits(b, loc, qh, highShift, 7),
                              emitSplat(b, loc, words, 8));
    Value indices = arith::OrIOp::create(b, loc, low, high);
    Value table = emitConstantTableAddress(b, loc, kIq1sTable);
    Value entries = emitTableGather(b, loc, table, indices);
    // 2 in every byte of a row whose delta is positive (sign bit clear).
    auto entryType = cast<VectorType>(entries.getType());
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           extractBits(b, loc, qh, signBit, 1),
                                           emitSplat(b, loc, words, 0));
    Value delta = arith::SelectOp::create(
        b, loc, negative, emitSplat(b, loc, entryType, 0),
        emitSplat(b, loc, entryType, 0x0202020202020202));
    Value withDelta = arith::OrIOp::create(b, loc, entries, delta);
    splitSlot(
        b, loc,
        vector::BitCastOp::create(
            b, loc, VectorType::get({8 * rows}, b.getI8Type()), withDelta),
        rows, 8 * step, out);
  }

  // IQ1_M's slot `s`: its R rows' delta bits (set where the delta is
  // +1/8) as a vector<R x i1>, loaded as they lie.
  Value loadPositiveDeltas(OpBuilder &b, Location loc, Value block,
                           int64_t rows, int64_t s) const {
    const int64_t bit = iq1mTernaryDeltaBit(layout(rows), s, 0);
    Type bits = b.getIntegerType(rows);
    Value mask =
        emitWeightLoad(b, loc, b.getIntegerType(std::max<int64_t>(8, rows)),
                       block, iq1mTernaryDeltasOffset(layout(rows)) + bit / 8);
    if (rows < 8) {
      mask = arith::ShRUIOp::create(
          b, loc, mask,
          arith::ConstantIntOp::create(b, loc, mask.getType(), bit % 8));
      mask = arith::TruncIOp::create(b, loc, bits, mask);
    }
    return LLVM::BitcastOp::create(
        b, loc, VectorType::get({rows}, b.getI1Type()), mask);
  }

  // K-group `step` of codes: weights 16 step + 4 j .. + 3 of every row, for
  // j = 0..3, in bits 2j.. of their bytes. Lane = 8 c + 2 (delta +1/8) or
  // 8 c (delta -1/8): the codes shifted to bits 3..4, masked, and or'ed with
  // the rows' deltas (a select per row, one i32 lane per row's 4 bytes).
  void decodeTernaryStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t step,
                         llvm::SmallVectorImpl<DecodedLanes> &out) const {
    kf::PackedLayout packed = layout(rows);
    auto words = VectorType::get({rows}, b.getI32Type());
    auto splat = [&](int64_t v) { return emitSplat(b, loc, words, v); };
    Value codes = emitWeightLoad(b, loc, words, block,
                                 iq1TernaryCodesOffset(packed, step, 0));
    // IQ1_S's sign per group of 32 (bit 24 + g of the scale word); IQ1_M's
    // delta bits per slot of 8, the rows' as one mask.
    Value signs;
    if (!isM())
      signs = emitWeightLoad(b, loc, words, block,
                             iq1sTernaryScalesOffset(packed, 0));
    for (int64_t j = 0; j < 4; ++j) {
      const int64_t weight = 16 * step + 4 * j;
      Value positive =
          isM() ? loadPositiveDeltas(b, loc, block, rows, weight / 8)
                : arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::eq,
                      extractBits(b, loc, signs, 24 + weight / 32, 1), splat(0))
                      .getResult();
      Value delta = arith::SelectOp::create(b, loc, positive, splat(0x02020202),
                                            splat(0));
      const int64_t shift = 2 * j - 3;
      Value atBit3 =
          shift < 0
              ? arith::ShLIOp::create(b, loc, codes, splat(-shift)).getResult()
              : arith::ShRUIOp::create(b, loc, codes, splat(shift)).getResult();
      Value eightC = arith::AndIOp::create(b, loc, atBit3, splat(0x18181818));
      Value lanes = arith::OrIOp::create(b, loc, eightC, delta);
      out.push_back(
          {vector::BitCastOp::create(
               b, loc, VectorType::get({4 * rows}, b.getI8Type()), lanes),
           weight});
    }
  }

  kf::Format format;
  bool ternary;
  bool hardwareHalf;
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createIqGridDecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf,
                          const DotEmitter &isa) {
  if (layout.format == kf::Format::IQ2_XXS)
    return std::make_unique<Iq2XxsDecode>(layout, hardwareHalf, isa);
  assert((layout.format == kf::Format::IQ1_S ||
          layout.format == kf::Format::IQ1_M) &&
         "an IQ grid format");
  return std::make_unique<Iq1Decode>(layout, hardwareHalf);
}

} // namespace kf::codegen
