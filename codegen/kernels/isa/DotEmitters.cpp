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
  case KernelIsa::Avx512:
  case KernelIsa::Avx512Bf16:
  case KernelIsa::Neon:
  case KernelIsa::NeonBf16:
    return nullptr; // float ISAs: createFloatDotEmitter
  }
  return nullptr;
}

std::unique_ptr<FloatDotEmitter> createFloatDotEmitter(KernelIsa isa,
                                                       kf::Format format) {
  assert(isaSupportsFormat(isa, format) && kf::is_float_format(format));
  switch (isa) {
  case KernelIsa::Avx512Bf16:
    return createAvx512Bf16DotEmitter();
  case KernelIsa::NeonBf16:
    return createNeonBf16DotEmitter();
  case KernelIsa::Scalar:
    // No FMA instruction on the portable targets (llvm.fma would become a
    // library call there).
    return createFloatFmaDotEmitter(format, /*fused=*/false);
  default:
    return createFloatFmaDotEmitter(format, /*fused=*/true);
  }
}

} // namespace kf::codegen
