//===- NeonDotprodDot.cpp - The NEON dot emitter: sdot --------------------===//
//
// One sdot per operand: 16 signed lanes (4 weights of each of 4 rows) times 4
// signed activation bytes broadcast to every row, summed by fours into the
// row's i32 lane. Both operands are signed, so the lanes go in as they are
// and only their offset comes back out through the activation's quant sum:
// none for the signed Q8_0 layout (lanes hold w), 8 for Q4_0, whose nibbles
// 0..15 are valid signed bytes. The correction costs one multiply per column
// and block, where subtracting 8 from the lanes would cost one vector
// subtract per lane vector.
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

class NeonDotprodDot : public DotEmitter {
public:
  int64_t getCorrectionOffset(LaneRange range) const override {
    assert((range.isSigned || range.bits < 8) &&
           "sdot reads lanes as signed bytes");
    return range.offset;
  }

  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> lanes,
                ArrayRef<Value> acts, LaneRange range) const override {
    for (auto [w, x] : llvm::zip_equal(lanes, acts))
      acc = emitIntrinsic(b, loc, "llvm.aarch64.neon.sdot.v4i32.v16i8",
                          acc.getType(), {acc, w, x});
    return acc;
  }
};

} // namespace

std::unique_ptr<DotEmitter> createNeonDotprodDotEmitter() {
  return std::make_unique<NeonDotprodDot>();
}

} // namespace kf::codegen
