//===- Vq3Decode.cpp - The decode emitter of VQ3_64 -----------------------===//
//
// The packed layout of kf/runtime/packed_layout.h: per block of 64 weights
// six K-groups [q][r][4] holding each row's slot bytes, slots 4q .. 4q + 3
// (K-group 5: the rows' slots 20 and 21, two bytes each, then their fp16 d's:
// one half-vector load, as vcvtph2ps takes them), a book3 slot's sign at bit
// 6 (vq3_64SlotIndexBits) and the sub-scale stream in the bits above the
// indices (vq3_64StreamBit). Slots 20 and 21 widened to words, the pair in
// both halves (one vpermw), stand for K-group 5's words: either half meets
// the next or the previous K-group's slots in one funnel shift (vpshldd).
//
// Weight i = t + 22c is component c of slot t's codeword, so the 4 weights
// of K-group g of the lanes are 4 slots of one component (two components
// only where g straddles weight 22): the slot bytes of one packed K-group,
// or the upper half of one and the lower half of the next (weights 24..43
// are slots 2..21). Where the ISA looks up 128 entries by the bytes' low 7
// bits in one instruction (emitLowBitsTableLookup: vpermi2b), each
// component's book3 followed by its negation is one lookup of the slot bytes
// as they lie, sign included, and book2's 32 entries followed by their
// negation one vpermb (sign at bit 5): no mask, no negation. Elsewhere a
// lookup of the component's stored half book (64 int8 entries of book3,
// looked up with the low 6 index bits: tbl4 or 4 vpshufb; 32 of book2 for
// slots 20 and 21) gives C, negated where the sign bit (bit 6; book2's bit 5)
// is set. The lanes hold C + 128 on x86 (the offset that negating modulo 256
// keeps: 0 - (C + 128) = -C + 128) and C itself for NEON's signed dot.
//
// The sub-scales m = 2 + u come from the 24-bit stream in the slot bytes'
// spare bits, laid out so that bit i of u_k sits in byte k % 4 of one K-group
// per i: each K-group's spare bits moved to bit i of its bytes (one byte bit
// map, vgf2p8affineqb, or a shift and a mask) and or'ed give words whose byte
// j is u_j (K-groups 0..2) or u_{4 + j} (K-groups 3, 4 and the widened
// slots 20 and 21, whose halves repeat their bytes). A sub-scale is then
// its byte shifted down: on AVX-512 one vpermps of a 16-entry table of m by
// the byte's low 4 bits (DotEmitter::emitFloatTableLookup), the fp32 m the
// loop nest scales by, with no mask, no add and no conversion; elsewhere a
// mask and an add. This replaced a byte dot per sub-scale and K-group word
// it lay in (13 vpdpbusd per block, on port 0 with the dots) and the
// conversions. The loop nest keeps one exact integer dot per sub-block of 8,
// multiplies it by m and adds up per 32 weights; scaleBlock does kf::dot's
// float work per half: sumi * (d * G) * d_x.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "quant/vq3_64_tables.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

using namespace mlir;

namespace kf::codegen {
namespace {

using quant::kVq3Book2;
using quant::kVq3Book3;

constexpr int64_t kSlots = 22;

// Where subScaleWords reads bit i of u_k: bit 7 of byte k % 4 of K-group i
// (k < 4) or 3 + i (k >= 4, i < 2), else bit 6 (k = 4, 5) or 7 (k = 6, 7) of
// slot 20 + k % 2 (K-group 5); the runtime packs the stream there.
constexpr bool readsThePackedStreamBits() {
  for (int s = 0; s < 24; ++s) {
    const int k = s / 3, i = s % 3;
    const int kGroup = k < 4 ? i : 3 + i;
    const int byte = kGroup == 5 ? k % 2 : k % 4;
    const int bit = kGroup == 5 && k < 6 ? 6 : 7;
    const kf::Vq3StreamBit at = kf::vq3_64StreamBit(s);
    if (at.slot != 4 * kGroup + byte || at.bit != bit)
      return false;
  }
  return true;
}
static_assert(readsThePackedStreamBits(),
              "subScaleWords reads the stream bits where the layout puts them");

class Vq3Decode : public WeightDecodeEmitter, public PackedOrderSteps {
public:
  Vq3Decode(const kf::PackedLayout &layout, bool hardwareHalf)
      : hardwareHalf(hardwareHalf),
        isSigned(layout.encoding == kf::LaneEncoding::Signed) {
    // The signed books per component, with the lanes' offset: entry i +
    // size is entry i negated (modulo 256, which keeps the offset); the
    // masked lookups read the first half.
    const int bias = isSigned ? 0 : 128;
    auto entry = [&](int value, bool negated) {
      return static_cast<int8_t>(
          static_cast<uint8_t>((negated ? bias - value : value + bias) & 255));
    };
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 128; ++i)
        book3[c][i] = entry(kVq3Book3[i % 64][c], i >= 64);
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 64; ++i)
        book2[c][i] = entry(kVq3Book2[i % 32][c], i >= 32);
  }

  LaneRange getLaneRange() const override {
    return isSigned ? LaneRange{8, 0, true} : LaneRange{8, 128, false};
  }
  int64_t getBlockElems() const override { return 64; }
  int64_t getSubBlockElems() const override { return 8; }
  bool decodesWholeSubBlocks() const override { return true; }
  int64_t getStepsPerBlock() const override { return 8; }

  // d * G, the reference's block scale.
  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    Value d =
        loadHalfScales(b, loc, block, rows,
                       kf::vq3_64DOffset(layoutOf(rows), 0), hardwareHalf);
    auto f32Rows = VectorType::get({rows}, b.getF32Type());
    Value g = arith::ConstantOp::create(
        b, loc, f32Rows,
        DenseElementsAttr::get(f32Rows, quant::kVq3BlockScaleFactor));
    return arith::MulFOp::create(b, loc, d, g);
  }

  // Step s: sub-block s, weights 8s .. 8s + 7, K-groups 2s and 2s + 1.
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    for (int64_t g = 2 * step; g < 2 * step + 2; ++g)
      out.push_back({emitKGroup(b, loc, block, rows, g, isa), 4 * g});
  }

  // In the packed order a component's lanes are a packed K-group's slots
  // looked up as they lie: no funnel shifts for the K-groups of component 1
  // (weights 22..43 lie 2 bytes off the slots' K-groups) and no merged
  // lookups where a K-group straddles two books or components, for 4 more
  // dots where a K-group straddles two sub-blocks (masked halves), 20 in
  // all: 17 lookups and 20 dots instead of 18 lookups, 6 funnel shifts, 2
  // merges and 16 dots. The K-groups of component 1 that straddle two
  // sub-blocks are looked up in both steps: the same invariant loads and
  // lookups, which LLVM merges.
  const PackedOrderSteps *getPackedOrderSteps() const override { return this; }

  void decodePackedOrderStep(
      OpBuilder &b, Location loc, Value block, int64_t rows, int64_t step,
      const DotEmitter &isa,
      llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    auto bytes = VectorType::get({4 * rows}, b.getI8Type());
    forEachPackedOrderWord(step, [&](int64_t q, int c, ActivationWord word) {
      std::array<bool, 4> fromBook2;
      std::array<int, 4> component;
      fromBook2.fill(q == 5);
      component.fill(c);
      Value slots = vector::BitCastOp::create(
          b, loc, bytes, loadSlotWords(b, loc, block, rows, q));
      out.push_back({lookUpLanes(b, loc, slots, fromBook2, component, isa),
                     word.kOffset, word.mask});
    });
  }

  void getPackedOrderWords(
      llvm::SmallVectorImpl<ActivationWord> &out) const override {
    for (int64_t step = 0; step < getStepsPerBlock(); ++step)
      forEachPackedOrderWord(step, [&](int64_t, int, ActivationWord word) {
        out.push_back(word);
      });
  }

  // m = 2 + u_k, u_k = byte k % 4 of subScaleWords(k / 4): its bits 0..2,
  // or 0, 1 and 3 for u_6 and u_7.
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t k, const DotEmitter &isa) const override {
    auto words = VectorType::get({rows}, b.getI32Type());
    auto splat = [&](int64_t value) { return emitSplat(b, loc, words, value); };
    Value bits = subScaleByte(b, loc, block, rows, k, isa);
    Value u = arith::AndIOp::create(b, loc, bits, splat(k < 6 ? 7 : 3));
    if (k >= 6)
      u = arith::OrIOp::create(
          b, loc, u,
          arith::AndIOp::create(b, loc,
                                arith::ShRUIOp::create(b, loc, bits, splat(1)),
                                splat(4)));
    return arith::AddIOp::create(b, loc, u, splat(quant::kVq3MinSubScale));
  }

  // The same by one 16-entry lookup of the byte's low 4 bits (vpermps), with
  // no mask and no conversion, where the ISA has it.
  Value getFloatSubBlockScale(OpBuilder &b, Location loc, Value block,
                              int64_t rows, int64_t k,
                              const DotEmitter &isa) const override {
    std::array<float, 16> table;
    for (int i = 0; i < 16; ++i)
      table[i] = static_cast<float>(quant::kVq3MinSubScale +
                                    (k < 6 ? i & 7 : (i & 3) | (i >> 1 & 4)));
    return isa.emitFloatTableLookup(
        b, loc, subScaleByte(b, loc, block, rows, k, isa), table);
  }

  int64_t getSubBlockScaleBound() const override {
    return quant::kVq3MaxSubScale;
  }

  // kf::dot's VQ3_64, per 32 weights: sumi * dG * d_x, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    return emitDotTimesWeightTimesActivation(b, loc, dot, wScales, xScale);
  }

private:
  static kf::PackedLayout layoutOf(int64_t rows) {
    return {kf::Format::VQ3_64, static_cast<int>(rows)};
  }
  /// Packed K-group q of slot bytes as R words (row r's 4 bytes in one); for
  /// q = 5 the rows' bytes of slots 20 and 21 widened to words, the pair in
  /// both halves.
  Value loadSlotWords(OpBuilder &b, Location loc, Value block, int64_t rows,
                      int64_t q) const {
    auto words = VectorType::get({rows}, b.getI32Type());
    const int64_t offset = kf::vq3_64SlotOffset(layoutOf(rows), 4 * q, 0);
    if (q < 5)
      return emitWeightLoad(b, loc, words, block, offset);
    Value pairs = emitWeightLoad(
        b, loc, VectorType::get({rows}, b.getI16Type()), block, offset);
    SmallVector<int64_t, 32> twice(2 * rows);
    for (int64_t i = 0; i < 2 * rows; ++i)
      twice[i] = i / 2;
    return vector::BitCastOp::create(
        b, loc, words, vector::ShuffleOp::create(b, loc, pairs, pairs, twice));
  }

  /// Words whose byte j holds u_{4h + j}'s bits (vq3_64StreamBit): bit i
  /// of each byte of K-group 3h + i (i < 2, and i = 2 for h = 0) moved to bit
  /// i, or'ed; for h = 1 slots 20 and 21 widened (loadSlotWords(5): bytes 0
  /// and 1 again in 2 and 3), their bits 6 and 7 moved to bits 2 and 3: u_4
  /// and u_5 take bit 2, u_6 and u_7 bit 3.
  Value subScaleWords(OpBuilder &b, Location loc, Value block, int64_t rows,
                      int64_t h, const DotEmitter &isa) const {
    auto bytes = VectorType::get({4 * rows}, b.getI8Type());
    auto slotBytes = [&](int64_t q) -> Value {
      return vector::BitCastOp::create(b, loc, bytes,
                                       loadSlotWords(b, loc, block, rows, q));
    };
    Value merged;
    auto merge = [&](Value bits) {
      merged = merged ? arith::OrIOp::create(b, loc, merged, bits).getResult()
                      : bits;
    };
    for (int64_t i = 0; i < (h == 0 ? 3 : 2); ++i)
      merge(emitBitsAt(b, loc, isa, slotBytes(3 * h + i), 7, 1, i));
    if (h == 1)
      merge(emitBitsAt(b, loc, isa, slotBytes(5), 6, 2, 2));
    return vector::BitCastOp::create(
        b, loc, VectorType::get({rows}, b.getI32Type()), merged);
  }
  /// u_k's byte of subScaleWords moved to the bottom of each word; the bits
  /// above it are other sub-scales'.
  Value subScaleByte(OpBuilder &b, Location loc, Value block, int64_t rows,
                     int64_t k, const DotEmitter &isa) const {
    Value words = subScaleWords(b, loc, block, rows, k / 4, isa);
    if (k % 4 == 0)
      return words;
    return arith::ShRUIOp::create(
        b, loc, words,
        emitSplat(b, loc, cast<VectorType>(words.getType()), 8 * (k % 4)));
  }

  /// The packed-order lane vectors with weights in sub-block s, in K order:
  /// component c of packed K-group q (slots 4q .. 4q + 3, weights 22c + 4q +
  /// i), or for q = 5 of slots 20 and 21 (weights 22c + 20 + i, i < 2, c <
  /// 2), each with the lanes whose weight lies in the sub-block.
  template <typename Fn>
  static void forEachPackedOrderWord(int64_t s, Fn &&fn) {
    for (int c = 0; c < 3; ++c)
      for (int64_t q = 0; q < (c < 2 ? 6 : 5); ++q) {
        const int64_t first = 22 * c + 4 * q;
        unsigned mask = 0;
        for (int64_t i = 0; i < (q < 5 ? 4 : 2); ++i)
          if ((first + i) / 8 == s)
            mask |= 1u << i;
        if (mask != 0)
          fn(q, c, ActivationWord{first, mask});
      }
  }

  /// The lanes of weights 4g .. 4g + 3.
  Value emitKGroup(OpBuilder &b, Location loc, Value block, int64_t rows,
                   int64_t g, const DotEmitter &isa) const {
    auto words = VectorType::get({rows}, b.getI32Type());
    auto bytes = VectorType::get({4 * rows}, b.getI8Type());
    // Lane i holds slot (4g + i) mod 22 of component (4g + i) / 22.
    const int64_t first = 4 * g % kSlots;
    Value slotWords;
    if (first % 4 == 0 && first < 20) { // slots first .. first + 3
      slotWords = loadSlotWords(b, loc, block, rows, first / 4);
    } else { // two K-groups' halves: slots first, first + 1 in the upper
             // half of one (slots 20, 21 in either half of K-group 5's
             // words), the next two in the lower half of the next (g = 5:
             // 20, 21, 0, 1)
      Value low = arith::ShRUIOp::create(
          b, loc, loadSlotWords(b, loc, block, rows, first / 4),
          emitSplat(b, loc, words, 16));
      Value high = arith::ShLIOp::create(
          b, loc, loadSlotWords(b, loc, block, rows, (first + 2) % kSlots / 4),
          emitSplat(b, loc, words, 16));
      slotWords = arith::OrIOp::create(b, loc, low, high);
    }
    // Which lanes are book2's (slots 20, 21) and each lane's component.
    std::array<bool, 4> fromBook2;
    std::array<int, 4> component;
    for (int64_t i = 0; i < 4; ++i) {
      fromBook2[i] = (4 * g + i) % kSlots >= 20;
      component[i] = static_cast<int>((4 * g + i) / kSlots);
    }
    return lookUpLanes(b, loc,
                       vector::BitCastOp::create(b, loc, bytes, slotWords),
                       fromBook2, component, isa);
  }

  /// Lane i of each row: component component[i] of book2's (fromBook2[i]) or
  /// book3's entry of its byte of `slots` (vector<4R x i8>), signed.
  Value lookUpLanes(OpBuilder &b, Location loc, Value slots,
                    const std::array<bool, 4> &fromBook2,
                    const std::array<int, 4> &component,
                    const DotEmitter &isa) const {
    auto bytes = cast<VectorType>(slots.getType());
    const int64_t rows = bytes.getNumElements() / 4;
    auto laneConstant = [&](auto value) {
      SmallVector<int8_t, 64> lanes(4 * rows);
      for (int64_t l = 0; l < 4 * rows; ++l)
        lanes[l] = static_cast<int8_t>(value(l % 4));
      return arith::ConstantOp::create(
          b, loc, bytes, DenseElementsAttr::get(bytes, ArrayRef(lanes)));
    };
    // The signed lookup, or the unsigned half's (the sign applied below).
    bool signedLookups = false;
    auto lookup = [&](bool two, int c) -> Value {
      ArrayRef<int8_t> book =
          two ? ArrayRef<int8_t>(book2[c]) : ArrayRef<int8_t>(book3[c]);
      if (Value looked = isa.emitLowBitsTableLookup(b, loc, slots, book)) {
        signedLookups = true;
        return looked;
      }
      Value index = arith::AndIOp::create(
          b, loc, slots, emitSplat(b, loc, bytes, two ? 31 : 63));
      return isa.emitTableLookup(b, loc, index,
                                 book.take_front(book.size() / 2));
    };
    // One lookup per (book, component) the K-group's lanes use, merged by
    // lane.
    Value lanes;
    for (int64_t i = 0; i < 4; ++i) {
      bool seen = false;
      for (int64_t p = 0; p < i; ++p)
        seen |= fromBook2[p] == fromBook2[i] && component[p] == component[i];
      if (seen)
        continue;
      Value looked = lookup(fromBook2[i], component[i]);
      if (!lanes) {
        lanes = looked;
        continue;
      }
      Value mine = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, laneConstant([&](int64_t l) {
            return fromBook2[l] == fromBook2[i] && component[l] == component[i];
          }),
          emitSplat(b, loc, bytes, 0));
      lanes = arith::SelectOp::create(b, loc, mine, looked, lanes);
    }
    if (signedLookups)
      return lanes;
    // The sign: bit 6 (book3), bit 5 (book2).
    Value signBits =
        laneConstant([&](int64_t l) { return fromBook2[l] ? 0x20 : 0x40; });
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              arith::AndIOp::create(b, loc, slots, signBits),
                              emitSplat(b, loc, bytes, 0));
    Value negated =
        arith::SubIOp::create(b, loc, emitSplat(b, loc, bytes, 0), lanes);
    return arith::SelectOp::create(b, loc, negative, negated, lanes);
  }

  bool hardwareHalf;
  bool isSigned;
  std::array<std::array<int8_t, 128>, 3> book3;
  std::array<std::array<int8_t, 64>, 2> book2;
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createVq3DecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf) {
  return std::make_unique<Vq3Decode>(layout, hardwareHalf);
}

} // namespace kf::codegen
