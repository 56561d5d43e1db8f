//===- LowerQuantDot.cpp - Matmuls to compiled quantize and dot kernels ---===//
//
// Each decided kf.linear becomes a kf.quantize_activations (fp32 rows into
// packed int8 blocks) and a kf.qmatmul (packed blocks times the quantized
// weight), both calling kernels the emitters build from the op's #kf.kernel
// into the module's nested `module @kernels`. The kernels live in the IR, so
// what is printed is what the JIT and the object writer compile, and two
// matmuls of one shape and decision share one function.
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "kf/Codegen/MatmulEmitter.h"
#include "kf/runtime/packed_layout.h"
#include "llvm/Support/FormatVariadic.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFLOWERQUANTDOT
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;
using ::kf::target::TargetInfo;

/// The name of the module holding the kernels.
constexpr StringLiteral kKernelsModule = "kernels";

/// The kernel spec of a matmul's decision (for kf.grouped_linear, one
/// group's: N its rows, K its columns); an error when no emitter builds it
/// for `target` (verifyMatmulKernel's one line).
FailureOr<codegen::MatmulKernelSpec>
getMatmulSpec(const Matmul &matmul, KernelAttr kernel, Precision precision,
              const TargetInfo &target, std::string &reason) {
  std::optional<codegen::KernelIsa> isa =
      codegen::lookupIsa(stringifyKernelIsa(kernel.getIsa()));
  if (!isa) {
    reason =
        ("no emitter for isa " + stringifyKernelIsa(kernel.getIsa())).str();
    return failure();
  }
  codegen::MatmulKernelSpec spec;
  spec.format = static_cast<::kf::Format>(matmul.weight.getFormat());
  spec.isa = *isa;
  spec.rows = kernel.getRows();
  spec.k = matmul.k;
  spec.n = matmul.n;
  // A static M needs no wider tile than its decomposition has.
  spec.maxCols = kernel.getWidestColumnTile();
  spec.roundToBf16 = precision == Precision::bf16;
  // The cache blocks --kf-block-caches decided, which the kernel follows
  // when a call has more columns than one tile; a static M of one tile
  // never does.
  if (kernel.hasDynamicColumns() || kernel.getColumnTiles().size() > 1) {
    spec.l1K = kernel.getL1K().value_or(0);
    spec.l2Rows = kernel.getL2Rows().value_or(0);
  }
  if (llvm::Error err = codegen::verifyMatmulKernel(spec, target)) {
    reason = llvm::toString(std::move(err));
    return failure();
  }
  // A group's kernel reads the group's rows in place, from a packed row
  // group's start.
  if (matmul.n != matmul.weight.getRows() && matmul.n % spec.rows != 0) {
    reason = llvm::formatv("a group's {0} rows are not a multiple of the "
                           "layout's row group {1}",
                           matmul.n, spec.rows)
                 .str();
    return failure();
  }
  return spec;
}

class KernelModule {
public:
  KernelModule(ModuleOp parent, const TargetInfo &target)
      : parent(parent), target(target) {}

  /// A reference to the function `name` in the kernels module, built by
  /// `build` unless it exists; null after reporting an error on `op`.
  template <typename Spec>
  SymbolRefAttr
  getOrBuild(Operation *op, const Spec &spec,
             llvm::Expected<func::FuncOp> (*build)(ModuleOp, const Spec &,
                                                   const TargetInfo &)) {
    ModuleOp kernels = getModule(op);
    if (!kernels)
      return {};
    std::string name = spec.getSymbolName();
    if (!kernels.lookupSymbol(name)) {
      llvm::Expected<func::FuncOp> fn = build(kernels, spec, target);
      if (!fn) {
        op->emitOpError() << "kf-lower-quant-dot: "
                          << llvm::toString(fn.takeError());
        return {};
      }
    }
    MLIRContext *context = op->getContext();
    return SymbolRefAttr::get(StringAttr::get(context, kKernelsModule),
                              {FlatSymbolRefAttr::get(context, name)});
  }

private:
  ModuleOp getModule(Operation *op) {
    if (kernels)
      return kernels;
    Operation *existing = SymbolTable::lookupSymbolIn(parent, kKernelsModule);
    if (existing) {
      kernels = dyn_cast<ModuleOp>(existing);
      if (!kernels)
        op->emitOpError() << "kf-lower-quant-dot: the symbol @"
                          << kKernelsModule << " is taken by a '"
                          << existing->getName()
                          << "', expected the kernels module";
      return kernels;
    }
    OpBuilder b = OpBuilder::atBlockEnd(parent.getBody());
    kernels = ModuleOp::create(b, parent.getLoc(), kKernelsModule);
    return kernels;
  }

  ModuleOp parent;
  const TargetInfo &target;
  ModuleOp kernels;
};

struct LowerQuantDotPass : impl::KfLowerQuantDotBase<LowerQuantDotPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-lower-quant-dot");
    if (!targetAttr)
      return signalPassFailure();
    TargetInfo target = targetAttr.getTargetInfo();

    SmallVector<Operation *> matmuls;
    module.walk([&](Operation *op) {
      if (isa<LinearOp, GroupedLinearOp>(op))
        matmuls.push_back(op);
    });
    KernelModule kernels(module, target);
    for (Operation *op : matmuls)
      if (failed(lower(op, kernels, target)))
        return signalPassFailure();
  }

  /// Lowers a kf.linear, or a kf.grouped_linear as one kf.qmatmul per group
  /// (each on its slice of the input and its rows of the weight, by one
  /// kernel) whose results are concatenated.
  LogicalResult lower(Operation *op, KernelModule &kernels,
                      const TargetInfo &target) {
    Matmul matmul = getMatmuls(op).front();
    KernelAttr kernel = getKernelOrError(op, matmul, "kf-lower-quant-dot");
    if (!kernel)
      return failure();
    auto grouped = dyn_cast<GroupedLinearOp>(op);
    PrecisionAttr precision = grouped ? grouped.getPrecisionAttr()
                                      : cast<LinearOp>(op).getPrecisionAttr();
    std::string reason;
    FailureOr<codegen::MatmulKernelSpec> spec =
        getMatmulSpec(matmul, kernel, precision.getValue(), target, reason);
    if (failed(spec)) {
      // Left to the graph's reference path unless every matmul must run
      // compiled.
      if (!requireAll)
        return success();
      return op->emitOpError() << "kf-lower-quant-dot: " << reason;
    }

    SymbolRefAttr matmulFn =
        kernels.getOrBuild(op, *spec, codegen::buildMatmulKernel);
    const ::kf::Format activation = spec->getActivationFormat();
    SymbolRefAttr quantizeFn =
        kernels.getOrBuild(op, codegen::QuantizeKernelSpec{spec->k, activation},
                           codegen::buildQuantizeKernel);
    if (!matmulFn || !quantizeFn)
      return failure();

    OpBuilder b(op);
    Location loc = op->getLoc();
    Value input = op->getOperand(0), weight = op->getOperand(1);
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t m = inputType.getDimSize(0);
    auto packedType = RankedTensorType::get(
        {m, spec->getActivationColumnBytes()}, b.getI8Type());
    auto resultType = RankedTensorType::get({m, spec->n}, b.getF32Type());
    auto emitGroup = [&](Value x, int64_t rowOffset) -> Value {
      Value packed = QuantizeActivationsOp::create(
          b, loc, packedType, quantizeFn, x, static_cast<Format>(activation));
      auto qmatmul =
          QMatmulOp::create(b, loc, resultType, matmulFn, packed, weight,
                            precision, b.getI64IntegerAttr(rowOffset));
      qmatmul->setAttr(KfDialect::kKernelAttrName, kernel);
      return qmatmul.getResult();
    };

    Value result;
    if (!grouped) {
      result = emitGroup(input, 0);
    } else {
      // Group g: columns g·K .. (g+1)·K − 1 of the input, rows g·N ..
      // (g+1)·N − 1 of the weight. A slice quantizes as the whole row does,
      // K being a multiple of the activation block.
      SmallVector<OpFoldResult> sizes = {
          m == ShapedType::kDynamic
              ? OpFoldResult(
                    tensor::DimOp::create(b, loc, input, 0).getResult())
              : OpFoldResult(b.getIndexAttr(m)),
          b.getIndexAttr(spec->k)};
      SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
      SmallVector<Value> groups;
      for (int64_t g = 0; g < static_cast<int64_t>(grouped.getGroups()); ++g) {
        SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                             b.getIndexAttr(g * spec->k)};
        Value slice = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({m, spec->k}, b.getF32Type()), input,
            offsets, sizes, strides);
        groups.push_back(emitGroup(slice, g * spec->n));
      }
      result = tensor::ConcatOp::create(b, loc, /*dim=*/1, groups);
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    return success();
  }
};

} // namespace
} // namespace mlir::kf
