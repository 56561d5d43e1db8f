//===- StepKernel.cpp - The entry of a plan's step kernels ----------------===//

#include "kf/Codegen/StepKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/MatmulEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
