//===- HcExpandEmitter.cpp - The compiled kf.hc_expand --------------------===//
//
// Each token's D floats loaded once per vector of 16 and stored into each of
// its mult streams: a copy, bit for bit. (The kernel's function is marked
// no-builtins, so LLVM does not turn the loop into a memcpy call.)
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/HcExpandKernel.h"

#include "HcMix.h"

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kf::codegen {

std::string HcExpandKernelSpec::getSymbolName() const {
  return hc::getSymbolName("hc_expand", mult, d);
}

std::string HcExpandKernelSpec::describe() const {
  return hc::describe("hc_expand", mult, d);
}

llvm::Error verifyHcExpandKernel(const HcExpandKernelSpec &spec) {
  return hc::verifyShape(spec.describe(), spec.mult, spec.d);
}

llvm::Expected<func::FuncOp>
buildHcExpandKernel(ModuleOp module, const HcExpandKernelSpec &spec,
                    const target::TargetInfo &target) {
  if (llvm::Error err = verifyHcExpandKernel(spec))
    return std::move(err);
  const int64_t rowBytes = 4 * spec.d;
  return hc::buildTokenKernel(
      module, spec.getSymbolName(), target, /*operandCount=*/2,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> operands, Value token) {
        Value x = hc::emitTokenRow(b, loc, operands[0], token, spec.d);
        Value streams =
            hc::emitTokenRow(b, loc, operands[1], token, spec.mult * spec.d);
        auto values = scf::ForOp::create(b, loc, hc::emitIndex(b, loc, 0),
                                         hc::emitIndex(b, loc, rowBytes),
                                         hc::emitIndex(b, loc, 4 * hc::kLanes));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(values.getBody());
        Value offset = values.getInductionVar();
        Value v = hc::emitLoadFloats(b, loc, x, offset, hc::kLanes);
        for (int64_t j = 0; j < spec.mult; ++j)
          LLVM::StoreOp::create(
              b, loc, v,
              emitByteOffset(b, loc,
                             emitByteOffset(b, loc, streams, j * rowBytes),
                             offset),
              /*alignment=*/4);
      });
}

} // namespace kf::codegen
