//===- HcHeadEmitter.cpp - The compiled kf.hc_head ------------------------===//
//
// The golden's hcHead (hyper_connections.cpp), one token at a time but for
// the mixes, which a run's tokens share in blocks (HcMix.cpp): the mult
// mixes m of the token's streams (HcMix.h), pre_j = sigmoid(m_j · scale_0 +
// base_j) + eps (the product commutes: the golden's hcPre writes it the
// other way round, to the same float), y = bf16(Σ_j pre_j · stream_j). Every
// operation is the golden's but e^x, emitExp's, whose sigmoids equal the
// golden's for every float argument (HcPreEmitter.cpp): bit for bit.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/HcHeadKernel.h"

#include "HcMix.h"

#include "kf/Codegen/StepKernel.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kf::codegen {

std::string HcHeadKernelSpec::getSymbolName() const {
  return hc::getSymbolName("hc_head", mult, d) + "_e" + hc::getBitsHex(eps) +
         "_n" + hc::getBitsHex(normEps);
}

std::string HcHeadKernelSpec::describe() const {
  return hc::describe("hc_head", mult, d,
                      ", eps = " + formatShortest(eps) +
                          ", norm_eps = " + formatShortest(normEps));
}

llvm::Error verifyHcHeadKernel(const HcHeadKernelSpec &spec) {
  if (llvm::Error err = hc::verifyShape(spec.describe(), spec.mult, spec.d))
    return err;
  return hc::verifyEpsilons(spec.describe(), spec.eps, spec.normEps);
}

llvm::Expected<func::FuncOp>
buildHcHeadKernel(ModuleOp module, const HcHeadKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifyHcHeadKernel(spec))
    return std::move(err);
  const int64_t width = spec.mult * spec.d;
  return hc::buildMixKernel(
      module, spec.getSymbolName(), target, /*operandCount=*/5,
      {width, spec.mult, spec.normEps},
      [&](OpBuilder &b, Location loc, ArrayRef<Value> operands, Value token,
          ArrayRef<Value> m) {
        // Operands: streams, fn, base, scale, y.
        Value pre = hc::emitPreWeights(
            b, loc, m, operands[2], hc::emitLoadFloat(b, loc, operands[3], 0),
            spec.eps);
        hc::emitWeightedStreamSum(
            b, loc, hc::emitTokenRow(b, loc, operands[0], token, width), pre,
            spec.d, hc::emitTokenRow(b, loc, operands[4], token, spec.d));
      });
}

} // namespace kf::codegen
