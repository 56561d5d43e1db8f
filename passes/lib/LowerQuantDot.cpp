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

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFLOWERQUANTDOT
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;
using ::kf::target::TargetInfo;

/// The name of the module holding the kernels.
constexpr StringLiteral kKernelsModule = "kernels";

/// The kernel spec of a linear's decision; an error when no emitter builds
/// it for `target` (verifyMatmulKernel's one line).
FailureOr<codegen::MatmulKernelSpec> getMatmulSpec(LinearOp linear,
                                                   KernelAttr kernel,
                                                   const TargetInfo &target,
                                                   std::string &reason) {
  std::optional<codegen::KernelIsa> isa =
      codegen::lookupIsa(stringifyKernelIsa(kernel.getIsa()));
  if (!isa) {
    reason =
        ("no emitter for isa " + stringifyKernelIsa(kernel.getIsa())).str();
    return failure();
  }
  QWeightType weight = linear.getWeight().getType();
  codegen::MatmulKernelSpec spec;
  spec.format = static_cast<::kf::Format>(weight.getFormat());
  spec.isa = *isa;
  spec.rows = kernel.getRows();
  spec.k = weight.getCols();
  spec.n = weight.getRows();
  // A static M needs no wider tile than its decomposition has.
  spec.maxCols = kernel.getWidestColumnTile();
  spec.roundToBf16 = linear.getPrecision() == Precision::bf16;
  if (llvm::Error err = codegen::verifyMatmulKernel(spec, target)) {
    reason = llvm::toString(std::move(err));
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

    SmallVector<LinearOp> linears;
    module.walk([&](LinearOp linear) { linears.push_back(linear); });
    KernelModule kernels(module, target);
    for (LinearOp linear : linears)
      if (failed(lower(linear, kernels, target)))
        return signalPassFailure();
  }

  LogicalResult lower(LinearOp linear, KernelModule &kernels,
                      const TargetInfo &target) {
    SmallVector<Matmul> matmuls = getMatmuls(linear);
    KernelAttr kernel =
        getKernelOrError(linear, matmuls.front(), "kf-lower-quant-dot");
    if (!kernel)
      return failure();
    std::string reason;
    FailureOr<codegen::MatmulKernelSpec> spec =
        getMatmulSpec(linear, kernel, target, reason);
    if (failed(spec)) {
      // Left to the graph's reference path unless every matmul must run
      // compiled.
      if (!requireAll)
        return success();
      return linear.emitOpError() << "kf-lower-quant-dot: " << reason;
    }

    SymbolRefAttr matmulFn =
        kernels.getOrBuild(linear, *spec, codegen::buildMatmulKernel);
    const ::kf::Format activation = spec->getActivationFormat();
    SymbolRefAttr quantizeFn = kernels.getOrBuild(
        linear, codegen::QuantizeKernelSpec{spec->k, activation},
        codegen::buildQuantizeKernel);
    if (!matmulFn || !quantizeFn)
      return failure();

    OpBuilder b(linear);
    Location loc = linear.getLoc();
    int64_t m = linear.getInput().getType().getDimSize(0);
    auto packedType = RankedTensorType::get(
        {m, spec->getActivationColumnBytes()}, b.getI8Type());
    Value packed = QuantizeActivationsOp::create(
        b, loc, packedType, quantizeFn, linear.getInput(),
        static_cast<Format>(activation));
    auto qmatmul =
        QMatmulOp::create(b, loc, linear.getType(), matmulFn, packed,
                          linear.getWeight(), linear.getPrecisionAttr());
    qmatmul->setAttr(KfDialect::kKernelAttrName, kernel);
    linear.replaceAllUsesWith(qmatmul.getResult());
    linear.erase();
    return success();
  }
};

} // namespace
} // namespace mlir::kf
