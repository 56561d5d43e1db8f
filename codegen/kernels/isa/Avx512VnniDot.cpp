//===- Avx512VnniDot.cpp - The AVX-512 VNNI dot emitter: vpdpbusd ---------===//
//
// One vpdpbusd per operand: 64 unsigned lanes (4 weights of each of 16 rows)
// times 4 signed activation bytes broadcast to every row, summed by fours
// into the row's i32 lane, without saturation. The lanes' offset comes back
// out through the activation's quant sum (getCorrectionOffset).
//
// Table lookups of up to 16 bytes are one vpshufb (AVX-512BW); up to 64,
// one vpshufb per 16 bytes of the table and masked moves by index bits 4
// and 5 (emitSplitPshufbLookup).
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

class Avx512VnniDot : public DotEmitter {
public:
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

  // vpshufb: each index byte picks a byte of its 128-bit lane; one per 16
  // bytes of the table, and masked moves among them.
  Value emitTableLookup(OpBuilder &b, Location loc, Value indices,
                        ArrayRef<int8_t> table) const override {
    if (table.size() > 64)
      return emitSelectTableLookup(b, loc, indices, table);
    return emitSplitPshufbLookup(b, loc, "llvm.x86.avx512.pshuf.b.512", indices,
                                 table);
  }
};

} // namespace

std::unique_ptr<DotEmitter> createAvx512VnniDotEmitter() {
  return std::make_unique<Avx512VnniDot>();
}

} // namespace kf::codegen
