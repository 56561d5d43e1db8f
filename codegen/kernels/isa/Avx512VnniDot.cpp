//===- Avx512VnniDot.cpp - The AVX-512 VNNI dot emitter: vpdpbusd ---------===//
//
// One vpdpbusd per operand: 64 unsigned lanes (4 weights of each of 16 rows)
// times 4 signed activation bytes broadcast to every row, summed by fours
// into the row's i32 lane, without saturation. The lanes' offset comes back
// out through the activation's quant sum (getCorrectionOffset).
//
// A sub-block's integer scale meets its dot in one vpdpwssd when the dot fits
// int16 (FRACTAL64's; Q4_K's and Q5_K's in parts that fit: emitScaledAdd,
// SubBlockScaleCosts::cheapScaledAddBound), a larger one in fp32 where that is
// exact (VQ3_64's: SubBlockScaleCosts::prefersFloat) or, split into a low byte
// and a high part, when the scale fits a byte (Q6_K's), and a
// K-quant's min meets the activation's sum in one vpdpwssd (emitSumPairTimes);
// the kernels keep LLVM from splitting them (getTuningFeatures).
//
// Table lookups of up to 16 bytes are one vpshufb (AVX-512BW). Up to 64
// bytes, a target with AVX512_VBMI does one vpermb, which picks any of the
// vector's 64 bytes by the index's low 6 bits; without VBMI (Cascade Lake)
// one vpshufb per 16 bytes of the table and masked moves by index bits 4
// and 5 (emitSplitPshufbLookup). With VBMI it also looks up IQ2_XXS's code
// book (emitCodeBookLanes): vpermi2b, vpmultishiftqb and vpermb, no gather;
// with GFNI and BMI2 the lanes are vgf2p8affineqb of the codes, and the
// signs a mask made by pext, instead of a vpermb and a vpmultishiftqb, or
// loaded as they are from IQ2_XXS's code book layout, whose indices are
// stored in the lookup's order (emitCodeBookMaskedLanes).
// GFNI's vgf2p8affineqb also moves and masks any bits of a byte at once
// (emitByteBitMap: FRACTAL64's index bits), and one vpshufb picks a byte of
// each i32 lane (emitWordByte: FRACTAL64's sub-scales).
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <array>
#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

constexpr size_t kVectorBytes = 64;
/// The largest sub-block dot emitScaledAdd scales with one vpdpwssd.
constexpr int64_t kCheapScaledAddBound = 32767;

class Avx512VnniDot : public DotEmitter, public CodeBookLookup {
public:
  Avx512VnniDot(bool vbmi, bool gfni, bool bmi2)
      : vbmi(vbmi), gfni(gfni), bmi2(bmi2) {}

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
  // an add. A larger dot, below 2^23, whose scale fits a signed byte
  // (Q6_K's 16 * 32 * 127 times -128..127)
  // meets it in one vpdpwssd as the int16 pair (dot & 255, dot >> 8), the
  // dot's bytes (0, none) and (1, 2), times (s, 256 s), the scale's bytes
  // (0, 1) and (none, 0): s (dot & 255) + 256 s (dot >> 8) = s dot for either
  // sign (256 * -128 is int16's -32768). It costs a vpshufb per column and
  // one per row group, on port 5, instead of the vpmulld's two uops on
  // port 0.
  Value emitScaledAdd(OpBuilder &b, Location loc, Value acc, Value dot,
                      Value scale, int64_t dotBound,
                      int64_t scaleBound) const override {
    if (dotBound <= kCheapScaledAddBound) {
      Value lowScale = arith::AndIOp::create(
          b, loc, scale,
          emitSplat(b, loc, cast<VectorType>(scale.getType()), 0xffff));
      return emitDpwssd(b, loc, acc, dot, lowScale);
    }
    if (dotBound < (int64_t(1) << 23) && scaleBound <= 128)
      return emitDpwssd(b, loc, acc, emitWordBytes(b, loc, dot, {0, -1, 1, 2}),
                        emitWordBytes(b, loc, scale, {0, 1, -1, 0}));
    return DotEmitter::emitScaledAdd(b, loc, acc, dot, scale, dotBound,
                                     scaleBound);
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
    Value sumPair = vector::BroadcastOp::create(
        b, loc, acc.getType(), emitLoad(b, loc, b.getI32Type(), sums, 0));
    return emitPairDot(b, loc, acc, factor, sumPair);
  }

  Value emitPairDot(OpBuilder &b, Location loc, Value acc, Value x,
                    Value y) const override {
    return emitDpwssd(b, loc, acc, x, y);
  }

  // A dot within int16 meets its scale in one vpdpwssd (emitScaledAdd). A
  // dot beyond int16 (VQ3_64's) meets its scale as an fp32 FMA, which runs
  // on port 0 or 5, instead of a vpshufb of its bytes (port 5) and a vpdpwssd
  // (port 0, where every vpdpbusd runs) or a vpmulld (two port-0 uops).
  SubBlockScaleCosts getSubBlockScaleCosts() const override {
    return {kCheapScaledAddBound, /*prefersFloat=*/true};
  }

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

  Value emitLowBitsTableLookup(OpBuilder &b, Location loc, Value indices,
                               ArrayRef<int8_t> table) const override {
    auto type = cast<VectorType>(indices.getType());
    if (!vbmi || type.getNumElements() != static_cast<int64_t>(kVectorBytes))
      return nullptr;
    auto part = [&](size_t first) {
      return arith::ConstantOp::create(
          b, loc, type,
          DenseElementsAttr::get(type, table.slice(first, kVectorBytes)));
    };
    if (table.size() == kVectorBytes) // vpermb: index bits 0..5
      return emitIntrinsic(b, loc, "llvm.x86.avx512.permvar.qi.512", type,
                           {part(0), indices});
    assert(table.size() == 2 * kVectorBytes && "a table of 64 or 128 bytes");
    // vpermi2b: index bits 0..5 pick the byte, bit 6 the half.
    return emitIntrinsic(b, loc, "llvm.x86.avx512.vpermi2var.qi.512", type,
                         {part(0), indices, part(kVectorBytes)});
  }

  Value emitFloatTableLookup(OpBuilder &b, Location loc, Value indices,
                             ArrayRef<float> table) const override {
    auto type = cast<VectorType>(indices.getType());
    if (type.getNumElements() != 16)
      return nullptr;
    assert(table.size() == 16 && "a table of 16 floats");
    auto floats = VectorType::get({16}, b.getF32Type());
    return emitIntrinsic(
        b, loc, "llvm.x86.avx512.permvar.sf.512", floats,
        {arith::ConstantOp::create(b, loc, floats,
                                   DenseElementsAttr::get(floats, table)),
         indices});
  }

  Value emitWordByte(OpBuilder &b, Location loc, Value words,
                     int64_t index) const override {
    return emitWordBytes(b, loc, words, {int8_t(index), -1, -1, -1});
  }

  Value emitByteBitMap(OpBuilder &b, Location loc, Value bytes,
                       ArrayRef<int8_t> from) const override {
    if (!gfni)
      return nullptr;
    assert(from.size() == 8 && "a source bit (or none) per bit of a byte");
    uint64_t matrix = 0;
    for (int64_t i = 0; i < 8; ++i)
      if (from[i] >= 0)
        matrix |= uint64_t(1) << (8 * (7 - i) + from[i]);
    return emitAffine(b, loc, bytes, matrix, 0);
  }

  const CodeBookLookup *getCodeBookLookup() const override {
    return vbmi ? this : nullptr;
  }
  int64_t getCodeBookIndices() const override { return kVectorBytes; }

  // 4 slots of 16 rows, their indices first permuted so that qword q holds
  // rows 2q and 2q + 1 of every slot (byte 2s + rr: slot s, row 2q + rr). The
  // book's low and high bytes, codes 0..3 and 4..7 of an entry, are looked up
  // in that order by two vpermi2b each (index bits 0..6) and a blend by bit 7,
  // so that per slot and K-group one vpmultishiftqb brings each lane's code to
  // bits 0..1 (the other bits are the neighbours').
  //
  // With GFNI and BMI2 a vgf2p8affineqb (port 0) maps the code to its lane,
  // an affine map over GF(2) of bits 0..1, and the sign is a masked subtract
  // from `negatedFrom`; the mask is nibble h of the slot's 16 sign bytes, two
  // pext of the bytes as they are in memory (port 1) and a kmovq. Without, the
  // sign bytes are permuted as the indices, one more vpmultishiftqb brings
  // each lane's sign bit to bit 2, a vpternlogq joins it to the code and a
  // vpermb of the 8 lanes repeated every 8 bytes maps the 3 bits to the lane.
  // On the development CPU every shuffle (vpmultishiftqb and vpermb; a
  // vpermi2b or vpermt2w takes two cycles) and kmovq issue on port 5 and the
  // other 512-bit ALU instructions on ports 0 and 5: with GFNI 2 port-5
  // cycles per 64 lanes and 10 per 4 slots, about 14.5 uops on the two ports
  // per slot; without, 3 and 12, port 5 alone the bound (9 cycles per slot).
  // BITALG's vpshufbitqmb would make the mask from the permuted sign bytes,
  // but it takes ports 0 and 5, no fewer uops than the shuffles it replaces,
  // and gained nothing (docs/codegen-measurements.md, "IQ grid formats").
  // The code book layout (emitCodeBookMaskedLanes) stores the indices
  // permuted and the masks made.
  void emitCodeBookLanes(OpBuilder &b, Location loc, Value indices, Value signs,
                         ArrayRef<uint16_t> book, ArrayRef<int8_t> values,
                         int64_t negatedFrom,
                         SmallVectorImpl<Value> &out) const override {
    assert(vbmi && "a code book lookup needs VBMI");
    SmallVector<int64_t, kVectorBytes> byRowPair;
    for (size_t i = 0; i < kVectorBytes; ++i)
      byRowPair.push_back(i % 8 / 2 * kRows + 2 * (i / 8) + i % 2);
    Value index =
        vector::ShuffleOp::create(b, loc, indices, indices, byRowPair);
    const std::array<Value, 2> codes = emitBookCodes(b, loc, index, book);
    if (gfni && bmi2) {
      for (int64_t s = 0; s < kSlots; ++s)
        for (int64_t h = 0; h < 2; ++h)
          out.push_back(emitAffineLanes(
              b, loc, emitSlotCodes(b, loc, codes, s, h),
              emitSignMask(b, loc, signs, s, h), values, negatedFrom));
      return;
    }
    // The sign bytes in the indices' order and the lanes by code c and sign
    // bit n in byte c + 4 n.
    Value sign = vector::ShuffleOp::create(b, loc, signs, signs, byRowPair);
    Value table = emitBytes(b, loc, [&](size_t i) {
      return i % 8 < 4 ? values[i % 4] : negatedFrom - values[i % 4];
    });
    for (int64_t s = 0; s < kSlots; ++s)
      for (int64_t h = 0; h < 2; ++h) {
        Value code = emitSlotCodes(b, loc, codes, s, h);
        Value signBit = emitMultishift(b, loc, sign, [&](size_t i) {
          return (slotByte(s, i) + 4 * h + i % 4 - 2) & 63;
        });
        // ((code ^ sign) & 3) ^ sign: the code's bits 0..1, the sign's others.
        auto type = cast<VectorType>(code.getType());
        Value joined = arith::XOrIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc,
                                  arith::XOrIOp::create(b, loc, code, signBit),
                                  emitSplat(b, loc, type, 3)),
            signBit);
        out.push_back(emitIntrinsic(b, loc, "llvm.x86.avx512.permvar.qi.512",
                                    type, {table, joined}));
      }
  }

  bool hasCodeBookMaskedLanes() const override { return vbmi && gfni && bmi2; }

  // emitCodeBookLanes's GFNI path on indices already in row-pair order and
  // masks already made: per 4 slots 8 vpermi2b-cycles on port 5, and per 64
  // lanes a vpmultishiftqb, a vgf2p8affineqb, a kmovq from memory and a
  // masked vpsubb: no vpermt2w, pext or kmovq from a general register.
  void emitCodeBookMaskedLanes(OpBuilder &b, Location loc, Value indices,
                               ArrayRef<Value> masks, ArrayRef<uint16_t> book,
                               ArrayRef<int8_t> values, int64_t negatedFrom,
                               SmallVectorImpl<Value> &out) const override {
    assert(hasCodeBookMaskedLanes() && masks.size() == 2 * kSlots &&
           "a mask per slot and K-group");
    const std::array<Value, 2> codes = emitBookCodes(b, loc, indices, book);
    for (int64_t s = 0; s < kSlots; ++s)
      for (int64_t h = 0; h < 2; ++h)
        out.push_back(emitAffineLanes(b, loc,
                                      emitSlotCodes(b, loc, codes, s, h),
                                      masks[2 * s + h], values, negatedFrom));
  }

private:
  static constexpr int64_t kRows = kVectorBytes / 4, kSlots = 4;

  /// A constant byte vector, byte i byteAt(i).
  template <typename ByteAt>
  static Value emitBytes(OpBuilder &b, Location loc, ByteAt &&byteAt) {
    auto type = VectorType::get({int64_t(kVectorBytes)}, b.getI8Type());
    SmallVector<int8_t, kVectorBytes> bytes(kVectorBytes);
    for (size_t i = 0; i < kVectorBytes; ++i)
      bytes[i] = static_cast<int8_t>(byteAt(i));
    return arith::ConstantOp::create(
               b, loc, type, DenseElementsAttr::get(type, ArrayRef(bytes)))
        .getResult();
  }

  /// vpmultishiftqb: byte i of each qword of `data` from bit offsetAt(i).
  template <typename OffsetAt>
  static Value emitMultishift(OpBuilder &b, Location loc, Value data,
                              OffsetAt &&offsetAt) {
    return emitIntrinsic(b, loc, "llvm.x86.avx512.pmultishift.qb.512",
                         data.getType(), {emitBytes(b, loc, offsetAt), data});
  }

  /// The bit offset, within its qword, of the byte of slot s's entries that
  /// output byte i reads: byte i is lane 4 rr + t of row 2 (i / 8) + rr, rr =
  /// i % 8 / 4.
  static int64_t slotByte(int64_t s, size_t i) {
    return 8 * (2 * s + i % 8 / 4);
  }

  /// The book's low and high bytes (codes 0..3 and 4..7) of each entry
  /// `index` names: two vpermi2b each and a blend by the index's bit 7.
  static std::array<Value, 2> emitBookCodes(OpBuilder &b, Location loc,
                                            Value index,
                                            ArrayRef<uint16_t> book) {
    assert(book.size() == 256 && "a book of 256 entries");
    auto type = cast<VectorType>(index.getType());
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                                       emitSplat(b, loc, type, 0));
    auto lookUp = [&](int64_t half) {
      auto part = [&](int64_t first) {
        return emitBytes(b, loc,
                         [&](size_t i) { return book[first + i] >> 8 * half; });
      };
      auto permute2 = [&](int64_t first) {
        return emitIntrinsic(b, loc, "llvm.x86.avx512.vpermi2var.qi.512", type,
                             {part(first), index, part(first + 64)});
      };
      return arith::SelectOp::create(b, loc, high, permute2(128), permute2(0))
          .getResult();
    };
    return {lookUp(0), lookUp(1)};
  }

  /// Slot s's K-group h's codes at bits 0..1 of each lane: one
  /// vpmultishiftqb.
  static Value emitSlotCodes(OpBuilder &b, Location loc,
                             const std::array<Value, 2> &codes, int64_t s,
                             int64_t h) {
    return emitMultishift(b, loc, codes[h], [&](size_t i) {
      return slotByte(s, i) + 2 * (i % 4);
    });
  }

  /// Slot s's K-group h's sign mask from its sign bytes as they lie (`signs`,
  /// slot s's row r in byte 16 s + r), lane 4r + t's sign (bit 4h + t of row
  /// r's byte) at bit 4r + t: nibble h of the 8 bytes of rows 0..7 (low half)
  /// and of rows 8..15 (high half), two pext.
  static Value emitSignMask(OpBuilder &b, Location loc, Value signs, int64_t s,
                            int64_t h) {
    auto i64 = b.getI64Type();
    Value words =
        vector::BitCastOp::create(b, loc, VectorType::get({8}, i64), signs);
    auto nibbles = [&](int64_t w) {
      return emitIntrinsic(
          b, loc, "llvm.x86.bmi.pext.64", i64,
          {vector::ExtractOp::create(b, loc, words, w).getResult(),
           emitWord(b, loc, 0x0f0f0f0f0f0f0f0fULL << 4 * h)});
    };
    return arith::OrIOp::create(b, loc, nibbles(2 * s),
                                arith::ShLIOp::create(b, loc,
                                                      nibbles(2 * s + 1),
                                                      emitWord(b, loc, 32)));
  }

  static Value emitWord(OpBuilder &b, Location loc, uint64_t v) {
    return arith::ConstantOp::create(
               b, loc, b.getI64IntegerAttr(static_cast<int64_t>(v)))
        .getResult();
  }

  /// The lanes of `code` (at bits 0..1 of each byte): values[c] by
  /// vgf2p8affineqb, negatedFrom - values[c] where bit i of `mask` (an i64)
  /// is set for lane i. Lane bit i is the parity of the code byte and the
  /// matrix's byte 7 - i, plus bit i of values[0]: code bit j flips the bits
  /// of values[1 << j] ^ values[0].
  static Value emitAffineLanes(OpBuilder &b, Location loc, Value code,
                               Value mask, ArrayRef<int8_t> values,
                               int64_t negatedFrom) {
    assert(values.size() == 4 &&
           values[3] == (values[0] ^ values[1] ^ values[2]) &&
           "a lane map affine over GF(2)");
    auto type = cast<VectorType>(code.getType());
    uint64_t matrix = 0;
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 2; ++j)
        matrix |= static_cast<uint64_t>((values[1 << j] ^ values[0]) >> i & 1)
                  << (8 * (7 - i) + j);
    Value lane = emitAffine(b, loc, code, matrix, values[0]);
    Value negate = LLVM::BitcastOp::create(
        b, loc, VectorType::get({type.getNumElements()}, b.getI1Type()), mask);
    Value negated = arith::SubIOp::create(
        b, loc, emitSplat(b, loc, type, negatedFrom), lane);
    return arith::SelectOp::create(b, loc, negate, negated, lane);
  }

  /// vgf2p8affineqb of `bytes` (vector<64 x i8>): bit i of each result byte is
  /// the parity of the byte and `matrix`'s byte 7 - i, xor bit i of `add`.
  static Value emitAffine(OpBuilder &b, Location loc, Value bytes,
                          uint64_t matrix, int8_t add) {
    auto type = cast<VectorType>(bytes.getType());
    return emitIntrinsic(
        b, loc, "llvm.x86.vgf2p8affineqb.512", type,
        {bytes,
         vector::BitCastOp::create(
             b, loc, type,
             vector::BroadcastOp::create(b, loc,
                                         VectorType::get({8}, b.getI64Type()),
                                         emitWord(b, loc, matrix))),
         arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(add))
             .getResult()});
  }

  /// `acc` plus, per i32 lane, the dot of the int16 pairs of `x` and `y`
  /// (vector<16 x i32> each): one vpdpwssd.
  static Value emitDpwssd(OpBuilder &b, Location loc, Value acc, Value x,
                          Value y) {
    auto pairs = VectorType::get({32}, b.getI16Type());
    return emitIntrinsic(b, loc, "llvm.x86.avx512.vpdpwssd.512", acc.getType(),
                         {acc, vector::BitCastOp::create(b, loc, pairs, x),
                          vector::BitCastOp::create(b, loc, pairs, y)});
  }

  /// Each i32 lane of `words` with byte i taken from its byte bytes[i], or 0
  /// where that is -1: one vpshufb.
  static Value emitWordBytes(OpBuilder &b, Location loc, Value words,
                             std::array<int8_t, 4> bytes) {
    auto type = VectorType::get({int64_t(kVectorBytes)}, b.getI8Type());
    SmallVector<int8_t, kVectorBytes> indices(kVectorBytes);
    for (size_t i = 0; i < kVectorBytes; ++i)
      indices[i] = bytes[i % 4] < 0
                       ? int8_t(0x80)
                       : static_cast<int8_t>(i % 16 / 4 * 4 + bytes[i % 4]);
    Value shuffled = emitIntrinsic(
        b, loc, "llvm.x86.avx512.pshuf.b.512", type,
        {vector::BitCastOp::create(b, loc, type, words),
         arith::ConstantOp::create(
             b, loc, type, DenseElementsAttr::get(type, ArrayRef(indices)))});
    return vector::BitCastOp::create(b, loc, words.getType(), shuffled);
  }

  bool vbmi;
  /// GFNI: byte bit maps and the code book's lanes by vgf2p8affineqb; with
  /// BMI2 too, the code book's signs by pext.
  bool gfni, bmi2;
};

} // namespace

std::unique_ptr<DotEmitter> createAvx512VnniDotEmitter(bool vbmi, bool gfni,
                                                       bool bmi2) {
  return std::make_unique<Avx512VnniDot>(vbmi, gfni, bmi2);
}

} // namespace kf::codegen
