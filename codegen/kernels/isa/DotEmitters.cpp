//===- DotEmitters.cpp - The dot emitter of each ISA ----------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kf::codegen {

Value DotEmitter::emitTableLookup(OpBuilder &b, Location loc, Value indices,
                                  ArrayRef<int8_t> table) const {
  return emitSelectTableLookup(b, loc, indices, table);
}

Value emitPshufbLookup(OpBuilder &b, Location loc, llvm::StringRef intrinsic,
                       Value indices, ArrayRef<int8_t> table) {
  assert(table.size() <= 16 && "vpshufb looks up 16 bytes");
  auto type = cast<VectorType>(indices.getType());
  SmallVector<int8_t, 64> lanes(type.getNumElements(), 0);
  for (size_t i = 0; i < lanes.size(); ++i)
    if (i % 16 < table.size())
      lanes[i] = table[i % 16];
  Value repeated = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef(lanes)));
  return emitIntrinsic(b, loc, intrinsic, type, {repeated, indices});
}

std::unique_ptr<DotEmitter> createDotEmitter(KernelIsa isa) {
  switch (isa) {
  case KernelIsa::Scalar:
    return createScalarDotEmitter();
  case KernelIsa::Avx2:
    return createAvx2DotEmitter();
  case KernelIsa::Avx512Vnni:
    return createAvx512VnniDotEmitter();
  case KernelIsa::NeonDotprod:
    return createNeonDotprodDotEmitter();
  }
  return nullptr;
}

} // namespace kf::codegen
