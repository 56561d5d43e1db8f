//===- DecodeEmitters.cpp - The decode emitter of each format -------------===//

#include "formats/DecodeEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kf::codegen {

std::unique_ptr<WeightDecodeEmitter>
createWeightDecodeEmitter(const kf::PackedLayout &layout,
                          const target::TargetInfo &target,
                          const DotEmitter &isa) {
  switch (layout.format) {
  case kf::Format::Q8_0:
    return createQ80DecodeEmitter(layout, hasHardwareHalf(target));
  case kf::Format::Q4_0:
    return createQ40DecodeEmitter(hasHardwareHalf(target));
  case kf::Format::MXFP4:
    return createMxfp4DecodeEmitter();
  case kf::Format::Q4_K:
  case kf::Format::Q5_K:
  case kf::Format::Q6_K:
    return createKQuantDecodeEmitter(layout.format, hasHardwareHalf(target));
  case kf::Format::IQ2_XXS:
  case kf::Format::IQ1_S:
  case kf::Format::IQ1_M:
    return createIqGridDecodeEmitter(layout, hasHardwareHalf(target), isa);
  case kf::Format::FRACTAL64:
    return createFractal64DecodeEmitter(hasHardwareHalf(target));
  case kf::Format::VQ3_64:
    return createVq3DecodeEmitter(layout, hasHardwareHalf(target));
  default:
    return nullptr;
  }
}

Value loadKGroup(OpBuilder &b, Location loc, kf::Format format, Value block,
                 int64_t rows, int64_t g) {
  auto type = VectorType::get({4 * rows}, b.getI8Type());
  kf::PackedLayout layout{format, static_cast<int>(rows)};
  return emitWeightLoad(b, loc, type, block, kf::packedKgroupOffset(layout, g));
}

Value loadHalfScales(OpBuilder &b, Location loc, Value block, int64_t rows,
                     int64_t offset, bool hardwareHalf) {
  Value halves = emitWeightLoad(b, loc, VectorType::get({rows}, b.getI16Type()),
                                block, offset);
  return emitHalfToFloat(b, loc, halves, hardwareHalf);
}

Value emitDotTimesWeightTimesActivation(OpBuilder &b, Location loc, Value dot,
                                        Value w, Value x) {
  Value scaled = arith::MulFOp::create(b, loc, dot, w);
  return arith::MulFOp::create(b, loc, scaled, x);
}

std::pair<Value, Value> splitNibbles(OpBuilder &b, Location loc, Value bytes) {
  auto type = cast<VectorType>(bytes.getType());
  Value low =
      arith::AndIOp::create(b, loc, bytes, emitSplat(b, loc, type, 0x0f));
  Value high =
      arith::ShRUIOp::create(b, loc, bytes, emitSplat(b, loc, type, 4));
  return {low, high};
}

} // namespace kf::codegen
