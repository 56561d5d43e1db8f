//===- LowerOps.cpp - Graph ops to compiled step kernels ------------------===//
//
// Each graph op with an op emitter becomes a kf.step calling the kernel the
// emitter builds for its instance into the module's `module @kernels`
// (docs/engine.md, "Op kernels"). The step's work items follow the
// kernel's: for kf.rms_norm one per innermost row, so a [T, H, D] input has
// H items per token row.
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "QuantKernels.h"

#include "kf/Codegen/RmsNormKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFLOWEROPS
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;

/// The rows of the innermost dimension per leading (token) row of `type`.
int64_t innerRowsPerRow(RankedTensorType type) {
  int64_t rows = 1;
  for (int64_t d = 1; d + 1 < type.getRank(); ++d)
    rows *= type.getDimSize(d);
  return rows;
}

struct LowerOpsPass : impl::KfLowerOpsBase<LowerOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-lower-ops");
    if (!targetAttr)
      return signalPassFailure();
    ::kf::target::TargetInfo target = targetAttr.getTargetInfo();
    KernelModule kernels(module, target, "kf-lower-ops");

    SmallVector<RmsNormOp> norms;
    module.walk([&](RmsNormOp op) { norms.push_back(op); });
    for (RmsNormOp op : norms)
      if (failed(lower(op, kernels)))
        return signalPassFailure();
  }

  LogicalResult lower(RmsNormOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Value weight = op.getWeight();
    if (weight && !isa<QWeightType>(weight.getType()))
      return op.emitOpError()
             << "kf-lower-ops: a weight that is not a !kf.qweight has no "
                "buffer in a plan (a constant weight of ones is folded away "
                "by -canonicalize)";
    codegen::RmsNormKernelSpec spec;
    spec.d = type.getDimSize(type.getRank() - 1);
    spec.eps = op.getEps().convertToFloat();
    spec.weighted = static_cast<bool>(weight);
    spec.bf16Compute = op.getCompute() == Precision::bf16;
    SymbolRefAttr callee =
        kernels.getOrBuild(op, spec, codegen::buildRmsNormKernel);
    if (!callee)
      return failure();
    OpBuilder b(op);
    SmallVector<Value, 2> inputs = {op.getInput()};
    if (weight)
      inputs.push_back(weight);
    auto step = StepOp::create(b, op.getLoc(), TypeRange{type}, callee, inputs,
                               innerRowsPerRow(type), ArrayRef<int64_t>{});
    op.getResult().replaceAllUsesWith(step.getResults()[0]);
    op.erase();
    return success();
  }
};

} // namespace
} // namespace mlir::kf
