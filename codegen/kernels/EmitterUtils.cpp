//===- EmitterUtils.cpp - Building blocks shared by the kernel emitters ---===//
//
// Kernels address raw bytes (the ABI passes plain pointers into packed
// buffers), so memory is !llvm.ptr with i8 GEPs and unaligned llvm.load;
// arithmetic stays in arith/vector so the standard conversions lower it.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kf::codegen {

Value emitByteOffset(OpBuilder &b, Location loc, Value ptr, int64_t bytes) {
  if (bytes == 0)
    return ptr;
  Value offset = arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes);
  return emitByteOffset(b, loc, ptr, offset);
}

Value emitByteOffset(OpBuilder &b, Location loc, Value ptr, Value bytes) {
  return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                             ValueRange{bytes});
}

Value emitLoad(OpBuilder &b, Location loc, Type type, Value ptr,
               int64_t bytes) {
  return LLVM::LoadOp::create(b, loc, type, emitByteOffset(b, loc, ptr, bytes),
                              /*alignment=*/1);
}

Value emitSplat(OpBuilder &b, Location loc, VectorType type, int64_t value) {
  auto elementType = cast<IntegerType>(type.getElementType());
  APInt bits(elementType.getWidth(), value, /*isSigned=*/true);
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, bits));
}

Value emitIntrinsic(OpBuilder &b, Location loc, llvm::StringRef name,
                    Type resultType, ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, resultType,
                                       b.getStringAttr(name), args)
      .getResult(0);
}

} // namespace kf::codegen
