//===- KfOps.cpp - kf graph ops -------------------------------------------===//

#include "kf/Dialect/KfDialect.h"

#include "kf/runtime/packed_layout.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::kf;

/// A format written as its bare name (`q8_k`), as the format table spells
/// it, in op syntax such as `format(q8_k)`.
static ParseResult parseFormatName(OpAsmParser &parser, FormatAttr &format) {
  StringRef name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<Format> value = symbolizeFormat(name);
  if (!value)
    return parser.emitError(loc) << "unknown format '" << name << "'";
  format = FormatAttr::get(parser.getContext(), *value);
  return success();
}

static void printFormatName(OpAsmPrinter &printer, Operation *,
                            FormatAttr format) {
  printer << stringifyFormat(format.getValue());
}

#define GET_OP_CLASSES
#include "kf/Dialect/KfOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Rules shared by the graph ops
//===----------------------------------------------------------------------===//

namespace {

constexpr int64_t kAny = ShapedType::kDynamic;

/// Two dimensions agree when either is dynamic or both are equal.
bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

void printShape(InFlightDiagnostic &diag, ArrayRef<int64_t> shape) {
  diag << "[";
  llvm::interleaveComma(shape, diag, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      diag << "?";
    else
      diag << d;
  });
  diag << "]";
}

/// Checks that `actual` has the rank of `expected` and agrees with it in
/// every dimension (kAny, or a dynamic dimension of `actual`, agrees with
/// anything). Reports "<what> must be [..], got [..]".
LogicalResult checkShape(Operation *op, StringRef what,
                         ArrayRef<int64_t> actual, ArrayRef<int64_t> expected) {
  bool ok = actual.size() == expected.size();
  for (size_t i = 0; ok && i < actual.size(); ++i)
    ok = dimsAgree(actual[i], expected[i]);
  if (ok)
    return success();
  InFlightDiagnostic diag = op->emitOpError() << what << " must be ";
  printShape(diag, expected);
  diag << ", got ";
  printShape(diag, actual);
  return diag;
}

LogicalResult checkShape(Operation *op, StringRef what, Type type,
                         ArrayRef<int64_t> expected) {
  if (auto weight = dyn_cast<QWeightType>(type))
    return checkShape(op, what, weight.getShape(), expected);
  return checkShape(op, what, cast<ShapedType>(type).getShape(), expected);
}

/// The static size of dimension `dim` of a ranked tensor, or failure with
/// "<what> needs a static dimension <dim>".
FailureOr<int64_t> staticDim(Operation *op, StringRef what, Value value,
                             unsigned dim) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() <= dim || type.isDynamicDim(dim))
    return op->emitOpError()
           << what << " needs a static dimension " << dim << ", got " << type;
  return type.getDimSize(dim);
}

/// The token count of `value`'s leading dimension (kAny when dynamic).
int64_t tokens(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getRank() == 0 ? kAny : type.getDimSize(0);
}

/// Epsilons, scales and limits: zero, a negative value or a NaN is a mistake
/// of whoever built the graph, never something a kernel should run with.
LogicalResult checkPositive(Operation *op, StringRef what,
                            const APFloat &value) {
  float v = value.convertToFloat();
  if (v > 0.0f && std::isfinite(v))
    return success();
  return op->emitOpError() << what << " must be positive and finite, got " << v;
}

/// Integer tables (tid2eid) are looked up by index; no kernel decodes them
/// into floats.
LogicalResult checkFloatWeight(Operation *op, StringRef what,
                               QWeightType type) {
  if (!type.isIntegerTable())
    return success();
  return op->emitOpError() << what << " must be a float weight, got " << type;
}

/// Parameter vectors (norm weights, biases, sinks, hyper-connection bases
/// and scales) are f32 in the model file, and the kernels read them as such
/// rather than decoding a block format per element.
LogicalResult checkF32Vector(Operation *op, StringRef what, QWeightType type) {
  if (type.getFormat() == Format::F32)
    return success();
  return op->emitOpError() << what << " must be an f32 vector, got " << type;
}

} // namespace

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
// Weights and state
//===----------------------------------------------------------------------===//

namespace {

template <typename DeclOp>
LogicalResult verifyDeclaredType(Operation *op, FlatSymbolRefAttr name,
                                 Type type, SymbolTableCollection &symbols,
                                 StringRef declKind) {
  auto decl = symbols.lookupNearestSymbolFrom<DeclOp>(op, name);
  if (!decl)
    return op->emitOpError() << "'" << name.getValue() << "' is not a "
                             << declKind << " of the module";
  if (decl.getType() != type)
    return op->emitOpError()
           << "result type " << type << " differs from the declared "
           << decl.getType() << " of '" << name.getValue() << "'";
  return success();
}

} // namespace

LogicalResult
GetWeightOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDeclaredType<WeightOp>(*this, getNameAttr(), getType(),
                                      symbolTable, "kf.weight");
}

LogicalResult GetCacheOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDeclaredType<CacheOp>(*this, getNameAttr(), getType(),
                                     symbolTable, "kf.cache");
}

LogicalResult CacheAppendOp::verify() {
  WindowCacheType cache = getCache().getType();
  int64_t t = tokens(getRows());
  if (failed(checkShape(*this, "rows", getRows().getType(),
                        {kAny, cache.getDim()})) ||
      failed(checkShape(*this, "positions", getPositions().getType(), {t})))
    return failure();
  return success();
}

LogicalResult CacheReadOp::verify() {
  if (auto ring = dyn_cast<WindowCacheType>(getCache().getType()))
    return checkShape(*this, "result", getType(),
                      {ring.getRows(), ring.getDim()});
  auto compressed = cast<CompressedCacheType>(getCache().getType());
  return checkShape(*this, "result", getType(), {kAny, compressed.getDim()});
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

/// The static innermost dimension of a tensor of rank `minRank`..`maxRank`.
FailureOr<int64_t> innermost(Operation *op, StringRef what, Value value,
                             int64_t minRank, int64_t maxRank) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() < minRank || type.getRank() > maxRank)
    return op->emitOpError()
           << what << " must have rank " << minRank
           << (minRank == maxRank ? "" : " to ")
           << (minRank == maxRank ? std::string() : std::to_string(maxRank))
           << ", got " << type;
  return staticDim(op, what, value, type.getRank() - 1);
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
  FailureOr<int64_t> d = staticDim(*this, "input", getInput(), 1);
  if (failed(d) ||
      failed(checkShape(*this, "input", getInput().getType(), {kAny, *d})) ||
      failed(checkPositions(*this, getPositions(), getInput())))
    return failure();
  int64_t width = cache.getStateWidth();
  if (failed(checkShape(*this, "kv", getKv().getType(), {width, *d})) ||
      failed(checkShape(*this, "gate", getGate().getType(), {width, *d})) ||
      failed(checkShape(*this, "ape", getApe().getType(),
                        {cache.getRatio(), width})) ||
      failed(checkShape(*this, "norm", getNorm().getType(), {cache.getDim()})))
    return failure();
  if (failed(checkFloatWeight(*this, "kv", getKv().getType())) ||
      failed(checkFloatWeight(*this, "gate", getGate().getType())) ||
      failed(checkF32Vector(*this, "norm", getNorm().getType())))
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

//===----------------------------------------------------------------------===//
// Kernel ops
//===----------------------------------------------------------------------===//

namespace {

/// Whether `format` has packed activations (the kernels' Q8_0, Q8_K, BF16 or
/// F32).
bool hasPackedActivations(::kf::Format format) {
  return format == ::kf::Format::Q8_0 || format == ::kf::Format::Q8_K ||
         ::kf::is_float_format(format);
}

/// The K a row of packed `format` activations must be a multiple of: the
/// block, or 1 for the float formats (their last block is padded).
int64_t packedActivationGranule(::kf::Format format) {
  return ::kf::is_float_format(format)
             ? 1
             : ::kf::activation_layout(format).block_elems;
}

/// Checks that `weight` is a weight whose format takes packed activations,
/// with K a multiple of their block; returns the bytes of one packed
/// activation row.
FailureOr<int64_t> checkPackedWeight(Operation *op, QWeightType weight) {
  if (failed(checkFloatWeight(op, "weight", weight)))
    return failure();
  auto format = static_cast<::kf::Format>(weight.getFormat());
  ::kf::Format activation = ::kf::format_info(format).dot_format;
  if (!hasPackedActivations(activation))
    return op->emitOpError()
           << "weight format " << stringifyFormat(weight.getFormat())
           << " takes " << ::kf::format_info(activation).name
           << " activations, expected a format that takes q8_0, q8_k, bf16 "
              "or f32 (the packed activations' blocks)";
  int64_t k = weight.getCols();
  int64_t block = packedActivationGranule(activation);
  if (k % block != 0)
    return op->emitOpError()
           << "weight has K = " << k << ", expected a multiple of " << block;
  return ::kf::packed_activation_column_bytes(activation, k);
}

/// The kf.kernel decisions a kernel op was built from, or null after
/// reporting that they are missing.
KernelAttr getKernelDecision(Operation *op) {
  auto kernel = op->getAttrOfType<KernelAttr>(KfDialect::kKernelAttrName);
  if (!kernel)
    op->emitOpError() << "needs the " << KfDialect::kKernelAttrName
                      << " decisions its kernel was built from";
  return kernel;
}

/// The innermost size a kernel op's input must have: K fp32 activations
/// when its kernel quantizes them itself (quantize = fused), else a packed
/// row of `rowBytes` bytes; failure after reporting the wrong element type.
FailureOr<int64_t> checkKernelInput(Operation *op, Value input,
                                    QWeightType weight, int64_t rowBytes,
                                    KernelAttr kernel) {
  const bool fused = kernel.isQuantizeFused();
  Type element = cast<ShapedType>(input.getType()).getElementType();
  if (fused != element.isF32())
    return op->emitOpError()
           << "input must be "
           << (fused ? "the fp32 activations its kernel quantizes "
                       "(quantize = fused)"
                     : "packed activations (i8), its kernel's quantize being "
                       "separate")
           << ", got " << input.getType();
  return fused ? weight.getCols() : rowBytes;
}

/// The kernel ABI of kf.qmatmul and kf.expert_qmatmul's callees.
FunctionType getMatmulKernelType(MLIRContext *context) {
  Builder b(context);
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  return b.getFunctionType({ptr, ptr, ptr, i64, i64, i64, i64}, {});
}

/// Checks that `callee` names a function whose type is `expected`, the ABI
/// of the kernel kind `what`.
LogicalResult verifyKernelCallee(Operation *op, SymbolRefAttr callee,
                                 FunctionType expected, StringRef what,
                                 SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(op, callee);
  if (!fn)
    return op->emitOpError() << "callee " << callee << " is not a function";
  if (fn.getFunctionType() != expected)
    return op->emitOpError()
           << "callee " << callee << " has type " << fn.getFunctionType()
           << ", expected the " << what << " ABI " << expected;
  return success();
}

} // namespace

LogicalResult QuantizeActivationsOp::verify() {
  FailureOr<int64_t> k = innermost(*this, "input", getInput(), 2, 3);
  if (failed(k))
    return failure();
  auto format = static_cast<::kf::Format>(getFormat());
  if (!hasPackedActivations(format))
    return emitOpError() << "format " << stringifyFormat(getFormat())
                         << " has no packed activations, expected q8_0, "
                            "q8_k, bf16 or f32";
  int64_t block = packedActivationGranule(format);
  if (*k % block != 0)
    return emitOpError() << "input has K = " << *k
                         << " columns, expected a multiple of " << block;
  SmallVector<int64_t> packed(getInput().getType().getShape());
  packed.back() = ::kf::packed_activation_column_bytes(format, *k);
  return checkShape(*this, "result", getType(), packed);
}

LogicalResult
QuantizeActivationsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Builder b(getContext());
  Type ptr = LLVM::LLVMPointerType::get(getContext());
  Type i64 = b.getI64Type();
  return verifyKernelCallee(*this, getCallee(),
                            b.getFunctionType({ptr, i64, ptr, i64}, {}),
                            "quantizer", symbolTable);
}

LogicalResult QMatmulOp::verify() {
  QWeightType weight = getWeight().getType();
  if (weight.getShape().size() != 2)
    return emitOpError() << "weight must be a single [N, K] matrix, got "
                         << weight;
  FailureOr<int64_t> rowBytes = checkPackedWeight(*this, weight);
  if (failed(rowBytes))
    return failure();
  KernelAttr kernel = getKernelDecision(*this);
  if (!kernel)
    return failure();
  FailureOr<int64_t> row =
      checkKernelInput(*this, getInput(), weight, *rowBytes, kernel);
  FailureOr<int64_t> n = staticDim(*this, "result", getResult(), 1);
  if (failed(row) || failed(n) ||
      failed(checkShape(*this, "input", getInput().getType(), {kAny, *row})) ||
      failed(checkShape(*this, "result", getType(), {tokens(getInput()), *n})))
    return failure();
  int64_t offset = getRowOffset();
  if (offset < 0 || offset + *n > weight.getRows())
    return emitOpError() << "rows " << offset << " .. " << offset + *n - 1
                         << " of the result are not rows of the weight "
                         << weight;
  if (offset % kernel.getRows() != 0)
    return emitOpError() << "row_offset " << offset
                         << " is not a multiple of the layout's row group "
                         << kernel.getRows();
  return success();
}

LogicalResult QMatmulOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyKernelCallee(*this, getCallee(),
                            getMatmulKernelType(getContext()), "matmul kernel",
                            symbolTable);
}

LogicalResult ExpertQMatmulOp::verify() {
  QWeightType weight = getWeight().getType();
  if (!weight.isExpertStack())
    return emitOpError() << "weight must be an [E, N, K] expert stack, got "
                         << weight;
  FailureOr<int64_t> rowBytes = checkPackedWeight(*this, weight);
  if (failed(rowBytes))
    return failure();
  KernelAttr kernel = getKernelDecision(*this);
  if (!kernel)
    return failure();
  FailureOr<int64_t> row =
      checkKernelInput(*this, getInput(), weight, *rowBytes, kernel);
  if (failed(row))
    return failure();
  auto ids = getIds().getType();
  if (ids.getRank() != 2)
    return emitOpError() << "ids must be [T, k], got " << ids;
  int64_t t = ids.getDimSize(0), k = ids.getDimSize(1);
  auto input = getInput().getType();
  if (input.getRank() == 2) {
    if (failed(checkShape(*this, "input", input, {t, *row})))
      return failure();
  } else if (failed(checkShape(*this, "input", input, {t, k, *row}))) {
    return failure();
  }
  return checkShape(*this, "result", getType(), {t, k, weight.getRows()});
}

LogicalResult
ExpertQMatmulOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyKernelCallee(*this, getCallee(),
                            getMatmulKernelType(getContext()), "matmul kernel",
                            symbolTable);
}
