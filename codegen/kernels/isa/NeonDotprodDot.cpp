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
// Table lookups of up to 64 bytes are one tbl over 1 to 4 table registers
// (indices past the table give 0, never a fault; a lookup's indices are
// below the table's size anyway).
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
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

  Value emitTableLookup(OpBuilder &b, Location loc, Value indices,
                        ArrayRef<int8_t> table) const override {
    constexpr size_t kRegisterBytes = 16;
    auto type = cast<VectorType>(indices.getType());
    if (table.size() > 4 * kRegisterBytes ||
        type.getNumElements() != static_cast<int64_t>(kRegisterBytes))
      return emitSelectTableLookup(b, loc, indices, table);
    SmallVector<Value, 5> operands;
    for (size_t begin = 0; begin < table.size(); begin += kRegisterBytes) {
      SmallVector<int8_t, 16> bytes(kRegisterBytes, 0);
      for (size_t i = begin; i < std::min(table.size(), begin + kRegisterBytes);
           ++i)
        bytes[i - begin] = table[i];
      operands.push_back(arith::ConstantOp::create(
          b, loc, type, DenseElementsAttr::get(type, ArrayRef(bytes))));
    }
    std::string name = (llvm::Twine("llvm.aarch64.neon.tbl") +
                        llvm::Twine(operands.size()) + ".v16i8")
                           .str();
    operands.push_back(indices);
    return emitIntrinsic(b, loc, name, type, operands);
  }
};

} // namespace

std::unique_ptr<DotEmitter> createNeonDotprodDotEmitter() {
  return std::make_unique<NeonDotprodDot>();
}

} // namespace kf::codegen
