//===- MatmulSteps.cpp - Matmul and quantizer kernels as plan steps -------===//

#include "kf/Codegen/MatmulSteps.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

namespace {

/// `module`'s function `name`, or an error naming what was looked for.
llvm::Expected<func::FuncOp> getKernel(ModuleOp module, StringRef name,
                                       StringRef what) {
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn)
    return llvm::createStringError(
        llvm::formatv("no {0} kernel @{1} to call from a step", what, name)
            .str());
  return fn;
}

} // namespace

llvm::Expected<func::FuncOp>
getOrBuildQuantizeStep(ModuleOp module, StringRef quantizer, int64_t k,
                       int64_t ldx, int64_t xColumnBytes,
                       int64_t packedRowBytes,
                       const target::TargetInfo &target) {
  std::string name =
      ldx == k && xColumnBytes == 0
          ? (quantizer + "_step").str()
          : llvm::formatv("{0}_step_ldx{1}_at{2}", quantizer, ldx, xColumnBytes)
                .str();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  llvm::Expected<func::FuncOp> callee =
      getKernel(module, quantizer, "quantizer");
  if (!callee)
    return callee.takeError();
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args = createStepKernelFunction(b, loc, module, name, target);
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  Value x = emitByteOffset(
      b, loc,
      emitByteOffset(b, loc, emitStepOperand(b, loc, args, 0), xColumnBytes),
      arith::MulIOp::create(b, loc, args.begin, constant(4 * ldx)));
  Value packed = emitByteOffset(
      b, loc, emitStepOperand(b, loc, args, 1),
      arith::MulIOp::create(b, loc, args.begin, constant(packedRowBytes)));
  Value rows = arith::SubIOp::create(b, loc, args.end, args.begin);
  func::CallOp::create(b, loc, *callee,
                       ValueRange{x, constant(ldx), packed, rows});
  func::ReturnOp::create(b, loc);
  return args.fn;
}

llvm::Expected<func::FuncOp>
getOrBuildMatmulStep(ModuleOp module, StringRef matmul, int64_t ldy,
                     int64_t yColumnBytes, const target::TargetInfo &target) {
  std::string name = llvm::formatv("{0}_step_ldy{1}", matmul, ldy).str();
  if (yColumnBytes != 0)
    name += llvm::formatv("_at{0}", yColumnBytes).str();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  llvm::Expected<func::FuncOp> callee = getKernel(module, matmul, "matmul");
  if (!callee)
    return callee.takeError();
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args = createStepKernelFunction(b, loc, module, name, target);
  Value ldyValue = arith::ConstantIntOp::create(b, loc, b.getI64Type(), ldy);
  func::CallOp::create(
      b, loc, *callee,
      ValueRange{emitStepOperand(b, loc, args, 0),
                 emitStepOperand(b, loc, args, 1),
                 emitByteOffset(b, loc, emitStepOperand(b, loc, args, 2),
                                yColumnBytes),
                 ldyValue, args.m, args.begin, args.end});
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
