//===- MoeCombineEmitter.cpp - The compiled kf.moe_combine ----------------===//
//
// The interpreter's kf.moe_combine (the golden's moe: sum = 0, sum +=
// routed_j for j in slot order, then fp32(sum + shared), then bf16), in
// vectors of 16 floats whose lanes are 16 independent columns: each lane
// runs the reference's fp64 operations in its order, starting from +0 as it
// does (so a column of -0s sums to +0 as the reference's does), and rounds
// as it does. Every operation is the reference's IEEE operation on the same
// operands, so the result is bit for bit; there is no product for LLVM to
// contract into an FMA.
//
// A token's vector of 16 columns is stored after every slot's and the
// shared expert's values of it are read, so the output may be the shared
// expert's rows.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/MoeCombineKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

} // namespace

std::string MoeCombineKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_moe_combine_k{0}_d{1}", k, d).str();
}

std::string MoeCombineKernelSpec::describe() const {
  return llvm::formatv("moe_combine kernel [k = {0}, D = {1}]", k, d).str();
}

llvm::Error verifyMoeCombineKernel(const MoeCombineKernelSpec &spec) {
  if (spec.k < 1)
    return llvm::createStringError(spec.describe() +
                                   ": expected at least one routed slot");
  if (spec.d <= 0 || spec.d % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildMoeCombineKernel(ModuleOp module, const MoeCombineKernelSpec &spec,
                      const target::TargetInfo &target) {
  if (llvm::Error err = verifyMoeCombineKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto widen = [&](Value v) -> Value {
    return arith::ExtFOp::create(b, loc, doubles, v);
  };

  Value routed = emitStepOperand(b, loc, args, 0);
  Value shared = emitStepOperand(b, loc, args, 1);
  Value out = emitStepOperand(b, loc, args, 2);
  const int64_t rowBytes = 4 * spec.d;

  auto tokens = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(tokens.getBody());
  Value token = tokens.getInductionVar();
  Value slots = emitByteOffset(
      b, loc, routed,
      arith::MulIOp::create(b, loc, token, kb.index(spec.k * rowBytes)));
  Value rowOffset = arith::MulIOp::create(b, loc, token, kb.index(rowBytes));
  Value sharedRow = emitByteOffset(b, loc, shared, rowOffset);
  Value outRow = emitByteOffset(b, loc, out, rowOffset);

  kb.forEach(kb.index(0), kb.index(rowBytes), 4 * kLanes, [&](Value offset) {
    // The reference's `double sum = 0`: +0, not -0, so that a column of -0s
    // sums to its +0.
    auto slotLoop =
        scf::ForOp::create(b, loc, kb.index(0), kb.index(spec.k), kb.index(1),
                           ValueRange{kb.splat(doubles, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(slotLoop.getBody());
      Value slot = emitByteOffset(
          b, loc, slots,
          arith::MulIOp::create(b, loc, slotLoop.getInductionVar(),
                                kb.index(rowBytes)));
      scf::YieldOp::create(
          b, loc,
          ValueRange{kb.add(slotLoop.getRegionIterArg(0),
                            widen(kb.load(floats, slot, offset, 4)))});
    }
    Value sum = kb.add(slotLoop.getResult(0),
                       widen(kb.load(floats, sharedRow, offset, 4)));
    kb.store(
        emitRoundToBf16(b, loc, arith::TruncFOp::create(b, loc, floats, sum)),
        outRow, offset, 4);
  });

  b.setInsertionPointAfter(tokens);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
