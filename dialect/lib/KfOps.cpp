//===- KfOps.cpp - kf ops: generated classes and shared rules -------------===//

#include "kf/Dialect/KfDialect.h"

#include "OpRules.h"

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
// Rules shared by the ops (OpRules.h)
//===----------------------------------------------------------------------===//

namespace mlir::kf::rules {

/// Two dimensions agree when either is dynamic or both are equal.
bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static void printShape(InFlightDiagnostic &diag, ArrayRef<int64_t> shape) {
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

} // namespace mlir::kf::rules
