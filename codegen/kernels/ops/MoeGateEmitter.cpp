//===- MoeGateEmitter.cpp - The compiled kf.moe_gate ----------------------===//
//
// The interpreter's kf.moe_gate, token by token:
//
// - scores: the golden's sqrtSoftplus, x = fp64(logit), softplus = x where
//   x > 20, else log1p(e^x) (emitExp, emitLog1p: fdlibm's, within ~1.5 and
//   ~1 fp64 ulps of libm's), then the fp64 sqrt (an IEEE operation) rounded
//   to fp32. The fp32 score differs from the golden's only where the exact
//   fp64 softplus lies within a few fp64 ulps of an fp32 rounding boundary
//   (about one in 2^27 values); everything after it is bit for bit.
// - learned routing: the E scores and biased scores (fp32 s + bias) are
//   kept on the stack; slot j is the greatest biased score in the golden's
//   order (larger first, of equal values the lower index: a strict total
//   order) strictly below slot j - 1's, found by one scan of the E experts.
//   The scan keeps the first of the greatest values, as the order wants. A
//   NaN (which the interpreter refuses) ranks as -inf, so the order stays
//   total and the k slots name k distinct experts.
// - hash routing: the token's row of the table, and the scores of its k
//   experts only. The id is compared unsigned, as an i64 sign-extended from
//   the i32 (as the embed kernel does): a negative id is out of range as
//   much as one of V or more. Such an id, or a row naming an expert outside
//   [0, E), gives experts 0 .. k-1 with weights +0 (the routed experts then
//   add nothing), reading nothing past the table's row.
// - weights: the chosen scores summed in fp64 in slot order from +0, the
//   sum rounded to fp32, then each s / total · route_scale in fp32, the
//   golden's operations in its order (a division then a product: nothing to
//   contract into an FMA).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/MoeGateKernel.h"

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
#include <cstdint>
#include <limits>

using namespace mlir;

namespace kf::codegen {

namespace {

/// The stack holds 2·E floats of scores; E = 1024 keeps that at 8 KiB.
constexpr int64_t kMaxExperts = 1024;
/// The golden's softplus threshold (torch's): above it, the logit itself.
constexpr double kSoftplusThreshold = 20.0;

/// Lanes per vector of scores: the largest power of two up to 16 dividing E.
int64_t scoreLanes(int64_t experts) {
  int64_t lanes = 16;
  while (experts % lanes != 0)
    lanes /= 2;
  return lanes;
}

} // namespace

std::string MoeGateKernelSpec::getSymbolName() const {
  std::string scale =
      llvm::formatv("{0}", llvm::format_hex_no_prefix(
                               llvm::bit_cast<uint32_t>(routeScale), 8))
          .str();
  if (isHashRouted())
    return llvm::formatv("kf_moe_gate_hash_v{0}_e{1}_k{2}_s{3}", vocab, experts,
                         k, scale)
        .str();
  return llvm::formatv("kf_moe_gate_e{0}_k{1}_s{2}", experts, k, scale).str();
}

std::string MoeGateKernelSpec::describe() const {
  std::string routing =
      isHashRouted() ? llvm::formatv("hash, V = {0}", vocab).str() : "learned";
  return llvm::formatv("moe_gate kernel [{0}, E = {1}, k = {2}, route_scale = "
                       "{3}]",
                       routing, experts, k, formatShortest(routeScale))
      .str();
}

llvm::Error verifyMoeGateKernel(const MoeGateKernelSpec &spec) {
  if (spec.experts < 1 || spec.experts > kMaxExperts)
    return llvm::createStringError(llvm::formatv("{0}: expected E in [1, {1}]",
                                                 spec.describe(), kMaxExperts)
                                       .str());
  if (spec.k < 1 || spec.k > spec.experts)
    return llvm::createStringError(spec.describe() + ": expected k in [1, E]");
  if (!(spec.routeScale > 0.0f) || !std::isfinite(spec.routeScale))
    return llvm::createStringError(spec.describe() +
                                   ": expected a positive, finite route scale");
  if (spec.vocab < 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected V not negative");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildMoeGateKernel(ModuleOp module, const MoeGateKernelSpec &spec,
                   const target::TargetInfo &target) {
  if (llvm::Error err = verifyMoeGateKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  auto f32Const = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  auto f64Const = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64),
                                          llvm::APFloat(v));
  };
  auto i1Const = [&](bool v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), v);
  };
  auto cmpf = [&](arith::CmpFPredicate p, Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, p, l, r);
  };
  auto cmpi = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto times = [&](Value v, int64_t factor) -> Value {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  };
  // The golden's sqrtSoftplus of each lane of `logits` (a vector of f32).
  auto sqrtSoftplus = [&](Value logits) -> Value {
    auto floats = cast<VectorType>(logits.getType());
    auto doubles = VectorType::get(floats.getShape(), f64);
    Value x = arith::ExtFOp::create(b, loc, doubles, logits);
    Value softplus = select(cmpf(arith::CmpFPredicate::OGT, x,
                                 kb.splat(doubles, kSoftplusThreshold)),
                            x, emitLog1p(b, loc, emitExp(b, loc, x)));
    return arith::TruncFOp::create(b, loc, floats,
                                   LLVM::SqrtOp::create(b, loc, softplus));
  };

  const bool hash = spec.isHashRouted();
  const int64_t e = spec.experts, k = spec.k;
  Value logits = emitStepOperand(b, loc, args, 0);
  Value second = emitStepOperand(b, loc, args, 1); // the bias or the table
  Value tokenIds = hash ? emitStepOperand(b, loc, args, 2) : Value();
  Value ids = emitStepOperand(b, loc, args, hash ? 3 : 2);
  Value weights = emitStepOperand(b, loc, args, hash ? 4 : 3);
  // A token's scores and biased scores, at the entry so that LLVM allocates
  // them once.
  Value scores, biased;
  if (!hash) {
    scores = LLVM::AllocaOp::create(b, loc,
                                    LLVM::LLVMPointerType::get(b.getContext()),
                                    f32, kb.index(2 * e), /*alignment=*/64);
    biased = emitByteOffset(b, loc, scores, 4 * e);
  }

  auto tokens = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(tokens.getBody());
  Value token = tokens.getInductionVar();
  Value logitRow = emitByteOffset(b, loc, logits, times(token, 4 * e));
  Value idRow = emitByteOffset(b, loc, ids, times(token, 4 * k));
  Value weightRow = emitByteOffset(b, loc, weights, times(token, 4 * k));

  // Slot by slot, `expertOf(slot, carried, next)` (an i64 in [0, E); it
  // may carry values of its own from slot to slot, `carried` in and `next`
  // out, from `init`) and its score: the id and the score stored, the score
  // added to the fp64 sum; then each stored score replaced by its weight.
  using ExpertOf = llvm::function_ref<Value(Value, ValueRange,
                                            llvm::SmallVectorImpl<Value> &)>;
  auto routeSlots = [&](ValueRange init, ExpertOf expertOf,
                        llvm::function_ref<Value(Value)> scoreOf) {
    llvm::SmallVector<Value> inits{f64Const(0.0)};
    inits.append(init.begin(), init.end());
    auto slots = scf::ForOp::create(b, loc, kb.index(0), kb.index(k),
                                    kb.index(1), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(slots.getBody());
      Value slot = slots.getInductionVar();
      llvm::SmallVector<Value> next;
      Value expert =
          expertOf(slot, slots.getRegionIterArgs().drop_front(), next);
      Value score = scoreOf(expert);
      kb.store(arith::TruncIOp::create(b, loc, i32, expert), idRow,
               times(slot, 4), /*alignment=*/4);
      kb.store(score, weightRow, times(slot, 4), /*alignment=*/4);
      next.insert(next.begin(),
                  kb.add(slots.getRegionIterArg(0),
                         arith::ExtFOp::create(b, loc, f64, score)));
      scf::YieldOp::create(b, loc, next);
    }
    Value total = arith::TruncFOp::create(b, loc, f32, slots.getResult(0));
    Value scale = f32Const(spec.routeScale);
    kb.forEach(kb.index(0), kb.index(4 * k), 4, [&](Value offset) {
      Value score = kb.load(f32, weightRow, offset, 4);
      kb.store(kb.mul(arith::DivFOp::create(b, loc, score, total), scale),
               weightRow, offset, 4);
    });
  };

  if (!hash) {
    const int64_t lanes = scoreLanes(e);
    auto floats = VectorType::get({lanes}, f32);
    Value negInf = kb.splat(floats, -std::numeric_limits<double>::infinity());
    kb.forEach(kb.index(0), kb.index(4 * e), 4 * lanes, [&](Value offset) {
      Value s = sqrtSoftplus(kb.load(floats, logitRow, offset, 4));
      kb.store(s, scores, offset, 4);
      Value sum = kb.add(s, kb.load(floats, second, offset, 4));
      kb.store(select(cmpf(arith::CmpFPredicate::UNO, sum, sum), negInf, sum),
               biased, offset, 4);
    });
    // The previous slot's biased score and expert, carried from slot to
    // slot: +inf and -1 before the first, which every expert is below.
    routeSlots(
        ValueRange{f32Const(std::numeric_limits<float>::infinity()),
                   kb.index(-1)},
        [&](Value, ValueRange previous,
            llvm::SmallVectorImpl<Value> &next) -> Value {
          Value prevValue = previous[0], prevExpert = previous[1];
          auto scan =
              scf::ForOp::create(b, loc, kb.index(0), kb.index(e), kb.index(1),
                                 ValueRange{prevValue, kb.index(-1)});
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(scan.getBody());
            Value expert = scan.getInductionVar();
            Value v = kb.load(f32, biased, times(expert, 4), 4);
            Value bestValue = scan.getRegionIterArg(0);
            Value bestExpert = scan.getRegionIterArg(1);
            Value below = arith::OrIOp::create(
                b, loc, cmpf(arith::CmpFPredicate::OLT, v, prevValue),
                arith::AndIOp::create(
                    b, loc, cmpf(arith::CmpFPredicate::OEQ, v, prevValue),
                    cmpi(arith::CmpIPredicate::sgt, expert, prevExpert)));
            // Of equal values the first scanned, the lower index, stays.
            Value better = arith::OrIOp::create(
                b, loc,
                cmpi(arith::CmpIPredicate::slt, bestExpert, kb.index(0)),
                cmpf(arith::CmpFPredicate::OGT, v, bestValue));
            Value choose = arith::AndIOp::create(b, loc, below, better);
            scf::YieldOp::create(
                b, loc,
                ValueRange{select(choose, v, bestValue),
                           select(choose, expert, bestExpert)});
          }
          next.append({scan.getResult(0), scan.getResult(1)});
          return scan.getResult(1);
        },
        [&](Value expert) -> Value {
          return kb.load(f32, scores, times(expert, 4), 4);
        });
  } else {
    Value id = arith::ExtSIOp::create(
        b, loc, i64, kb.load(i32, tokenIds, times(token, 4), /*alignment=*/4));
    auto tableRow = [&]() {
      return emitByteOffset(b, loc, second, times(id, 4 * k));
    };
    auto entry = [&](Value row, Value slot) -> Value {
      return arith::ExtSIOp::create(b, loc, i64,
                                    kb.load(i32, row, times(slot, 4), 4));
    };
    auto valid = scf::IfOp::create(
        b, loc, TypeRange{b.getI1Type()},
        cmpi(arith::CmpIPredicate::ult, id, kb.index(spec.vocab)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&valid.getThenRegion().front());
      Value row = tableRow();
      auto check = scf::ForOp::create(b, loc, kb.index(0), kb.index(k),
                                      kb.index(1), ValueRange{i1Const(true)});
      {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPointToStart(check.getBody());
        Value inside = cmpi(arith::CmpIPredicate::ult,
                            entry(row, check.getInductionVar()), kb.index(e));
        scf::YieldOp::create(b, loc,
                             ValueRange{arith::AndIOp::create(
                                 b, loc, check.getRegionIterArg(0), inside)});
      }
      scf::YieldOp::create(b, loc, ValueRange{check.getResult(0)});
      b.setInsertionPointToStart(&valid.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{i1Const(false)});
    }
    auto route = scf::IfOp::create(b, loc, valid.getResult(0),
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&route.getThenRegion().front());
      Value row = tableRow();
      auto scalar = VectorType::get({1}, f32);
      routeSlots(
          ValueRange{},
          [&](Value slot, ValueRange, llvm::SmallVectorImpl<Value> &) -> Value {
            return entry(row, slot);
          },
          [&](Value expert) -> Value {
            Value s =
                sqrtSoftplus(kb.load(scalar, logitRow, times(expert, 4), 4));
            return vector::ExtractOp::create(b, loc, s, 0);
          });
      // A row the interpreter refuses: experts 0 .. k-1, weights +0.
      b.setInsertionPointToStart(&route.getElseRegion().front());
      kb.forEach(kb.index(0), kb.index(k), 1, [&](Value slot) {
        kb.store(arith::TruncIOp::create(b, loc, i32, slot), idRow,
                 times(slot, 4), 4);
        kb.store(f32Const(0.0f), weightRow, times(slot, 4), 4);
      });
    }
  }

  b.setInsertionPointAfter(tokens);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
