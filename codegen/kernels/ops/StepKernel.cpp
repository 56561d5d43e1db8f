//===- StepKernel.cpp - The entry of a plan's step kernels ----------------===//

#include "kf/Codegen/StepKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/MatmulEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <charconv>

using namespace mlir;

namespace kf::codegen {

StepKernelArgs createStepKernelFunction(OpBuilder &b, Location &loc,
                                        ModuleOp module, StringRef name,
                                        const target::TargetInfo &target) {
  loadKernelDialects(*module.getContext());
  Type ptr = LLVM::LLVMPointerType::get(module.getContext());
  Type i64 = b.getI64Type();
  func::FuncOp fn =
      createKernelFunction(b, loc, module, name, {ptr, i64, i64, i64}, target);
  Block *entry = &fn.front();
  return {fn, entry->getArgument(0), entry->getArgument(1),
          entry->getArgument(2), entry->getArgument(3)};
}

Value KernelBuilder::index(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

Value KernelBuilder::splat(VectorType type, double v) {
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v)));
}

Value KernelBuilder::add(Value l, Value r) {
  return arith::AddFOp::create(b, loc, l, r);
}

Value KernelBuilder::sub(Value l, Value r) {
  return arith::SubFOp::create(b, loc, l, r);
}

Value KernelBuilder::mul(Value l, Value r) {
  return arith::MulFOp::create(b, loc, l, r);
}

Value KernelBuilder::load(Type type, Value base, Value offset,
                          int64_t alignment) {
  return LLVM::LoadOp::create(b, loc, type,
                              emitByteOffset(b, loc, base, offset), alignment);
}

void KernelBuilder::store(Value value, Value base, Value offset,
                          int64_t alignment) {
  LLVM::StoreOp::create(b, loc, value, emitByteOffset(b, loc, base, offset),
                        alignment);
}

void KernelBuilder::forEach(Value from, Value to, int64_t step,
                            llvm::function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, from, to, index(step));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

std::string formatShortest(float v) {
  char text[32];
  std::to_chars_result end = std::to_chars(text, text + sizeof text, v);
  return std::string(text, end.ptr);
}

Value emitStepOperand(OpBuilder &b, Location loc, const StepKernelArgs &args,
                      int64_t index) {
  // Every target is 64-bit: addresses are 8 bytes apart.
  constexpr int64_t kAddressBytes = 8;
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::LoadOp::create(
      b, loc, ptr, emitByteOffset(b, loc, args.operands, kAddressBytes * index),
      kAddressBytes);
}

} // namespace kf::codegen
