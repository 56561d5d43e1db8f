//===- KQuantDecode.cpp - Decode emitters of Q4_K, Q5_K and Q6_K ----------===//
//
// The packed layouts of kf/runtime/packed_layout.h: per super-block of 256
// weights the rows' header fields side by side (fp16 d [R], Q4_K/Q5_K's fp16
// dmin [R] and 12 packed 6-bit scale/min bytes [12][R], Q6_K's int8 scales
// [16][R]), then the file's weight bytes as [g][r][4] K-groups. The lanes are
// the unsigned codes (Q4_K 0..15, Q5_K 0..31, Q6_K 0..63 with offset 32); the
// loop nest keeps one integer dot per sub-block (32 weights; Q6_K 16),
// multiplies it by getSubBlockScale and adds up, and for Q4_K/Q5_K the mins'
// integer sum; scaleBlock and subtractMins then do kf::dot's float work:
// (d * d_x) * isum - (dmin * d_x) * msum.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kf::codegen {
namespace {

class KQuantDecode : public WeightDecodeEmitter {
public:
  KQuantDecode(kf::Format format, bool hardwareHalf)
      : format(format), hardwareHalf(hardwareHalf) {}

  int64_t getBlockElems() const override { return 256; }

  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    return loadHalves(b, loc, block, rows, 0);
  }

  // kf::dot's K-quant sum: s.d * d_x * isum, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, wScales, xScale);
    return arith::MulFOp::create(b, loc, scale, dot);
  }

protected:
  /// R fp16 values at header byte `j` (of the file's header), as fp32.
  Value loadHalves(OpBuilder &b, Location loc, Value block, int64_t rows,
                   int64_t j) const {
    kf::PackedLayout layout{format, static_cast<int>(rows)};
    return loadHalfScales(b, loc, block, rows,
                          kf::packedScaleOffset(layout, j, 0), hardwareHalf);
  }
  /// The R bytes of header byte `j`.
  Value loadHeaderBytes(OpBuilder &b, Location loc, Value block, int64_t rows,
                        int64_t j) const {
    kf::PackedLayout layout{format, static_cast<int>(rows)};
    return emitWeightLoad(b, loc, VectorType::get({rows}, b.getI8Type()), block,
                          kf::packedScaleOffset(layout, j, 0));
  }

  kf::Format format;
  bool hardwareHalf;
};

/// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins.
class Q4KDecode : public KQuantDecode, public SubBlockMinDecode {
public:
  using KQuantDecode::KQuantDecode;

  LaneRange getLaneRange() const override {
    return {format == kf::Format::Q5_K ? 5u : 4u, 0};
  }
  int64_t getSubBlockElems() const override { return 32; }
  int64_t getStepsPerBlock() const override { return 32; }

  // K-group s of nibble pairs: the low nibbles are elements 64c + 4t + i (c =
  // s / 8, t = s % 8), sub-block 2c, the high ones 32 further, sub-block
  // 2c + 1. Q5_K's fifth bits are bits 2c and 2c + 1 of qh K-group t; where
  // the ISA moves bits within bytes in one instruction (emitByteBitMap) the
  // bit comes out at bit 4 with the others clear, and the low nibbles' lane
  // is one vpternlogq of the nibble bytes, the bit and a mask (5 instructions
  // per step instead of 6).
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    const int64_t c = step / 8, t = step % 8;
    const bool q5 = format == kf::Format::Q5_K;
    auto [low, high] = splitNibbles(
        b, loc, loadKGroup(b, loc, format, block, rows, q5 ? 8 + step : step));
    if (q5) {
      Value qh = loadKGroup(b, loc, format, block, rows, t);
      // ((qh >> bit) & 1) << 4
      auto fifth = [&](Value nibbles, int64_t bit) -> Value {
        return arith::OrIOp::create(b, loc, nibbles,
                                    emitBitsAt(b, loc, isa, qh, bit, 1, 4));
      };
      low = fifth(low, 2 * c);
      high = fifth(high, 2 * c + 1);
    }
    out.push_back({low, 64 * c + 4 * t});
    out.push_back({high, 64 * c + 32 + 4 * t});
  }

  // unpackScalesMinsK4 on the 12 header bytes p (header bytes 4..15):
  // sub-block j < 4: p[j] & 63; else (p[j + 4] & 15) | (p[j - 4] >> 6) << 4.
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j, const DotEmitter &) const override {
    return unpack6(b, loc, block, rows, j, /*mins=*/false);
  }
  // mins: j < 4: p[j + 4] & 63; else (p[j + 4] >> 4) | (p[j] >> 6) << 4.
  Value getSubBlockMin(OpBuilder &b, Location loc, Value block, int64_t rows,
                       int64_t j) const override {
    return unpack6(b, loc, block, rows, j, /*mins=*/true);
  }

  const SubBlockMinDecode *getSubBlockMins() const override { return this; }

  // kf::dot: ... - s.dmin * d_x * msum, after the scales' term.
  Value subtractMins(OpBuilder &b, Location loc, Value scaled, Value minDot,
                     Value block, int64_t rows, Value xScale) const override {
    Value dmin = loadHalves(b, loc, block, rows, 2);
    Value scale = arith::MulFOp::create(b, loc, dmin, xScale);
    Value term = arith::MulFOp::create(b, loc, scale, minDot);
    return arith::SubFOp::create(b, loc, scaled, term);
  }

private:
  Value unpack6(OpBuilder &b, Location loc, Value block, int64_t rows,
                int64_t j, bool mins) const {
    auto bytes = VectorType::get({rows}, b.getI8Type());
    auto splat = [&](int64_t v) { return emitSplat(b, loc, bytes, v); };
    auto p = [&](int64_t i) {
      return loadHeaderBytes(b, loc, block, rows, 4 + i);
    };
    Value value;
    if (j < 4) {
      value = arith::AndIOp::create(b, loc, p(mins ? j + 4 : j), splat(63));
    } else {
      Value lowBits =
          mins ? arith::ShRUIOp::create(b, loc, p(j + 4), splat(4)).getResult()
               : arith::AndIOp::create(b, loc, p(j + 4), splat(15)).getResult();
      Value top = arith::ShRUIOp::create(b, loc, p(mins ? j : j - 4), splat(6));
      value = arith::OrIOp::create(
          b, loc, lowBits, arith::ShLIOp::create(b, loc, top, splat(4)));
    }
    return arith::ExtUIOp::create(
        b, loc, VectorType::get({rows}, b.getI32Type()), value);
  }
};

/// Q6_K: 16 sub-blocks of 16 with int8 scales, codes 0..63 (q + 32).
class Q6KDecode : public KQuantDecode {
public:
  using KQuantDecode::KQuantDecode;

  LaneRange getLaneRange() const override { return {6, 32}; }
  int64_t getSubBlockElems() const override { return 16; }
  int64_t getStepsPerBlock() const override { return 16; }

  // Step s: half h = s / 8, elements 128h + 32j + 4t + i (t = s % 8, j =
  // 0..3): the low four bits are nibble j / 2 of ql K-group 16h + 8(j % 2) +
  // t, the high two bits 2j..2j+1 of qh K-group 32 + 8h + t.
  //
  // Where the ISA moves bits within bytes in one instruction
  // (DotEmitter::emitByteBitMap: vgf2p8affineqb), the high bits come out of
  // qh already at bits 4..5 with the others clear, so each lane is one
  // vpternlogq of the nibble's K-group, the bits and a mask: 9 instructions
  // per step instead of 11 (a shift then a mask apart, the nibbles' two
  // masks apart from their ors).
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    const int64_t h = step / 8, t = step % 8;
    Value qh = loadKGroup(b, loc, format, block, rows, 32 + 8 * h + t);
    std::pair<Value, Value> ql[2];
    for (int64_t half = 0; half < 2; ++half)
      ql[half] = splitNibbles(
          b, loc,
          loadKGroup(b, loc, format, block, rows, 16 * h + 8 * half + t));
    for (int64_t j = 0; j < 4; ++j) {
      Value low = j < 2 ? ql[j % 2].first : ql[j % 2].second;
      // ((qh >> 2j) & 3) << 4
      Value high = emitBitsAt(b, loc, isa, qh, 2 * j, 2, 4);
      out.push_back(
          {arith::OrIOp::create(b, loc, low, high), 128 * h + 32 * j + 4 * t});
    }
  }

  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j, const DotEmitter &) const override {
    return arith::ExtSIOp::create(b, loc,
                                  VectorType::get({rows}, b.getI32Type()),
                                  loadHeaderBytes(b, loc, block, rows, j));
  }

  // The int8 scales let the AVX-512 emitter meet a sub-block's dot (up to
  // 16 * 32 * 127) in bytes, one vpshufb per column and a vpdpwssd instead of
  // a vpmulld and an add (docs/codegen.md, "Super-blocks").
  int64_t getSubBlockScaleBound() const override { return 128; }

  // Q6_K's d is header byte 16 (the file puts it after the scales).
  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    return loadHalves(b, loc, block, rows, 16);
  }
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createKQuantDecodeEmitter(kf::Format format, bool hardwareHalf) {
  if (format == kf::Format::Q6_K)
    return std::make_unique<Q6KDecode>(format, hardwareHalf);
  return std::make_unique<Q4KDecode>(format, hardwareHalf);
}

} // namespace kf::codegen
