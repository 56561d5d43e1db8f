//===- ArgmaxEmitter.cpp - The compiled kf.argmax -------------------------===//
//
// The interpreter's kf.argmax: the first index i with x_i == M, M the largest
// value of the row that is not a NaN (-0 == +0, so of a -0 and a +0 the
// first wins), and 0 where there is none. The row runs in 16 lanes, each
// keeping its largest value and where it first saw it: a value replaces the
// lane's only when it is greater (a NaN never is, a tie never is), so a
// lane's index is the first of its values equal to its maximum. M is then
// the lanes' largest, the index the least of the lanes whose maximum equals
// it, and the last V mod 16 values (larger indices than any lane's) replace
// it only when greater. The lanes start at -inf, which no value exceeds
// where the row holds only -infs and NaNs: then M stays -inf and a scan finds
// the first -inf (0 if none: a row of NaNs). Only comparisons and selects:
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/ArgmaxKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <limits>
#include <numeric>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kMaxV = std::numeric_limits<int32_t>::max();

} // namespace

std::string ArgmaxKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_argmax_v{0}", v).str();
}

std::string ArgmaxKernelSpec::describe() const {
  return llvm::formatv("argmax kernel [V = {0}]", v).str();
}

llvm::Error verifyArgmaxKernel(const ArgmaxKernelSpec &spec) {
  if (spec.v < 1 || spec.v > kMaxV)
    return llvm::createStringError(
        llvm::formatv("{0}: expected V in [1, {1}] (an index is an i32)",
                      spec.describe(), kMaxV)
            .str());
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildArgmaxKernel(ModuleOp module, const ArgmaxKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifyArgmaxKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto ints = VectorType::get({kLanes}, i32);
  auto int32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto negInf = [&]() -> Value {
    return arith::ConstantFloatOp::create(
        b, loc, cast<FloatType>(f32),
        llvm::APFloat::getInf(llvm::APFloat::IEEEsingle(), /*Negative=*/true));
  };
  auto greater = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, r);
  };
  auto equal = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, r);
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto toI32 = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, loc, i32, v);
  };

  Value x = emitStepOperand(b, loc, args, 0);
  Value out = emitStepOperand(b, loc, args, 1);
  const int64_t vectorValues = spec.v / kLanes * kLanes;

  auto rows = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(rows.getBody());
  Value rowIndex = rows.getInductionVar();
  Value xRow = emitByteOffset(
      b, loc, x, arith::MulIOp::create(b, loc, rowIndex, kb.index(4 * spec.v)));
  auto loadAt = [&](Type type, Value element) -> Value {
    return kb.load(type, xRow,
                   arith::MulIOp::create(b, loc, element, kb.index(4)),
                   /*alignment=*/4);
  };

  // The lanes: their largest values and where each first appears.
  Value best = negInf(), bestIndex = int32(0);
  if (vectorValues > 0) {
    llvm::SmallVector<int32_t, kLanes> iota(kLanes);
    std::iota(iota.begin(), iota.end(), 0);
    Value laneIota = arith::ConstantOp::create(
        b, loc, ints, DenseElementsAttr::get(ints, llvm::ArrayRef(iota)));
    Value initMax = vector::BroadcastOp::create(b, loc, floats, negInf());
    Value initIndex = vector::BroadcastOp::create(b, loc, ints, int32(0));
    auto lanes =
        scf::ForOp::create(b, loc, kb.index(0), kb.index(vectorValues),
                           kb.index(kLanes), ValueRange{initMax, initIndex});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(lanes.getBody());
      Value element = lanes.getInductionVar();
      Value v = loadAt(floats, element);
      Value laneMax = lanes.getRegionIterArg(0);
      Value gt = greater(v, laneMax);
      Value indices = arith::AddIOp::create(
          b, loc, laneIota,
          vector::BroadcastOp::create(b, loc, ints, toI32(element)));
      scf::YieldOp::create(
          b, loc,
          ValueRange{select(gt, v, laneMax),
                     select(gt, indices, lanes.getRegionIterArg(1))});
    }
    Value laneMax = lanes.getResult(0);
    // No lane holds a NaN, so the lanes' maxnum is their largest (a -0 or
    // a +0 where both are: they compare equal below all the same).
    best = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXNUMF,
                                       laneMax);
    Value atBest =
        equal(laneMax, vector::BroadcastOp::create(b, loc, floats, best));
    Value candidates =
        select(atBest, lanes.getResult(1),
               vector::BroadcastOp::create(b, loc, ints, int32(kMaxV)));
    bestIndex = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MINSI, candidates);
  }
  // The last values, after every lane's: they win only when greater.
  for (int64_t i = vectorValues; i < spec.v; ++i) {
    Value v = loadAt(f32, kb.index(i));
    Value gt = greater(v, best);
    best = select(gt, v, best);
    bestIndex = select(gt, int32(i), bestIndex);
  }

  // Nothing exceeded -inf: the first -inf, or 0 where the row is all NaN.
  auto onlyNegInf =
      scf::IfOp::create(b, loc, TypeRange{i32}, equal(best, negInf()),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&onlyNegInf.getThenRegion().front());
    auto scan = scf::ForOp::create(b, loc, kb.index(0), kb.index(spec.v),
                                   kb.index(1), ValueRange{int32(spec.v)});
    {
      OpBuilder::InsertionGuard scanGuard(b);
      b.setInsertionPointToStart(scan.getBody());
      Value found = scan.getRegionIterArg(0);
      Value first = arith::AndIOp::create(
          b, loc, equal(loadAt(f32, scan.getInductionVar()), negInf()),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, found,
                                int32(spec.v)));
      scf::YieldOp::create(
          b, loc,
          ValueRange{select(first, toI32(scan.getInductionVar()), found)});
    }
    Value found = scan.getResult(0);
    scf::YieldOp::create(b, loc,
                         ValueRange{select(arith::CmpIOp::create(
                                               b, loc, arith::CmpIPredicate::eq,
                                               found, int32(spec.v)),
                                           int32(0), found)});
    b.setInsertionPointToStart(&onlyNegInf.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{bestIndex});
  }
  kb.store(onlyNegInf.getResult(0), out,
           arith::MulIOp::create(b, loc, rowIndex, kb.index(4)),
           /*alignment=*/4);

  b.setInsertionPointAfter(rows);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
