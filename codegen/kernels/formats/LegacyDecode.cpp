//===- LegacyDecode.cpp - Decode emitters of Q8_0 and Q4_0 ----------------===//
//
// The packed layouts of kf/runtime/packed_layout.h: a block is R fp16 scales
// then K-groups of 4 * R lanes, [g][r][4]. Q8_0's lanes are the weights
// themselves (w + 128 unsigned, or w signed); Q4_0's bytes hold two K-groups,
// split with and/shift, the same in both encodings (nibbles w + 8).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kf::codegen {
namespace {

constexpr int64_t kScaleBytes = 2;

/// The 4 * rows bytes of K-group `g` of a packed block.
Value loadKGroup(OpBuilder &b, Location loc, Value block, int64_t rows,
                 int64_t g) {
  auto type = VectorType::get({4 * rows}, b.getI8Type());
  return emitLoad(b, loc, type, block, rows * kScaleBytes + g * 4 * rows);
}

class Q8_0Decode : public WeightDecodeEmitter {
public:
  explicit Q8_0Decode(const kf::PackedLayout &layout)
      : range{8, kf::lane_offset(layout),
              layout.encoding == kf::LaneEncoding::Signed} {}

  LaneRange getLaneRange() const override { return range; }
  int64_t getStepsPerBlock() const override { return 8; }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    out.push_back({loadKGroup(b, loc, block, rows, step), 4 * step});
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

class Q4_0Decode : public WeightDecodeEmitter {
public:
  // The nibbles w + 8, in either encoding.
  LaneRange getLaneRange() const override { return {4, 8}; }
  int64_t getStepsPerBlock() const override { return 4; }

  // One load feeds two K-groups: the low nibbles are elements 4g .. 4g + 3,
  // the high nibbles 16 + 4g .. 16 + 4g + 3 (the file's nibble order).
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    Value bytes = loadKGroup(b, loc, block, rows, step);
    auto type = cast<VectorType>(bytes.getType());
    Value low =
        arith::AndIOp::create(b, loc, bytes, emitSplat(b, loc, type, 0x0f));
    Value high =
        arith::ShRUIOp::create(b, loc, bytes, emitSplat(b, loc, type, 4));
    out.push_back({low, 4 * step});
    out.push_back({high, 16 + 4 * step});
  }

  // kf::dot's Q4_0: sumi * d_w * d_x, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scaled = arith::MulFOp::create(b, loc, dot, wScales);
    return arith::MulFOp::create(b, loc, scaled, xScale);
  }
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createWeightDecodeEmitter(const kf::PackedLayout &layout) {
  switch (layout.format) {
  case kf::Format::Q8_0:
    return std::make_unique<Q8_0Decode>(layout);
  case kf::Format::Q4_0:
    return std::make_unique<Q4_0Decode>();
  default:
    return nullptr;
  }
}

} // namespace kf::codegen
