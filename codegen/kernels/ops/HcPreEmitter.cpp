//===- HcPreEmitter.cpp - The compiled kf.hc_pre --------------------------===//
//
// The golden's hcPre (hyper_connections.cpp), one token at a time but for
// the mixes, which a run's tokens share in blocks (HcMix.cpp):
//
// 1. the (2 + mult)·mult mixes m of the token's streams z (HcMix.h:
//    fp64 dot products with fn's rows in z's order, fp32, times z's inverse
//    RMS);
// 2. pre = sigmoid(scale_0 · m_j + base_j) + eps, post = 2 · sigmoid(scale_1 ·
//    m_{mult+j} + base_{mult+j}), the combination logits scale_2 · m + base;
// 3. Sinkhorn on the mult × mult logits, in rows of mult lanes: each row's
//    softmax (its max by std::max_element's comparisons, e^(v - max) in fp64
//    to fp32, the sum in fp64 in k's order, then v / sum + eps), a column
//    normalisation, then (iterations - 1) times a row and a column one, each
//    dividing by fp32(the fp64 sum in the golden's order) + eps;
// 4. x = bf16(Σ_j pre_j · stream_j) (HcMix.h).
//
// Every operation is the golden's IEEE operation on the same operands but
// e^x, emitExp's (fdlibm's algorithm, where the golden calls glibc's exp;
// ~1.5 fp64 ulps apart at most), which reaches the results only as fp32
// terms: the sigmoids and the softmax's e^(v - max). Those equal the
// golden's for every float argument (HcKernelTest.cpp: exhaustively over
// [-110, 110], beyond which both saturate alike), so the kernel is bit for
// bit; with another libm a term could differ, by one fp32 ulp, where its
// fp64 value lies within ~1.5 fp64 ulps of an fp32 rounding boundary.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/HcPreKernel.h"

#include "HcMix.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kf::codegen {

namespace {

/// The golden's sinkhorn on `rows` (vector<n x f32> each, row j of the n ×
/// n logits), with `iters` column normalisations.
SmallVector<Value> emitSinkhorn(OpBuilder &b, Location loc,
                                SmallVector<Value> rows, int64_t iters,
                                float eps) {
  const int64_t n = static_cast<int64_t>(rows.size());
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto floats = VectorType::get({n}, f32);
  auto doubles = VectorType::get({n}, f64);
  Value zero = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64),
                                              llvm::APFloat(0.0));
  Value zeros = arith::ConstantOp::create(
      b, loc, doubles, DenseElementsAttr::get(doubles, b.getF64FloatAttr(0)));
  Value epsScalar = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                                   llvm::APFloat(eps));
  Value epsSplat = hc::emitBroadcast(b, loc, epsScalar, n);
  auto widen = [&](Value v) -> Value {
    return arith::ExtFOp::create(b, loc, doubles, v);
  };
  // fp32(Σ_k row_k, in fp64 from 0 in k's order).
  auto rowSum = [&](Value row) -> Value {
    return arith::TruncFOp::create(
        b, loc, f32,
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                    widen(row), zero));
  };
  auto normaliseColumns = [&](SmallVector<Value> &c) {
    Value sums = zeros;
    for (Value row : c)
      sums = arith::AddFOp::create(b, loc, sums, widen(row));
    Value denominators = arith::AddFOp::create(
        b, loc, arith::TruncFOp::create(b, loc, floats, sums), epsSplat);
    for (Value &row : c)
      row = arith::DivFOp::create(b, loc, row, denominators);
  };
  auto normaliseRows = [&](SmallVector<Value> &c) {
    for (Value &row : c) {
      Value denominator = arith::AddFOp::create(b, loc, rowSum(row), epsScalar);
      row = arith::DivFOp::create(b, loc, row,
                                  hc::emitBroadcast(b, loc, denominator, n));
    }
  };

  for (Value &row : rows) {
    // std::max_element: the first of the largest, by operator<.
    Value max = vector::ExtractOp::create(b, loc, row, 0);
    for (int64_t k = 1; k < n; ++k) {
      Value v = vector::ExtractOp::create(b, loc, row, k);
      max = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, max, v), v,
          max);
    }
    Value shifted =
        arith::SubFOp::create(b, loc, row, hc::emitBroadcast(b, loc, max, n));
    Value e = arith::TruncFOp::create(b, loc, floats,
                                      emitExp(b, loc, widen(shifted)));
    Value total = hc::emitBroadcast(b, loc, rowSum(e), n);
    row = arith::AddFOp::create(b, loc, arith::DivFOp::create(b, loc, e, total),
                                epsSplat);
  }
  normaliseColumns(rows);
  auto loop = scf::ForOp::create(b, loc, hc::emitIndex(b, loc, 1),
                                 hc::emitIndex(b, loc, iters),
                                 hc::emitIndex(b, loc, 1), rows);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> c(loop.getRegionIterArgs());
  normaliseRows(c);
  normaliseColumns(c);
  scf::YieldOp::create(b, loc, c);
  return SmallVector<Value>(loop.getResults());
}

} // namespace

std::string HcPreKernelSpec::getSymbolName() const {
  return hc::getSymbolName("hc_pre", mult, d) + "_s" +
         std::to_string(sinkhornIters) + "_e" + hc::getBitsHex(eps) + "_n" +
         hc::getBitsHex(normEps);
}

std::string HcPreKernelSpec::describe() const {
  return hc::describe("hc_pre", mult, d,
                      ", sinkhorn = " + std::to_string(sinkhornIters) +
                          ", eps = " + formatShortest(eps) +
                          ", norm_eps = " + formatShortest(normEps));
}

llvm::Error verifyHcPreKernel(const HcPreKernelSpec &spec) {
  if (llvm::Error err = hc::verifyShape(spec.describe(), spec.mult, spec.d))
    return err;
  if (spec.sinkhornIters < 1)
    return llvm::createStringError(spec.describe() +
                                   ": expected at least one Sinkhorn "
                                   "iteration");
  return hc::verifyEpsilons(spec.describe(), spec.eps, spec.normEps);
}

llvm::Expected<func::FuncOp>
buildHcPreKernel(ModuleOp module, const HcPreKernelSpec &spec,
                 const target::TargetInfo &target) {
  if (llvm::Error err = verifyHcPreKernel(spec))
    return std::move(err);
  const int64_t mult = spec.mult, width = mult * spec.d;
  return hc::buildMixKernel(
      module, spec.getSymbolName(), target, /*operandCount=*/7,
      {width, (2 + mult) * mult, spec.normEps},
      [&](OpBuilder &b, Location loc, ArrayRef<Value> operands, Value token,
          ArrayRef<Value> m) {
        // Operands: streams, fn, base, scale, x, post, comb.
        Value base = operands[2], scale = operands[3];
        auto floats = VectorType::get({mult}, b.getF32Type());
        auto store = [&](Value v, Value ptr, int64_t floatIndex) {
          LLVM::StoreOp::create(b, loc, v,
                                emitByteOffset(b, loc, ptr, 4 * floatIndex),
                                /*alignment=*/4);
        };
        // scale_i · m[first, first + mult) + base[first, first + mult).
        auto logits = [&](ArrayRef<Value> m, int64_t first, Value scaleSplat) {
          return arith::AddFOp::create(
              b, loc,
              arith::MulFOp::create(
                  b, loc, scaleSplat,
                  hc::emitVectorOf(b, loc, m.slice(first, mult))),
              hc::emitLoadFloats(b, loc, base, hc::emitIndex(b, loc, 4 * first),
                                 mult));
        };
        Value pre =
            hc::emitPreWeights(b, loc, m.take_front(mult), base,
                               hc::emitLoadFloat(b, loc, scale, 0), spec.eps);
        // post = 2 · sigmoid(scale_1 · m + base), the doubling exact.
        Value two = arith::ConstantOp::create(
            b, loc, floats,
            DenseElementsAttr::get(floats, b.getF32FloatAttr(2.0f)));
        Value postArg =
            logits(m, mult,
                   hc::emitBroadcast(
                       b, loc, hc::emitLoadFloat(b, loc, scale, 1), mult));
        store(arith::MulFOp::create(b, loc, two,
                                    hc::emitSigmoid(b, loc, postArg)),
              hc::emitTokenRow(b, loc, operands[5], token, mult), 0);

        Value combScale = hc::emitBroadcast(
            b, loc, hc::emitLoadFloat(b, loc, scale, 2), mult);
        SmallVector<Value> rows;
        for (int64_t j = 0; j < mult; ++j)
          rows.push_back(logits(m, 2 * mult + j * mult, combScale));
        rows = emitSinkhorn(b, loc, rows, spec.sinkhornIters, spec.eps);
        Value comb = hc::emitTokenRow(b, loc, operands[6], token, mult * mult);
        for (int64_t j = 0; j < mult; ++j)
          store(rows[j], comb, j * mult);

        hc::emitWeightedStreamSum(
            b, loc, hc::emitTokenRow(b, loc, operands[0], token, width), pre,
            spec.d, hc::emitTokenRow(b, loc, operands[4], token, spec.d));
      });
}

} // namespace kf::codegen
