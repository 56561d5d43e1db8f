//===- ScalarDot.cpp - The portable dot emitter ---------------------------===//
//
// Plain integer arithmetic on generic vectors, no intrinsics: every target
// LLVM knows compiles it (SSE on x86-64-v2, NEON on AArch64, scalar code
// elsewhere), which makes it the reference the ISA kernels are tested beside.
//
//===----------------------------------------------------------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {
namespace {

class ScalarDot : public DotEmitter {
public:
  int64_t getCorrectionOffset(LaneRange range) const override {
    assert(!range.isSigned && "reads the unsigned layouts");
    return range.offset;
  }

  // Products widened to i32 (lanes unsigned, activations signed), summed over
  // the operands, then each row's 4 consecutive lanes added together.
  Value emitDot(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> lanes,
                ArrayRef<Value> acts, LaneRange range) const override {
    int64_t rows = cast<VectorType>(acc.getType()).getNumElements();
    auto wide = VectorType::get({4 * rows}, b.getI32Type());
    Value products;
    for (auto [w, x] : llvm::zip_equal(lanes, acts)) {
      Value wi = arith::ExtUIOp::create(b, loc, wide, w);
      Value xi = arith::ExtSIOp::create(b, loc, wide, x);
      Value p = arith::MulIOp::create(b, loc, wi, xi);
      products = products ? arith::AddIOp::create(b, loc, products, p) : p;
    }
    for (int64_t t = 0; t < 4; ++t) {
      SmallVector<int64_t> mask;
      for (int64_t r = 0; r < rows; ++r)
        mask.push_back(4 * r + t);
      Value part = vector::ShuffleOp::create(b, loc, products, products, mask);
      acc = arith::AddIOp::create(b, loc, acc, part);
    }
    return acc;
  }
};

} // namespace

std::unique_ptr<DotEmitter> createScalarDotEmitter() {
  return std::make_unique<ScalarDot>();
}

} // namespace kf::codegen
