//===- LegacyDecode.cpp - Decode emitters of Q8_0 and Q4_0 ----------------===//
//
// The packed layouts of kf/runtime/packed_layout.h: a block is R fp16 scales
// then K-groups of 4 * R lanes, [g][r][4]. Q8_0's lanes are the weights
// themselves (w + 128 unsigned, or w signed); Q4_0's bytes hold two K-groups,
// split with and/shift, the same in both encodings (nibbles w + 8).
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kf::codegen {
namespace {

/// The formats whose block scale is the file's fp16 d, converted exactly.
class Fp16ScaledDecode : public WeightDecodeEmitter {
public:
  explicit Fp16ScaledDecode(bool hardwareHalf) : hardwareHalf(hardwareHalf) {}

  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    return loadHalfScales(b, loc, block, rows, 0, hardwareHalf);
  }

private:
  bool hardwareHalf;
};

class Q80Decode : public Fp16ScaledDecode {
public:
  Q80Decode(const kf::PackedLayout &layout, bool hardwareHalf)
      : Fp16ScaledDecode(hardwareHalf), range{8, kf::laneOffset(layout),
                                              layout.encoding ==
                                                  kf::LaneEncoding::Signed} {}

  LaneRange getLaneRange() const override { return range; }
  int64_t getStepsPerBlock() const override { return 8; }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    out.push_back(
        {loadKGroup(b, loc, kf::Format::Q8_0, block, rows, step), 4 * step});
  }

  // kf::dot's Q8_0: sumi * (d_w * d_x), the scale product first.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, wScales, xScale);
    return arith::MulFOp::create(b, loc, dot, scale);
  }

private:
  LaneRange range;
};

class Q40Decode : public Fp16ScaledDecode {
public:
  using Fp16ScaledDecode::Fp16ScaledDecode;

  // The nibbles w + 8, in either encoding.
  LaneRange getLaneRange() const override { return {4, 8}; }
  int64_t getStepsPerBlock() const override { return 4; }

  // One load feeds two K-groups; the nibbles are the lanes (w + 8).
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    auto [low, high] = splitNibbles(
        b, loc, loadKGroup(b, loc, kf::Format::Q4_0, block, rows, step));
    out.push_back({low, 4 * step});
    out.push_back({high, 16 + 4 * step});
  }

  // kf::dot's Q4_0: sumi * d_w * d_x, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    return emitDotTimesWeightTimesActivation(b, loc, dot, wScales, xScale);
  }
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createQ80DecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf) {
  return std::make_unique<Q80Decode>(layout, hardwareHalf);
}

std::unique_ptr<WeightDecodeEmitter> createQ40DecodeEmitter(bool hardwareHalf) {
  return std::make_unique<Q40Decode>(hardwareHalf);
}

} // namespace kf::codegen
