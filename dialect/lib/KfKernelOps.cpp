//===- KfKernelOps.cpp - kf kernel-call ops: verifiers --------------------===//

#include "kf/Dialect/KfDialect.h"

#include "OpRules.h"

#include "kf/runtime/packed_layout.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::kf;
using namespace mlir::kf::rules;

//===----------------------------------------------------------------------===//
// Kernel ops
//===----------------------------------------------------------------------===//

namespace {

/// Whether `format` has packed activations (the kernels' Q8_0, Q8_K, BF16 or
/// F32).
bool hasPackedActivations(::kf::Format format) {
  return format == ::kf::Format::Q8_0 || format == ::kf::Format::Q8_K ||
         ::kf::isFloatFormat(format);
}

/// The K a row of packed `format` activations must be a multiple of: the
/// block, or 1 for the float formats (their last block is padded).
int64_t packedActivationGranule(::kf::Format format) {
  return ::kf::isFloatFormat(format)
             ? 1
             : ::kf::activationLayout(format).blockElems;
}

/// Checks that `weight` is a weight whose format takes packed activations,
/// with K a multiple of their block; returns the bytes of one packed
/// activation row.
FailureOr<int64_t> checkPackedWeight(Operation *op, QWeightType weight) {
  if (failed(checkFloatWeight(op, "weight", weight)))
    return failure();
  auto format = static_cast<::kf::Format>(weight.getFormat());
  ::kf::Format activation = ::kf::formatInfo(format).dotFormat;
  if (!hasPackedActivations(activation))
    return op->emitOpError()
           << "weight format " << stringifyFormat(weight.getFormat())
           << " takes " << ::kf::formatInfo(activation).name
           << " activations, expected a format that takes q8_0, q8_k, bf16 "
              "or f32 (the packed activations' blocks)";
  int64_t k = weight.getCols();
  int64_t block = packedActivationGranule(activation);
  if (k % block != 0)
    return op->emitOpError()
           << "weight has K = " << k << ", expected a multiple of " << block;
  return ::kf::packedActivationColumnBytes(activation, k);
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

/// What every matmul kernel call checks: a packed weight, one matrix or an
/// expert stack (`stack`), a #kf.kernel decision, and an input its kernel
/// reads. Returns the decision and the input's innermost size; failure after
/// reporting what is wrong.
FailureOr<std::pair<KernelAttr, int64_t>>
checkKernelCall(Operation *op, Value input, QWeightType weight, bool stack) {
  if (stack && !weight.isExpertStack())
    return op->emitOpError()
           << "weight must be an [E, N, K] expert stack, got " << weight;
  if (!stack && weight.getShape().size() != 2)
    return op->emitOpError()
           << "weight must be a single [N, K] matrix, got " << weight;
  FailureOr<int64_t> rowBytes = checkPackedWeight(op, weight);
  if (failed(rowBytes))
    return failure();
  KernelAttr kernel = getKernelDecision(op);
  if (!kernel)
    return failure();
  FailureOr<int64_t> row =
      checkKernelInput(op, input, weight, *rowBytes, kernel);
  if (failed(row))
    return failure();
  return std::pair{kernel, *row};
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
  packed.back() = ::kf::packedActivationColumnBytes(format, *k);
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
  FailureOr<std::pair<KernelAttr, int64_t>> call =
      checkKernelCall(*this, getInput(), weight, /*stack=*/false);
  if (failed(call))
    return failure();
  auto [kernel, row] = *call;
  FailureOr<int64_t> n = staticDim(*this, "result", getResult(), 1);
  if (failed(n) ||
      failed(checkShape(*this, "input", getInput().getType(), {kAny, row})) ||
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
  FailureOr<std::pair<KernelAttr, int64_t>> call =
      checkKernelCall(*this, getInput(), weight, /*stack=*/true);
  if (failed(call))
    return failure();
  auto [kernel, row] = *call;
  auto ids = getIds().getType();
  if (ids.getRank() != 2)
    return emitOpError() << "ids must be [T, k], got " << ids;
  int64_t t = ids.getDimSize(0), k = ids.getDimSize(1);
  auto input = getInput().getType();
  if (input.getRank() == 2) {
    if (failed(checkShape(*this, "input", input, {t, row})))
      return failure();
  } else if (failed(checkShape(*this, "input", input, {t, k, row}))) {
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

//===----------------------------------------------------------------------===//
// Step ops
//===----------------------------------------------------------------------===//

LogicalResult StepOp::verify() {
  const int64_t items = getItemsPerRow();
  if (items < 1)
    return emitOpError() << "must have at least one item per row, got "
                         << items;
  if (getResults().empty() && !llvm::any_of(getInputs(), [](Value v) {
        return isa<WindowCacheType, CompressedCacheType>(v.getType());
      }))
    return emitOpError() << "must have a result or a cache";
  llvm::SmallDenseSet<int64_t> whole;
  for (int64_t i : getWhole()) {
    if (i < 0 || i >= static_cast<int64_t>(getInputs().size()))
      return emitOpError() << "whole input " << i << " is not an input";
    if (!isa<RankedTensorType>(getInputs()[i].getType()))
      return emitOpError() << "whole input " << i << " must be a tensor";
    if (!whole.insert(i).second)
      return emitOpError() << "whole input " << i << " is listed twice";
  }
  // Every tensor has a leading token dimension and static others; those
  // read or written item by item share the leading dimension, and their
  // rows split into whole items.
  std::optional<int64_t> rows;
  auto check = [&](StringRef what, size_t i, Type type,
                   bool perItem) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (tensor.getRank() < 1)
      return emitOpError() << what << " " << i
                           << " must have a leading token dimension";
    if (!tensor.getElementType().isIntOrFloat())
      return emitOpError() << what << " " << i
                           << " must hold integers or floats, got " << tensor;
    int64_t elements = 1;
    for (int64_t d = 1; d < tensor.getRank(); ++d) {
      if (tensor.isDynamicDim(d))
        return emitOpError() << what << " " << i
                             << ": only the leading dimension may be dynamic, "
                                "got "
                             << tensor;
      elements *= tensor.getDimSize(d);
    }
    if (!perItem)
      return success();
    if (!rows)
      rows = tensor.getDimSize(0);
    else if (*rows != tensor.getDimSize(0))
      return emitOpError() << what << " " << i
                           << " has another leading dimension than the "
                              "first tensor read or written item by item";
    int64_t bits = elements * tensor.getElementTypeBitWidth();
    if (bits % (8 * items) != 0)
      return emitOpError() << what << " " << i << ": a row of " << bits
                           << " bits does not split into " << items
                           << " items of whole bytes";
    return success();
  };
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(check("input", i, input.getType(), !whole.contains(i))))
      return failure();
  for (auto [i, result] : llvm::enumerate(getResults()))
    if (failed(check("result", i, result.getType(), /*perItem=*/true)))
      return failure();
  return success();
}

void StepOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &input : getInputsMutable())
    if (isa<WindowCacheType, CompressedCacheType>(input.get().getType())) {
      effects.emplace_back(MemoryEffects::Read::get(), &input);
      effects.emplace_back(MemoryEffects::Write::get(), &input);
    }
}

LogicalResult StepOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Builder b(getContext());
  Type ptr = LLVM::LLVMPointerType::get(getContext());
  Type i64 = b.getI64Type();
  return verifyKernelCallee(*this, getCallee(),
                            b.getFunctionType({ptr, i64, i64, i64}, {}),
                            "step kernel", symbolTable);
}
