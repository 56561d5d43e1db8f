//===- KfGraphOps.cpp - kf graph ops: verifiers and folds -----------------===//

#include "kf/Dialect/KfDialect.h"

#include "OpRules.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kf;
using namespace mlir::kf::rules;

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  if (failed(checkPositive(*this, "eps", getEps())))
    return failure();
  auto inputType = getInput().getType();
  if (inputType.getRank() < 1)
    return emitOpError() << "input must have at least one dimension";
  if (!getWeight())
    return success();
  // The bf16 form is the model's weightless per-head scaling
  // (docs/models/deepseek_v4_model.md §4.2); no kernel applies a weight in
  // bf16 arithmetic.
  if (getCompute() == Precision::bf16)
    return emitOpError() << "compute(bf16) is the weightless scaling and "
                            "takes no weight";
  ArrayRef<int64_t> weightShape;
  if (auto qweight = dyn_cast<QWeightType>(getWeight().getType())) {
    if (failed(checkF32Vector(*this, "weight", qweight)))
      return failure();
    weightShape = qweight.getShape();
  } else {
    weightShape = cast<RankedTensorType>(getWeight().getType()).getShape();
  }
  if (weightShape.size() != 1)
    return emitOpError() << "weight must be 1-D, got rank "
                         << weightShape.size();
  int64_t inner = inputType.getShape().back();
  if (!dimsAgree(weightShape[0], inner))
    return emitOpError() << "weight has " << weightShape[0]
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
                                           Value(), op.getEpsAttr(),
                                           op.getComputeAttr());
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
  if (weightType.getShape().size() != 2)
    return emitOpError() << "weight must be a single [N, K] matrix, got "
                         << weightType;
  if (failed(checkFloatWeight(*this, "weight", weightType)))
    return failure();
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

//===----------------------------------------------------------------------===//
// Embedding and hyper-connections
//===----------------------------------------------------------------------===//

LogicalResult EmbedOp::verify() {
  QWeightType table = getTable().getType();
  if (failed(checkShape(*this, "tokens", getTokens().getType(), {kAny})) ||
      failed(checkShape(*this, "table", table, {kAny, kAny})) ||
      failed(checkFloatWeight(*this, "table", table)))
    return failure();
  return checkShape(*this, "result", getType(),
                    {tokens(getTokens()), table.getCols()});
}

LogicalResult HcExpandOp::verify() {
  auto input = getInput().getType();
  if (failed(checkShape(*this, "input", input, {kAny, kAny})))
    return failure();
  if (failed(staticDim(*this, "result", getResult(), 1)))
    return failure();
  return checkShape(*this, "result", getType(),
                    {input.getDimSize(0), kAny, input.getDimSize(1)});
}

namespace {

/// Stream count and width of a [T, mult, D] stream tensor.
FailureOr<std::pair<int64_t, int64_t>> streamShape(Operation *op, Value s) {
  if (failed(checkShape(op, "streams", s.getType(), {kAny, kAny, kAny})))
    return failure();
  FailureOr<int64_t> mult = staticDim(op, "streams", s, 1);
  FailureOr<int64_t> dim = staticDim(op, "streams", s, 2);
  if (failed(mult) || failed(dim))
    return failure();
  return std::make_pair(*mult, *dim);
}

} // namespace

LogicalResult HcPreOp::verify() {
  auto shape = streamShape(*this, getStreams());
  if (failed(shape))
    return failure();
  auto [mult, dim] = *shape;
  int64_t t = tokens(getStreams()), mixes = (2 + mult) * mult;
  if (failed(checkShape(*this, "fn", getFn().getType(), {mixes, mult * dim})) ||
      failed(checkFloatWeight(*this, "fn", getFn().getType())) ||
      failed(checkShape(*this, "base", getBase().getType(), {mixes})) ||
      failed(checkF32Vector(*this, "base", getBase().getType())) ||
      failed(checkShape(*this, "scale", getScale().getType(), {3})) ||
      failed(checkF32Vector(*this, "scale", getScale().getType())) ||
      failed(checkShape(*this, "x", getX().getType(), {t, dim})) ||
      failed(checkShape(*this, "post", getPost().getType(), {t, mult})) ||
      failed(checkShape(*this, "comb", getComb().getType(), {t, mult, mult})) ||
      failed(checkPositive(*this, "eps", getEps())) ||
      failed(checkPositive(*this, "norm_eps", getNormEps())))
    return failure();
  return success();
}

LogicalResult HcPostOp::verify() {
  auto shape = streamShape(*this, getStreams());
  if (failed(shape))
    return failure();
  auto [mult, dim] = *shape;
  int64_t t = tokens(getStreams());
  if (failed(checkShape(*this, "input", getInput().getType(), {t, dim})) ||
      failed(checkShape(*this, "post", getPost().getType(), {t, mult})) ||
      failed(checkShape(*this, "comb", getComb().getType(), {t, mult, mult})) ||
      failed(checkShape(*this, "result", getType(), {t, mult, dim})))
    return failure();
  return success();
}

LogicalResult HcHeadOp::verify() {
  auto shape = streamShape(*this, getStreams());
  if (failed(shape))
    return failure();
  auto [mult, dim] = *shape;
  if (failed(checkShape(*this, "fn", getFn().getType(), {mult, mult * dim})) ||
      failed(checkFloatWeight(*this, "fn", getFn().getType())) ||
      failed(checkShape(*this, "base", getBase().getType(), {mult})) ||
      failed(checkF32Vector(*this, "base", getBase().getType())) ||
      failed(checkShape(*this, "scale", getScale().getType(), {1})) ||
      failed(checkF32Vector(*this, "scale", getScale().getType())) ||
      failed(checkShape(*this, "result", getType(),
                        {tokens(getStreams()), dim})) ||
      failed(checkPositive(*this, "eps", getEps())) ||
      failed(checkPositive(*this, "norm_eps", getNormEps())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and elementwise transforms
//===----------------------------------------------------------------------===//

LogicalResult GroupedLinearOp::verify() {
  FailureOr<int64_t> k = staticDim(*this, "input", getInput(), 1);
  if (failed(k) ||
      failed(checkShape(*this, "input", getInput().getType(), {kAny, *k})))
    return failure();
  int64_t groups = static_cast<int64_t>(getGroups());
  if (*k % groups != 0)
    return emitOpError() << "input has K = " << *k
                         << " columns, not a multiple of " << groups
                         << " groups";
  QWeightType weight = getWeight().getType();
  if (failed(checkShape(*this, "weight", weight, {kAny, *k / groups})) ||
      failed(checkFloatWeight(*this, "weight", weight)))
    return failure();
  if (weight.getRows() % groups != 0)
    return emitOpError() << "weight has " << weight.getRows()
                         << " rows, not a multiple of " << groups << " groups";
  return checkShape(*this, "result", getType(),
                    {tokens(getInput()), weight.getRows()});
}

namespace {

/// Checks a [T] positions tensor against the leading dimension of `input`.
LogicalResult checkPositions(Operation *op, Value positions, Value input) {
  return checkShape(op, "positions", positions.getType(), {tokens(input)});
}

} // namespace

LogicalResult RopeOp::verify() {
  FailureOr<int64_t> inner = innermost(*this, "input", getInput(), 2, 3);
  if (failed(inner) ||
      failed(checkPositions(*this, getPositions(), getInput())))
    return failure();
  if (getRope().getDim() > *inner)
    return emitOpError() << "rope dim " << getRope().getDim()
                         << " exceeds the row length " << *inner;
  return success();
}

LogicalResult HadamardOp::verify() {
  FailureOr<int64_t> inner = innermost(*this, "input", getInput(), 1, 3);
  if (failed(inner))
    return failure();
  if (!llvm::isPowerOf2_64(static_cast<uint64_t>(*inner)))
    return emitOpError() << "the row length " << *inner
                         << " is not a power of two";
  return success();
}

namespace {

LogicalResult verifyQuantSim(Operation *op, Value input, uint64_t block,
                             std::optional<uint64_t> leading) {
  FailureOr<int64_t> inner = innermost(op, "input", input, 1, 3);
  if (failed(inner))
    return failure();
  int64_t span = leading ? static_cast<int64_t>(*leading) : *inner;
  if (span > *inner)
    return op->emitOpError()
           << "leading(" << span << ") exceeds the row length " << *inner;
  if (span % static_cast<int64_t>(block) != 0)
    return op->emitOpError()
           << (leading ? "leading(" : "the row length (") << span
           << ") is not a multiple of block(" << block << ")";
  return success();
}

} // namespace

LogicalResult Fp8SimOp::verify() {
  return verifyQuantSim(*this, getInput(), getBlock(), getLeading());
}

LogicalResult Fp4SimOp::verify() {
  return verifyQuantSim(*this, getInput(), getBlock(), getLeading());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult CompressOp::verify() {
  CompressedCacheType cache = getCache().getType();
  int64_t width = cache.getStateWidth();
  if (failed(
          checkShape(*this, "values", getValues().getType(), {kAny, width})) ||
      failed(checkShape(*this, "gates", getGates().getType(),
                        {tokens(getValues()), width})) ||
      failed(checkPositions(*this, getPositions(), getValues())))
    return failure();
  if (failed(checkShape(*this, "ape", getApe().getType(),
                        {cache.getRatio(), width})) ||
      failed(checkShape(*this, "norm", getNorm().getType(), {cache.getDim()})))
    return failure();
  if (failed(checkF32Vector(*this, "norm", getNorm().getType())))
    return failure();
  // The slot biases are added to fp32 scores as they are; the model file
  // holds them in f32 or bf16, never in a block format.
  Format apeFormat = getApe().getType().getFormat();
  if (apeFormat != Format::F32 && apeFormat != Format::BF16)
    return emitOpError() << "ape must be f32 or bf16, got "
                         << getApe().getType();
  if (getRope().getDim() > cache.getDim())
    return emitOpError() << "rope dim " << getRope().getDim()
                         << " exceeds the entry length " << cache.getDim();
  return checkPositive(*this, "eps", getEps());
}

LogicalResult WindowIndicesOp::verify() {
  if (failed(checkShape(*this, "positions", getPositions().getType(), {kAny})))
    return failure();
  if (getRing() && *getRing() < getWindow())
    return emitOpError() << "a ring of " << *getRing()
                         << " slots cannot hold a window of " << getWindow();
  return checkShape(
      *this, "result", getType(),
      {tokens(getPositions()), static_cast<int64_t>(getWindow())});
}

LogicalResult VisibleEntriesOp::verify() {
  if (failed(
          checkShape(*this, "positions", getPositions().getType(), {kAny})) ||
      failed(
          checkShape(*this, "entries", getEntries().getType(), {kAny, kAny})))
    return failure();
  return checkShape(*this, "result", getType(),
                    {tokens(getPositions()), tokens(getEntries())});
}

LogicalResult IndexerScoresOp::verify() {
  auto q = getQuery().getType();
  if (failed(checkShape(*this, "query", q, {kAny, kAny, kAny})))
    return failure();
  int64_t t = q.getDimSize(0), heads = q.getDimSize(1), dim = q.getDimSize(2);
  if (failed(
          checkShape(*this, "weights", getWeights().getType(), {t, heads})) ||
      failed(checkShape(*this, "keys", getKeys().getType(), {kAny, dim})) ||
      failed(checkPositive(*this, "scale", getScale())))
    return failure();
  return checkShape(*this, "result", getType(), {t, tokens(getKeys())});
}

LogicalResult IndexerTopKOp::verify() {
  auto scores = getScores().getType();
  if (failed(checkShape(*this, "scores", scores, {kAny, kAny})) ||
      failed(checkPositions(*this, getPositions(), getScores())))
    return failure();
  int64_t k = static_cast<int64_t>(getK()), entries = scores.getDimSize(1);
  int64_t picks = ShapedType::isDynamic(entries) ? kAny : std::min(k, entries);
  if (failed(checkShape(*this, "result", getType(),
                        {scores.getDimSize(0), picks})))
    return failure();
  // With the entry count unknown, min(k, E) is too, but it is never above k.
  int64_t columns = getType().getDimSize(1);
  if (!ShapedType::isDynamic(columns) && columns > k)
    return emitOpError() << "result has " << columns << " columns, more than k("
                         << k << ")";
  return success();
}

LogicalResult SparseAttentionOp::verify() {
  auto q = getQuery().getType();
  if (failed(checkShape(*this, "query", q, {kAny, kAny, kAny})))
    return failure();
  int64_t t = q.getDimSize(0), heads = q.getDimSize(1), dim = q.getDimSize(2);
  if (failed(checkShape(*this, "window", getWindow().getType(), {kAny, dim})) ||
      failed(checkShape(*this, "window indices", getWindowIndices().getType(),
                        {t, kAny})) ||
      failed(checkShape(*this, "sinks", getSinks().getType(), {heads})) ||
      failed(checkF32Vector(*this, "sinks", getSinks().getType())) ||
      failed(checkShape(*this, "result", getType(), {t, heads, dim})) ||
      failed(checkPositive(*this, "scale", getScale())))
    return failure();
  if (static_cast<bool>(getEntries()) != static_cast<bool>(getEntryIndices()))
    return emitOpError() << "entries and entry indices come together";
  if (!getEntries())
    return success();
  if (failed(
          checkShape(*this, "entries", getEntries().getType(), {kAny, dim})) ||
      failed(checkShape(*this, "entry indices", getEntryIndices().getType(),
                        {t, kAny})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

LogicalResult MoeGateOp::verify() {
  auto logits = getLogits().getType();
  if (failed(checkShape(*this, "logits", logits, {kAny, kAny})))
    return failure();
  int64_t t = logits.getDimSize(0), experts = logits.getDimSize(1);
  int64_t k = static_cast<int64_t>(getK());
  if (!ShapedType::isDynamic(experts) && k > experts)
    return emitOpError() << "k(" << k << ") exceeds the " << experts
                         << " experts";
  bool hash = static_cast<bool>(getTid2eid());
  if (hash == static_cast<bool>(getBias()))
    return emitOpError()
           << "needs exactly one of bias (learned) and hash (table) routing";
  if (hash != static_cast<bool>(getTokens()))
    return emitOpError() << (hash ? "hash routing needs the token ids"
                                  : "token ids are only for hash routing");
  if (hash) {
    if (getTid2eid().getType().getFormat() != Format::I32)
      return emitOpError() << "tid2eid must be an i32 table, got "
                           << getTid2eid().getType();
    if (failed(
            checkShape(*this, "tid2eid", getTid2eid().getType(), {kAny, k})) ||
        failed(checkShape(*this, "tokens", getTokens().getType(), {t})))
      return failure();
  } else if (failed(
                 checkShape(*this, "bias", getBias().getType(), {experts})) ||
             failed(checkF32Vector(*this, "bias", getBias().getType()))) {
    return failure();
  }
  if (failed(checkShape(*this, "ids", getIds().getType(), {t, k})) ||
      failed(checkShape(*this, "weights", getWeights().getType(), {t, k})))
    return failure();
  return checkPositive(*this, "route_scale", getRouteScale());
}

LogicalResult MoeOp::verify() {
  auto input = getInput().getType();
  FailureOr<int64_t> d = staticDim(*this, "input", getInput(), 1);
  if (failed(d) || failed(checkShape(*this, "input", input, {kAny, *d})))
    return failure();
  int64_t t = input.getDimSize(0);
  QWeightType gate = getGateExps().getType();
  if (failed(checkShape(*this, "gate experts", gate, {kAny, kAny, *d})))
    return failure();
  int64_t experts = gate.getShape()[0], ff = gate.getShape()[1];
  QWeightType sharedGate = getGateShexp().getType();
  if (failed(checkShape(*this, "shared gate", sharedGate, {kAny, *d})))
    return failure();
  int64_t sharedFf = sharedGate.getRows();
  if (failed(checkShape(*this, "ids", getIds().getType(), {t, kAny})) ||
      failed(checkShape(*this, "weights", getWeights().getType(),
                        cast<ShapedType>(getIds().getType()).getShape())) ||
      failed(checkShape(*this, "up experts", getUpExps().getType(),
                        {experts, ff, *d})) ||
      failed(checkShape(*this, "down experts", getDownExps().getType(),
                        {experts, *d, ff})) ||
      failed(checkShape(*this, "shared up", getUpShexp().getType(),
                        {sharedFf, *d})) ||
      failed(checkShape(*this, "shared down", getDownShexp().getType(),
                        {*d, sharedFf})) ||
      failed(checkShape(*this, "result", getType(), {t, *d})))
    return failure();
  std::pair<StringRef, Value> weights[] = {
      {"gate experts", getGateExps()}, {"up experts", getUpExps()},
      {"down experts", getDownExps()}, {"shared gate", getGateShexp()},
      {"shared up", getUpShexp()},     {"shared down", getDownShexp()}};
  for (auto [what, weight] : weights)
    if (failed(
            checkFloatWeight(*this, what, cast<QWeightType>(weight.getType()))))
      return failure();
  if (failed(checkPositive(*this, "limit", getLimit())) ||
      failed(checkPositive(*this, "shared_limit", getSharedLimit())))
    return failure();
  // Each linear's input is simulated in whole blocks: x (D wide) and the
  // SwiGLU outputs (F and the shared expert's width).
  if (getFp8Activations())
    for (int64_t width : {*d, ff, sharedFf})
      if (width % kFp8ActivationBlock != 0)
        return emitOpError()
               << "fp8_activations simulates blocks of " << kFp8ActivationBlock
               << ", so D, F and the shared F must be multiples "
                  "of it, got "
               << width;
  return success();
}

LogicalResult SwigluOp::verify() {
  if (Value weights = getWeights()) {
    ArrayRef<int64_t> shape = getGate().getType().getShape();
    if (shape.empty())
      return emitOpError() << "gate must have a row dimension to weight";
    if (failed(
            checkShape(*this, "weights", weights.getType(), shape.drop_back())))
      return failure();
  }
  return checkPositive(*this, "limit", getLimit());
}

LogicalResult MoeCombineOp::verify() {
  auto routed = getRouted().getType();
  if (routed.getRank() != 3)
    return emitOpError() << "routed must be [T, k, D], got " << routed;
  int64_t t = routed.getDimSize(0), d = routed.getDimSize(2);
  if (failed(checkShape(*this, "shared", getShared().getType(), {t, d})) ||
      failed(checkShape(*this, "result", getType(), {t, d})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Sampling
//===----------------------------------------------------------------------===//

LogicalResult ArgmaxOp::verify() {
  auto input = getInput().getType();
  if (input.getRank() < 1)
    return emitOpError() << "input must have at least one dimension";
  return checkShape(*this, "result", getType(), input.getShape().drop_back());
}
