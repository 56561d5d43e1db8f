//===- LastRowEmitter.cpp - A copy of a run's last token row --------------===//
//
// The row starts at (m - 1) · rowBytes: the run's rows, not the plan's,
// place it, which is why this is a kernel and not a view. It is copied in
// vectors of 16 floats, then floats: bits, whatever they hold.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/LastRowKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

std::string LastRowKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_last_row_b{0}", rowBytes).str();
}

std::string LastRowKernelSpec::describe() const {
  return llvm::formatv("last_row kernel [{0} bytes]", rowBytes).str();
}

llvm::Error verifyLastRowKernel(const LastRowKernelSpec &spec) {
  if (spec.rowBytes <= 0 || spec.rowBytes % 4 != 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected a positive multiple of 4 bytes");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildLastRowKernel(ModuleOp module, const LastRowKernelSpec &spec,
                   const target::TargetInfo &target) {
  if (llvm::Error err = verifyLastRowKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Value rows = emitStepOperand(b, loc, args, 0);
  Value out = emitStepOperand(b, loc, args, 1);
  Value last = arith::SubIOp::create(b, loc, args.m, kb.index(1));
  Value source = emitByteOffset(
      b, loc, rows,
      arith::MulIOp::create(b, loc, last, kb.index(spec.rowBytes)));
  // The one item, if this call has it.
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                    args.begin, args.end);
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  const int64_t vectorBytes = 64;
  const int64_t whole = spec.rowBytes / vectorBytes * vectorBytes;
  auto floats = VectorType::get({16}, b.getF32Type());
  kb.forEach(kb.index(0), kb.index(whole), vectorBytes, [&](Value offset) {
    kb.store(kb.load(floats, source, offset, 4), out, offset, 4);
  });
  kb.forEach(kb.index(whole), kb.index(spec.rowBytes), 4, [&](Value offset) {
    kb.store(kb.load(b.getF32Type(), source, offset, 4), out, offset, 4);
  });
  b.setInsertionPointAfter(ifOp);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
