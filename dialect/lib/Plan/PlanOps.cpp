//===- PlanOps.cpp - kf_plan ops: verifiers and the runtime's form --------===//

#include "kf/Dialect/Plan/PlanDialect.h"
#include "kf/runtime/packing.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::kf_plan;

/// A step's split as its bare keyword: `blocks(16)`, not `#kf_plan...`.
static ParseResult parseWorkSplit(OpAsmParser &parser, WorkSplitAttr &split) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<WorkSplit> value = symbolizeWorkSplit(keyword);
  if (!value)
    return parser.emitError(loc)
           << "expected blocks, claim or single, got '" << keyword << "'";
  split = WorkSplitAttr::get(parser.getContext(), *value);
  return success();
}

static void printWorkSplit(OpAsmPrinter &printer, Operation *,
                           WorkSplitAttr split) {
  printer << stringifyWorkSplit(split.getValue());
}

#define GET_OP_CLASSES
#include "kf/Dialect/Plan/PlanOps.cpp.inc"

/// A step's #kf_plan.operand list as the runtime's.
static std::vector<::kf::PlanOperand> getRuntimeOperands(ArrayAttr operands) {
  std::vector<::kf::PlanOperand> runtime;
  for (Attribute a : operands) {
    auto operand = cast<OperandAttr>(a);
    runtime.push_back({static_cast<::kf::OperandKind>(operand.getKind()),
                       static_cast<uint32_t>(operand.getIndex()),
                       operand.getOffset(),
                       {operand.getFixed(), operand.getPerRow()}});
  }
  return runtime;
}

::kf::Plan mlir::kf_plan::getRuntimePlan(PlanOp plan) {
  ::kf::Plan runtime;
  runtime.name = plan.getSymName().str();
  if (kf::TargetAttr target = kf::TargetAttr::lookup(plan)) {
    ::kf::target::TargetInfo info = target.getTargetInfo();
    runtime.target = info.name;
    for (::kf::target::Feature f : ::kf::target::allFeatures())
      if (info.has(f))
        runtime.features.push_back(::kf::target::getFeatureName(f).str());
  }
  runtime.maxRows = static_cast<int64_t>(plan.getMaxRows());
  runtime.arenaBytes = static_cast<int64_t>(plan.getArenaBytes());
  runtime.stateBytes = static_cast<int64_t>(plan.getStateBytes());
  runtime.maxContext = static_cast<int64_t>(plan.getMaxContext());
  llvm::MapVector<StringRef, uint32_t> kernels;
  for (Operation &op : plan.getBody().front()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      runtime.inputs.push_back({buffer.getName().str(),
                                {static_cast<int64_t>(buffer.getFixed()),
                                 static_cast<int64_t>(buffer.getPerRow())}});
    } else if (auto weight = dyn_cast<WeightOp>(op)) {
      auto type = cast<kf::QWeightType>(weight.getType());
      ::kf::PlanWeight w;
      w.name = weight.getName().str();
      w.format = static_cast<::kf::Format>(type.getFormat());
      w.shape.assign(type.getShape().begin(), type.getShape().end());
      if (std::optional<StringRef> layout = weight.getLayout())
        w.layout = ::kf::packedLayoutNamed(*layout);
      runtime.weights.push_back(std::move(w));
    } else if (auto cache = dyn_cast<CacheOp>(op)) {
      runtime.caches.push_back({cache.getName().str(),
                                static_cast<int64_t>(cache.getOffset()),
                                static_cast<int64_t>(cache.getBytes())});
    } else if (auto experts = dyn_cast<ExpertsOp>(op)) {
      ::kf::PlanStep s;
      s.name = experts.getName().str();
      StringRef kernel = experts.getCallee().getLeafReference().getValue();
      s.kernel = kernels.insert({kernel, kernels.size()}).first->second;
      s.operands = getRuntimeOperands(experts.getOperands());
      s.kind = ::kf::StepKind::Experts;
      s.split = ::kf::WorkSplit::Claim;
      s.items = {static_cast<int64_t>(experts.getRows()), 0};
      s.group = static_cast<int64_t>(experts.getRowsPerItem());
      s.barrierBefore = experts.getBarrier();
      s.experts = {static_cast<int64_t>(experts.getExperts()),
                   static_cast<int64_t>(experts.getSlots()),
                   static_cast<int64_t>(experts.getRows()),
                   experts.getRowPerSlot(),
                   static_cast<int64_t>(experts.getXRowBytes()),
                   static_cast<int64_t>(experts.getExpertBytes())};
      runtime.steps.push_back(std::move(s));
    } else if (auto step = dyn_cast<StepOp>(op)) {
      ::kf::PlanStep s;
      s.name = step.getName().str();
      StringRef kernel = step.getCallee().getLeafReference().getValue();
      s.kernel = kernels.insert({kernel, kernels.size()}).first->second;
      s.operands = getRuntimeOperands(step.getOperands());
      s.items = {static_cast<int64_t>(step.getItemsFixed()),
                 static_cast<int64_t>(step.getItemsPerRow())};
      s.split = static_cast<::kf::WorkSplit>(step.getSplit());
      s.group = static_cast<int64_t>(step.getGroup());
      s.barrierBefore = step.getBarrier();
      s.rows = static_cast<int64_t>(step.getRows());
      runtime.steps.push_back(std::move(s));
    }
  }
  for (auto &[name, index] : kernels)
    runtime.kernels.push_back(name.str());
  return runtime;
}

LogicalResult PlanOp::verify() {
  for (Operation &op : getBody().front()) {
    if (!isa<BufferOp, WeightOp, CacheOp, StepOp, ExpertsOp>(op))
      return op.emitOpError()
             << "is not a buffer, weight, cache or step of a plan";
  }
  // Run buffers and weights come first, so that an index is a position.
  bool steps = false;
  for (Operation &op : getBody().front()) {
    if (isa<StepOp, ExpertsOp>(op))
      steps = true;
    else if (steps)
      return op.emitOpError() << "must come before the plan's steps";
  }
  // Indices the runtime's 32-bit ones hold, then the runtime's own checks,
  // so that a plan that verifies loads.
  for (Operation &op : getBody().front()) {
    auto operands = op.getAttrOfType<ArrayAttr>("operands");
    if (!operands)
      continue;
    for (Attribute a : operands) {
      int64_t index = cast<OperandAttr>(a).getIndex();
      if (index < 0 || index > INT32_MAX)
        return op.emitOpError() << "operand index " << index << " out of range";
    }
  }
  for (WeightOp weight : getBody().front().getOps<WeightOp>()) {
    std::optional<StringRef> name = weight.getLayout();
    if (!name)
      continue;
    std::optional<::kf::PackedLayout> layout = ::kf::packedLayoutNamed(*name);
    if (!layout || !::kf::checkLayout(*layout).ok())
      return weight.emitOpError()
             << "layout '" << *name << "' is not one the runtime packs";
  }
  ::kf::Plan runtime = getRuntimePlan(*this);
  if (absl::Status s = runtime.validate(); !s.ok())
    return emitOpError() << std::string(s.message());
  return success();
}

/// Checks that `callee` names a function whose type is `abi`, the ABI of
/// the kernel kind `what`.
static LogicalResult verifyCallee(Operation *op, SymbolRefAttr callee,
                                  FunctionType abi, StringRef what,
                                  SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(op, callee);
  if (!fn)
    return op->emitOpError() << "callee " << callee << " is not a function";
  if (fn.getFunctionType() != abi)
    return op->emitOpError()
           << "callee " << callee << " has type " << fn.getFunctionType()
           << ", expected the " << what << " ABI " << abi;
  return success();
}

LogicalResult ExpertsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Builder b(getContext());
  Type ptr = LLVM::LLVMPointerType::get(getContext());
  Type i64 = b.getI64Type();
  return verifyCallee(
      *this, getCallee(),
      b.getFunctionType({ptr, ptr, ptr, i64, i64, i64, i64}, {}),
      "matmul kernel", symbolTable);
}

LogicalResult StepOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Builder b(getContext());
  Type ptr = LLVM::LLVMPointerType::get(getContext());
  Type i64 = b.getI64Type();
  return verifyCallee(*this, getCallee(),
                      b.getFunctionType({ptr, i64, i64, i64}, {}),
                      "step kernel", symbolTable);
}
