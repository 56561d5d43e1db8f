//===- SwigluEmitter.cpp - The compiled kf.swiglu -------------------------===//
//
// The golden's swiglu (routing.cpp), in vectors of 16 floats: g = min(gate,
// limit), u = clamp(up, -limit, limit) (std::min's and std::clamp's
// comparisons), silu = fp32(g / (1 + e^-g)) in fp64, h = bf16((silu · u) ·
// weight). Everything but e^-g is the reference's IEEE operation in its
// order.
//
// A kernel calls nothing (no libm): e^-g is emitExp's (Emitters.h:
// fdlibm's algorithm, below one fp64 ulp, its argument clamped to ±708).
// Below -708, 1 + e^x is 1 in fp64 as it is for the reference's tiny e^x;
// above 708, e^x is +inf, where the reference's e^x is inf or so large that
// g / (1 + e^x) rounds to -0 in fp32 all the same (and an infinite gate
// gives the reference's NaN).
//
// The reference's libm exp (glibc's, below 0.52 ulp) and this one differ by
// at most ~1.5 fp64 ulps, so silu can differ only where g / (1 + e^-g) lies
// within a few fp64 ulps of an fp32 rounding boundary (a chance of about
// 2^-27 per value); every float in [-120, 12] gives the same silu (checked
// against glibc offline). Where silu differs by its one fp32 ulp, h differs
// by at most one bf16 ulp.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/SwigluKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

} // namespace

std::string SwigluKernelSpec::getSymbolName() const {
  return llvm::formatv(
             "kf_swiglu_f{0}_{1}_l{2}", f, weighted ? "w" : "nw",
             llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(limit), 8))
      .str();
}

std::string SwigluKernelSpec::describe() const {
  return llvm::formatv("swiglu kernel [F = {0}, {1}, limit = {2}]", f,
                       weighted ? "weighted" : "unweighted",
                       formatShortest(limit))
      .str();
}

llvm::Error verifySwigluKernel(const SwigluKernelSpec &spec) {
  if (spec.f <= 0 || spec.f % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected F a positive multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  if (!std::isfinite(spec.limit) || spec.limit <= 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected a finite limit > 0");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildSwigluKernel(ModuleOp module, const SwigluKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifySwigluKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto less = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r);
  };

  int64_t next = 0;
  Value gate = emitStepOperand(b, loc, args, next++);
  Value up = emitStepOperand(b, loc, args, next++);
  Value weights =
      spec.weighted ? emitStepOperand(b, loc, args, next++) : Value();
  Value h = emitStepOperand(b, loc, args, next++);
  const int64_t rowBytes = 4 * spec.f;
  Value limit = kb.splat(floats, spec.limit),
        minusLimit = kb.splat(floats, -spec.limit);
  Value one = arith::ConstantOp::create(
      b, loc, doubles, DenseElementsAttr::get(doubles, b.getF64FloatAttr(1.0)));

  auto rows = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(rows.getBody());
  Value row = rows.getInductionVar();
  Value rowOffset = arith::MulIOp::create(b, loc, row, kb.index(rowBytes));
  Value gateRow = emitByteOffset(b, loc, gate, rowOffset);
  Value upRow = emitByteOffset(b, loc, up, rowOffset);
  Value hRow = emitByteOffset(b, loc, h, rowOffset);
  Value weight;
  if (weights)
    weight = vector::BroadcastOp::create(
        b, loc, floats,
        LLVM::LoadOp::create(
            b, loc, f32,
            emitByteOffset(b, loc, weights,
                           arith::MulIOp::create(b, loc, row, kb.index(4))),
            /*alignment=*/4));

  auto elements = scf::ForOp::create(b, loc, kb.index(0), kb.index(rowBytes),
                                     kb.index(4 * kLanes));
  b.setInsertionPointToStart(elements.getBody());
  Value offset = elements.getInductionVar();
  Value gateValues = kb.load(floats, gateRow, offset, 4),
        upValues = kb.load(floats, upRow, offset, 4);
  // std::min(gate, limit) and std::clamp(up, -limit, limit).
  Value g = arith::SelectOp::create(b, loc, less(limit, gateValues), limit,
                                    gateValues);
  Value u = arith::SelectOp::create(
      b, loc, less(upValues, minusLimit), minusLimit,
      arith::SelectOp::create(b, loc, less(limit, upValues), limit, upValues));
  Value wideG = arith::ExtFOp::create(b, loc, doubles, g);
  Value e = emitExp(b, loc, arith::NegFOp::create(b, loc, wideG));
  Value silu = arith::TruncFOp::create(
      b, loc, floats,
      arith::DivFOp::create(b, loc, wideG,
                            arith::AddFOp::create(b, loc, one, e)));
  Value product = arith::MulFOp::create(b, loc, silu, u);
  // The shared expert's weight is 1, and x · 1 is x.
  if (weight)
    product = arith::MulFOp::create(b, loc, product, weight);
  LLVM::StoreOp::create(b, loc, emitRoundToBf16(b, loc, product),
                        emitByteOffset(b, loc, hRow, offset),
                        /*alignment=*/4);
  b.setInsertionPointAfter(rows);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
