//===- HcPostEmitter.cpp - The compiled kf.hc_post ------------------------===//
//
// The golden's hcPost (hyper_connections.cpp), one token at a time, in
// vectors of 16 values of each stream: new stream k = bf16(fp32(post_k · f +
// Σ_j comb[j][k] · stream_j)), the products exact in fp64 and the sum
// chained in the golden's order, so bit for bit. Each vector of every new
// stream is computed from the same vectors of the old streams and stored
// after all of them are read, which lets the new streams overwrite the old.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/HcPostKernel.h"

#include "HcMix.h"

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kf::codegen {

std::string HcPostKernelSpec::getSymbolName() const {
  return hc::getSymbolName("hc_post", mult, d);
}

std::string HcPostKernelSpec::describe() const {
  return hc::describe("hc_post", mult, d);
}

llvm::Error verifyHcPostKernel(const HcPostKernelSpec &spec) {
  return hc::verifyShape(spec.describe(), spec.mult, spec.d);
}

llvm::Expected<func::FuncOp>
buildHcPostKernel(ModuleOp module, const HcPostKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifyHcPostKernel(spec))
    return std::move(err);
  const int64_t mult = spec.mult, d = spec.d, lanes = hc::kLanes;
  return hc::buildTokenKernel(
      module, spec.getSymbolName(), target, /*operandCount=*/5,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> operands, Value token) {
        auto floats = VectorType::get({lanes}, b.getF32Type());
        auto doubles = VectorType::get({lanes}, b.getF64Type());
        auto widen = [&](Value v) -> Value {
          return arith::ExtFOp::create(b, loc, doubles, v);
        };
        Value f = hc::emitTokenRow(b, loc, operands[0], token, d);
        Value streams = hc::emitTokenRow(b, loc, operands[1], token, mult * d);
        Value post = hc::emitTokenRow(b, loc, operands[2], token, mult);
        Value comb = hc::emitTokenRow(b, loc, operands[3], token, mult * mult);
        Value out = hc::emitTokenRow(b, loc, operands[4], token, mult * d);
        // Weight `i` of `weights`, widened and splat to the lanes.
        auto weightSplat = [&](Value weights, int64_t i) -> Value {
          return hc::emitBroadcast(
              b, loc,
              arith::ExtFOp::create(b, loc, b.getF64Type(),
                                    hc::emitLoadFloat(b, loc, weights, i)),
              lanes);
        };
        SmallVector<Value> postSplats, combSplats, oldStart, newStart;
        for (int64_t k = 0; k < mult; ++k) {
          postSplats.push_back(weightSplat(post, k));
          oldStart.push_back(emitByteOffset(b, loc, streams, 4 * k * d));
          newStart.push_back(emitByteOffset(b, loc, out, 4 * k * d));
        }
        for (int64_t jk = 0; jk < mult * mult; ++jk)
          combSplats.push_back(weightSplat(comb, jk));

        auto values = scf::ForOp::create(b, loc, hc::emitIndex(b, loc, 0),
                                         hc::emitIndex(b, loc, 4 * d),
                                         hc::emitIndex(b, loc, 4 * lanes));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(values.getBody());
        Value offset = values.getInductionVar();
        Value fValues = widen(hc::emitLoadFloats(b, loc, f, offset, lanes));
        SmallVector<Value> old;
        for (int64_t j = 0; j < mult; ++j)
          old.push_back(
              widen(hc::emitLoadFloats(b, loc, oldStart[j], offset, lanes)));
        SmallVector<Value> results;
        for (int64_t k = 0; k < mult; ++k) {
          Value sum = arith::MulFOp::create(b, loc, postSplats[k], fValues);
          for (int64_t j = 0; j < mult; ++j)
            sum = arith::AddFOp::create(
                b, loc, sum,
                arith::MulFOp::create(b, loc, combSplats[j * mult + k],
                                      old[j]));
          results.push_back(emitRoundToBf16(
              b, loc, arith::TruncFOp::create(b, loc, floats, sum)));
        }
        for (int64_t k = 0; k < mult; ++k)
          LLVM::StoreOp::create(b, loc, results[k],
                                emitByteOffset(b, loc, newStart[k], offset),
                                /*alignment=*/4);
      });
}

} // namespace kf::codegen
