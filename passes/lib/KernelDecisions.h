//===- KernelDecisions.h - What the kernel passes share ---------*- C++ -*-===//

#ifndef KF_PASSES_KERNELDECISIONS_H
#define KF_PASSES_KERNELDECISIONS_H

#include "kf/Dialect/KfMatmuls.h"

namespace mlir::kf {

/// The #kf.kernel of `matmul` of `op`, or null after reporting that `pass`
/// needs --kf-select-kernels to have run.
inline KernelAttr getKernelOrError(Operation *op, const Matmul &matmul,
                                   StringRef pass) {
  if (KernelAttr kernel = getKernel(op, matmul.name))
    return kernel;
  InFlightDiagnostic diag = op->emitOpError() << pass << ": no kf.kernel";
  if (!matmul.name.empty())
    diag << " for " << matmul.name;
  diag << "; run --kf-select-kernels first";
  return {};
}

/// The module's #kf.target, or null after reporting that `pass` needs
/// --kf-set-target to have run.
inline TargetAttr getTargetOrError(ModuleOp module, StringRef pass) {
  if (TargetAttr target = TargetAttr::lookup(module))
    return target;
  module.emitError() << pass
                     << ": the module has no kf.target; run --kf-set-target "
                        "first";
  return {};
}

} // namespace mlir::kf

#endif // KF_PASSES_KERNELDECISIONS_H
