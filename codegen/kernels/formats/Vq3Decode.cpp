//===- Vq3Decode.cpp - The decode emitter of VQ3_64 -----------------------===//
//
// The packed layout of kf/runtime/packed_layout.h: per block of 64 weights
// six K-groups [q][r][4] holding each row's slot bytes, slots 4q .. 4q + 3
// (K-group 5: slots 20 and 21, then the fp16 d), a book3 slot's sign at bit 6
// and its stream bit at bit 7 (vq3_64_slot_byte).
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
// spare bits (bit 7 of slot t < 20 is stream bit t, bit 6 of slots 20 and 21
// bits 20 and 21, their bit 7 bits 22 and 23): each u is gathered on its own
// by the ISA's byte dot (vpdpbusd, sdot) of its bits, moved to bit 0 of their
// bytes (one byte bit map, or a shift and a mask), with the weights 1, 2, 4,
// one dot per K-group word it lies in (one or two), rather than the whole
// stream by vpmulld (two uops each) and shifted out per sub-block. The loop
// nest keeps one exact integer dot per sub-block of 8, multiplies it by m and
// adds up per 32 weights; scaleBlock does kf::dot's float work per half:
// sumi * (d * G) * d_x.
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

class Vq3Decode : public WeightDecodeEmitter {
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
    kf::PackedLayout layout = layoutOf(rows);
    Value words =
        emitWeightLoad(b, loc, VectorType::get({rows}, b.getI32Type()), block,
                       kf::vq3_64_slot_offset(layout, 20, 0));
    Value halves = arith::TruncIOp::create(
        b, loc, VectorType::get({rows}, b.getI16Type()),
        arith::ShRUIOp::create(
            b, loc, words,
            emitSplat(b, loc, cast<VectorType>(words.getType()), 16)));
    static_assert(kf::vq3_64_d_offset(kf::PackedLayout{}, 0) ==
                      kf::vq3_64_slot_offset(kf::PackedLayout{}, 20, 0) + 2,
                  "d is the upper half of the last K-group's words");
    Value d = emitHalfToFloat(b, loc, halves, hardwareHalf);
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

  // m = 2 + u, u = stream bits 3k .. 3k + 2: the stream bits (one per byte
  // of a K-group's word, moved to bit 0) weighted 1, 2, 4 and summed into 2
  // by one byte dot per word they lie in (one or two).
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t k, const DotEmitter &isa) const override {
    auto words = VectorType::get({rows}, b.getI32Type());
    auto bytes = VectorType::get({4 * rows}, b.getI8Type());
    // Bit `bit` of each byte of K-group q at bit 0, the byte's other bits
    // clear (d's bytes in K-group 5 too, which the dot weighs by 0).
    auto bitsAt = [&](int64_t q, int64_t bit) -> Value {
      Value w = loadSlotWords(b, loc, block, rows, q);
      return emitBitsAt(b, loc, isa,
                        vector::BitCastOp::create(b, loc, bytes, w), bit, 1, 0);
    };
    // Stream bit t: bit 7 of slot t (t < 20; slot t is byte t % 4 of K-group
    // t / 4), bit 6 of slots 20 and 21, then their bit 7.
    auto streamBit = [](int64_t t) -> std::pair<int64_t, int64_t> {
      if (t < 20)
        return {t / 4 * 8 + 7, t % 4}; // (word q, bit) as 8q + bit, byte
      if (t < kSlots)
        return {5 * 8 + 6, t - 20};
      return {5 * 8 + 7, t - kSlots};
    };
    SmallVector<std::pair<int64_t, std::array<int8_t, 4>>, 2> terms;
    for (int64_t j = 0; j < 3; ++j) {
      auto [source, byte] = streamBit(3 * k + j);
      if (terms.empty() || terms.back().first != source)
        terms.push_back({source, {0, 0, 0, 0}});
      terms.back().second[byte] = static_cast<int8_t>(1 << j);
    }
    SmallVector<Value, 2> lanes, weights;
    for (auto &[source, weight] : terms) {
      lanes.push_back(bitsAt(source / 8, source % 8));
      SmallVector<int8_t, 64> repeated(4 * rows);
      for (int64_t l = 0; l < 4 * rows; ++l)
        repeated[l] = weight[l % 4];
      weights.push_back(arith::ConstantOp::create(
          b, loc, bytes, DenseElementsAttr::get(bytes, ArrayRef(repeated))));
    }
    return isa.emitDot(b, loc, emitSplat(b, loc, words, quant::kVq3MinSubScale),
                       lanes, weights, LaneRange{1, 0, false});
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
  /// Packed K-group q of slot bytes as R words (row r's 4 bytes in one).
  Value loadSlotWords(OpBuilder &b, Location loc, Value block, int64_t rows,
                      int64_t q) const {
    return emitWeightLoad(b, loc, VectorType::get({rows}, b.getI32Type()),
                          block,
                          kf::vq3_64_slot_offset(layoutOf(rows), 4 * q, 0));
  }

  /// The lanes of weights 4g .. 4g + 3.
  Value emitKGroup(OpBuilder &b, Location loc, Value block, int64_t rows,
                   int64_t g, const DotEmitter &isa) const {
    auto words = VectorType::get({rows}, b.getI32Type());
    auto bytes = VectorType::get({4 * rows}, b.getI8Type());
    // Lane i holds slot (4g + i) mod 22 of component (4g + i) / 22.
    const int64_t first = 4 * g % kSlots;
    Value slotWords;
    if (first % 4 == 0) { // slots first .. first + 3 (g = 5: 20, 21, 0, 1)
      slotWords = loadSlotWords(b, loc, block, rows, first / 4);
      if (first == 20) {
        Value low = arith::AndIOp::create(b, loc, slotWords,
                                          emitSplat(b, loc, words, 0xffff));
        Value high =
            arith::ShLIOp::create(b, loc, loadSlotWords(b, loc, block, rows, 0),
                                  emitSplat(b, loc, words, 16));
        slotWords = arith::OrIOp::create(b, loc, low, high);
      }
    } else { // slots first .. first + 3, first = 2 mod 4: two K-groups' halves
      Value low = arith::ShRUIOp::create(
          b, loc, loadSlotWords(b, loc, block, rows, first / 4),
          emitSplat(b, loc, words, 16));
      Value high = arith::ShLIOp::create(
          b, loc, loadSlotWords(b, loc, block, rows, first / 4 + 1),
          emitSplat(b, loc, words, 16));
      slotWords = arith::OrIOp::create(b, loc, low, high);
    }
    Value slots = vector::BitCastOp::create(b, loc, bytes, slotWords);

    // Which lanes are book2's (slots 20, 21) and each lane's component.
    std::array<bool, 4> fromBook2;
    std::array<int, 4> component;
    for (int64_t i = 0; i < 4; ++i) {
      fromBook2[i] = (4 * g + i) % kSlots >= 20;
      component[i] = static_cast<int>((4 * g + i) / kSlots);
    }
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
