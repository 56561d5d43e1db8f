//===- KfOps.cpp - kf graph ops -------------------------------------------===//

#include "kf/Dialect/KfDialect.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kf;

#define GET_OP_CLASSES
#include "kf/Dialect/KfOps.cpp.inc"

namespace {

/// Two dimensions agree when either is dynamic or both are equal.
bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

} // namespace

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  float eps = getEps().convertToFloat();
  if (!(eps > 0.0f) || !std::isfinite(eps))
    return emitOpError() << "eps must be positive and finite, got " << eps;
  auto inputType = getInput().getType();
  if (inputType.getRank() < 1)
    return emitOpError() << "input must have at least one dimension";
  if (!getWeight())
    return success();
  auto weightType = getWeight().getType();
  if (weightType.getRank() != 1)
    return emitOpError() << "weight must be 1-D, got rank "
                         << weightType.getRank();
  int64_t inner = inputType.getShape().back();
  if (!dimsAgree(weightType.getDimSize(0), inner))
    return emitOpError() << "weight has " << weightType.getDimSize(0)
                         << " elements but the input's innermost dimension is "
                         << inner;
  return success();
}

namespace {

/// rms_norm(x, ones) -> rms_norm(x): a weight of all ones multiplies by one.
struct DropUnitRmsNormWeight : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    DenseFPElementsAttr weight;
    if (!op.getWeight() || !matchPattern(op.getWeight(), m_Constant(&weight)))
      return failure();
    if (!llvm::all_of(weight.getValues<APFloat>(),
                      [](const APFloat &v) { return v.isExactlyValue(1.0); }))
      return rewriter.notifyMatchFailure(op, "weight is not all ones");
    rewriter.replaceOpWithNewOp<RmsNormOp>(op, op.getType(), op.getInput(),
                                           Value(), op.getEpsAttr());
    return success();
  }
};

} // namespace

void RmsNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<DropUnitRmsNormWeight>(context);
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  auto inputType = getInput().getType();
  auto resultType = getResult().getType();
  QWeightType weightType = getWeight().getType();
  if (inputType.getRank() != 2)
    return emitOpError() << "input must be [M, K], got rank "
                         << inputType.getRank();
  if (resultType.getRank() != 2)
    return emitOpError() << "result must be [M, N], got rank "
                         << resultType.getRank();
  if (weightType.isExpertStack())
    return emitOpError()
           << "weight must be a single [N, K] matrix, got an expert stack "
           << weightType;
  int64_t k = inputType.getDimSize(1);
  if (!dimsAgree(k, weightType.getCols()))
    return emitOpError() << "input has K = " << k << " columns but the weight "
                         << weightType << " has K = " << weightType.getCols();
  if (!dimsAgree(resultType.getDimSize(0), inputType.getDimSize(0)))
    return emitOpError() << "result has M = " << resultType.getDimSize(0)
                         << " rows but the input has M = "
                         << inputType.getDimSize(0);
  if (!dimsAgree(resultType.getDimSize(1), weightType.getRows()))
    return emitOpError() << "result has N = " << resultType.getDimSize(1)
                         << " columns but the weight has N = "
                         << weightType.getRows() << " rows";
  return success();
}
