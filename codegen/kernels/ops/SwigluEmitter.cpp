//===- SwigluEmitter.cpp - The compiled kf.swiglu -------------------------===//
//
// The golden's swiglu (routing.cpp), in vectors of 16 floats: g = min(gate,
// limit), u = clamp(up, -limit, limit) (std::min's and std::clamp's
// comparisons), silu = fp32(g / (1 + e^-g)) in fp64, h = bf16((silu · u) ·
// weight). Everything but e^-g is the reference's IEEE operation in its
// order.
//
// A kernel calls nothing (no libm), so e^x is computed here in fp64 with
// fdlibm's __ieee754_exp algorithm, whose error is below one fp64 ulp: x =
// k ln2 + r with k = round(x / ln2) (the float adder's rounding: adding and
// removing 1.5 · 2^52), ln2 split in a part whose products with k are exact
// and a correction (hi - lo = r); e^r = 1 - ((lo - r·c / (2 - c)) - hi),
// where c = r - r²·P(r²) with fdlibm's degree-5 Remez polynomial P; times
// 2^k built in the exponent field.
// Arguments are clamped to ±708, where 2^k is normal: below -708, 1 + e^x
// is 1 in fp64 as it is for the reference's tiny e^x; above 708, e^x is
// returned as +inf, where the reference's e^x is inf or so large that g / (1
// + e^x) rounds to -0 in fp32 all the same (and an infinite gate gives the
// reference's NaN).
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
#include <limits>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

/// e^x for each lane of `x` (a vector of f64), as the file's comment says.
Value emitExp(OpBuilder &b, Location loc, Value x) {
  auto doubles = cast<VectorType>(x.getType());
  auto longs = VectorType::get(doubles.getShape(), b.getI64Type());
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, doubles, DenseElementsAttr::get(doubles, b.getF64FloatAttr(v)));
  };
  auto add = [&](Value l, Value r) -> Value {
    return arith::AddFOp::create(b, loc, l, r);
  };
  auto sub = [&](Value l, Value r) -> Value {
    return arith::SubFOp::create(b, loc, l, r);
  };
  auto mul = [&](Value l, Value r) -> Value {
    return arith::MulFOp::create(b, loc, l, r);
  };
  auto less = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r);
  };
  // fdlibm e_exp.c's constants.
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kLn2Hi = 6.93147180369123816490e-01; // 32 bits: k·hi exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kP1 = 1.66666666666666019037e-01;
  constexpr double kP2 = -2.77777777770155933842e-03;
  constexpr double kP3 = 6.61375632143793436117e-05;
  constexpr double kP4 = -1.65339022054652515390e-06;
  constexpr double kP5 = 4.13813679705723846039e-08;
  constexpr double kMagic = 0x1.8p52; // rounds |v| < 2^51 to an integer
  constexpr double kBound = 708.0;

  Value bound = splat(kBound), minusBound = splat(-kBound);
  Value clamped = arith::SelectOp::create(
      b, loc, less(x, minusBound), minusBound,
      arith::SelectOp::create(b, loc, less(bound, x), bound, x));
  Value magic = splat(kMagic);
  Value shifted = add(mul(clamped, splat(kInvLn2)), magic);
  Value k = sub(shifted, magic);
  Value hi = sub(clamped, mul(k, splat(kLn2Hi)));
  Value lo = mul(k, splat(kLn2Lo));
  Value r = sub(hi, lo);
  Value t = mul(r, r);
  Value poly = add(splat(kP4), mul(t, splat(kP5)));
  poly = add(splat(kP3), mul(t, poly));
  poly = add(splat(kP2), mul(t, poly));
  poly = add(splat(kP1), mul(t, poly));
  Value c = sub(r, mul(t, poly));
  Value quotient = arith::DivFOp::create(b, loc, mul(r, c), sub(splat(2.0), c));
  Value y = sub(splat(1.0), sub(sub(lo, quotient), hi));
  // 2^k: k is shifted's bits less magic's (an integer below 2^51 held with
  // a unit step), put in the exponent field; no float-to-int conversion,
  // which LLVM makes poison on a NaN.
  Value kBits = arith::SubIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, longs, shifted),
      emitSplat(b, loc, longs, llvm::bit_cast<int64_t>(kMagic)));
  Value twoToK = arith::BitcastOp::create(
      b, loc, doubles,
      arith::ShLIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, kBits, emitSplat(b, loc, longs, 1023)),
          emitSplat(b, loc, longs, 52)));
  return arith::SelectOp::create(b, loc, less(bound, x),
                                 splat(std::numeric_limits<double>::infinity()),
                                 mul(y, twoToK));
}

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
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  auto floatSplat = [&](float v) -> Value {
    return arith::ConstantOp::create(
        b, loc, floats, DenseElementsAttr::get(floats, b.getF32FloatAttr(v)));
  };
  auto less = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r);
  };
  auto load = [&](Value base, Value offset) -> Value {
    return LLVM::LoadOp::create(b, loc, floats,
                                emitByteOffset(b, loc, base, offset),
                                /*alignment=*/4);
  };

  int64_t next = 0;
  Value gate = emitStepOperand(b, loc, args, next++);
  Value up = emitStepOperand(b, loc, args, next++);
  Value weights =
      spec.weighted ? emitStepOperand(b, loc, args, next++) : Value();
  Value h = emitStepOperand(b, loc, args, next++);
  const int64_t rowBytes = 4 * spec.f;
  Value limit = floatSplat(spec.limit), minusLimit = floatSplat(-spec.limit);
  Value one = arith::ConstantOp::create(
      b, loc, doubles, DenseElementsAttr::get(doubles, b.getF64FloatAttr(1.0)));

  auto rows = scf::ForOp::create(b, loc, args.begin, args.end, index(1));
  b.setInsertionPointToStart(rows.getBody());
  Value row = rows.getInductionVar();
  Value rowOffset = arith::MulIOp::create(b, loc, row, index(rowBytes));
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
                           arith::MulIOp::create(b, loc, row, index(4))),
            /*alignment=*/4));

  auto elements =
      scf::ForOp::create(b, loc, index(0), index(rowBytes), index(4 * kLanes));
  b.setInsertionPointToStart(elements.getBody());
  Value offset = elements.getInductionVar();
  Value gateValues = load(gateRow, offset), upValues = load(upRow, offset);
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
