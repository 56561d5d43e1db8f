//===- Fractal64Decode.cpp - The decode emitter of FRACTAL64 --------------===//
//
// The packed layout of kf/runtime/packed_layout.h ("Private formats"): per
// block of 64 weights the rows' fp16 d [R], their u32 sub-scale words [R],
// then the index bits as K-groups [g][r][4]: four of low bits (K-group t,
// byte i, bits 2j..2j+1: weight 16t + 4j + i) and two of high bits (K-group
// q, byte i, bit 4p + j: weight 16(2q + p) + 4j + i).
//
// Step t decodes weights 16t .. 16t + 15, sub-blocks 2t and 2t + 1 whole, so
// each sub-block's dot closes within the step: per 4 weights a shift and
// mask of the low bits, one of the high bits, an or, and the 8-entry level
// lookup (vpshufb, tbl) giving L + 14, unsigned below 32; where the ISA
// moves bits within bytes in one instruction (DotEmitter::emitByteBitMap), a
// low and a high byte joined per two indices and one bit map per index
// instead, and the sub-scales picked from the word's nibble bytes by one
// DotEmitter::emitWordByte per sub-block (decodeStep). The loop nest keeps
// one exact integer dot per sub-block of 8, multiplies it by s = 4 + u and
// adds up per 32 weights; scaleBlock then does kf::dot's float work per half,
// sumi * d * d_x.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

using namespace mlir;

namespace kf::codegen {
namespace {

/// The levels are looked up biased by 14, unsigned for vpdpbusd (L + 14 is
/// 0..28), the loop nest subtracting 14 times the activations' sums.
constexpr int64_t kLevelBias = 14;
constexpr std::array<int8_t, 8> kBiasedLevels = [] {
  std::array<int8_t, 8> levels{};
  for (size_t i = 0; i < levels.size(); ++i)
    levels[i] = static_cast<int8_t>(kf::kFractal64Levels[i] + kLevelBias);
  return levels;
}();

class Fractal64Decode : public WeightDecodeEmitter {
public:
  explicit Fractal64Decode(bool hardwareHalf) : hardwareHalf(hardwareHalf) {}

  LaneRange getLaneRange() const override { return {5, kLevelBias}; }
  int64_t getBlockElems() const override { return 64; }
  int64_t getSubBlockElems() const override { return 8; }
  bool decodesWholeSubBlocks() const override { return true; }
  int64_t getStepsPerBlock() const override { return 4; }

  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    return loadHalfScales(b, loc, block, rows, kf::fractal64DOffset(0),
                          hardwareHalf);
  }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t t, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    kf::PackedLayout layout{kf::Format::FRACTAL64, static_cast<int>(rows)};
    auto type = VectorType::get({4 * rows}, b.getI8Type());
    auto splat = [&](int64_t v) { return emitSplat(b, loc, type, v); };
    Value low = emitWeightLoad(b, loc, type, block,
                               kf::fractal64LowOffset(layout, t, 0));
    Value high = emitWeightLoad(b, loc, type, block,
                                kf::fractal64HighOffset(layout, t / 2, 0));
    if (Value swapped =
            isa.emitByteBitMap(b, loc, high, {4, 5, 6, 7, 0, 1, 2, 3})) {
      // With a byte bit map in one instruction (vgf2p8affineqb): per step two
      // bytes each holding the bits of two indices, the low K-group's nibble
      // 0 (j = 0, 1) or 1 (j = 2, 3) joined with the other nibble of the high
      // K-group or of its nibbles swapped (one bit map, shared by steps 2q and
      // 2q + 1), so that each index's high bit 4 (t % 2) + j is at bit 4 + j
      // (j = 0, 1) or j (j = 2, 3); then one bit map per index gathers its 3
      // bits into bits 0..2. Per block 18 bit maps, 8 vpternlogd and the 16
      // vpshufb instead of 26 shifts, 28 masks and ors and the lookups: 42
      // port-0/5 uops instead of 70.
      Value lowNibbles = splat(0x0f), highNibbles = splat(0xf0);
      auto join = [&](Value lowPart, Value highPart) {
        return arith::OrIOp::create(
            b, loc, arith::AndIOp::create(b, loc, lowPart, lowNibbles),
            arith::AndIOp::create(b, loc, highPart, highNibbles));
      };
      bool odd = t % 2;
      const Value pairs[2] = {join(low, odd ? high : swapped),
                              join(odd ? swapped : high, low)};
      for (int64_t j = 0; j < 4; ++j) {
        int8_t highBit = j < 2 ? 4 + j : j;
        Value index = isa.emitByteBitMap(
            b, loc, pairs[j / 2],
            {int8_t(2 * j), int8_t(2 * j + 1), highBit, -1, -1, -1, -1, -1});
        out.push_back({isa.emitTableLookup(b, loc, index, kBiasedLevels),
                       16 * t + 4 * j});
      }
      return;
    }
    for (int64_t j = 0; j < 4; ++j) {
      // (low >> 2j) & 3 | ((high >> (4(t % 2) + j)) & 1) << 2
      Value lowBits = low;
      if (j != 0)
        lowBits = arith::ShRUIOp::create(b, loc, low, splat(2 * j));
      lowBits = arith::AndIOp::create(b, loc, lowBits, splat(3));
      int64_t bit = 4 * (t % 2) + j;
      Value highBit = high;
      if (bit > 2)
        highBit = arith::ShRUIOp::create(b, loc, high, splat(bit - 2));
      else if (bit < 2)
        highBit = arith::ShLIOp::create(b, loc, high, splat(2 - bit));
      highBit = arith::AndIOp::create(b, loc, highBit, splat(4));
      Value index = arith::OrIOp::create(b, loc, lowBits, highBit);
      out.push_back(
          {isa.emitTableLookup(b, loc, index, kBiasedLevels), 16 * t + 4 * j});
    }
  }

  // s = 4 + u, u nibble j of the row's sub-scale word: the word's even
  // (odd) nibbles in its bytes, each + 4 (shared by the sub-blocks), and
  // byte j / 2 of them, one vpshufb per sub-block on AVX-512 instead of a
  // shift, a mask and an add (13 instructions per block instead of 22).
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j, const DotEmitter &isa) const override {
    kf::PackedLayout layout{kf::Format::FRACTAL64, static_cast<int>(rows)};
    auto type = VectorType::get({rows}, b.getI32Type());
    auto splat = [&](int64_t v) { return emitSplat(b, loc, type, v); };
    Value words = emitWeightLoad(b, loc, type, block,
                                 kf::fractal64ScalesOffset(layout, 0));
    if (j % 2)
      words = arith::ShRUIOp::create(b, loc, words, splat(4));
    Value nibbles = arith::AndIOp::create(b, loc, words, splat(0x0f0f0f0f));
    return isa.emitWordByte(
        b, loc, arith::AddIOp::create(b, loc, nibbles, splat(0x04040404)),
        j / 2);
  }

  // kf::dot's FRACTAL64, per 32 weights: sumi * d * d_x, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    return emitDotTimesWeightTimesActivation(b, loc, dot, wScales, xScale);
  }

private:
  bool hardwareHalf;
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createFractal64DecodeEmitter(bool hardwareHalf) {
  return std::make_unique<Fractal64Decode>(hardwareHalf);
}

} // namespace kf::codegen
