//===- RmsNormKernel.h - The compiled kf.rms_norm -------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) normalising rows of D floats, one
// work item per row, with the model's arithmetic (docs/engine.md, "Op
// kernels"): the weighted norm's sum of squares in fp64, its result rounded
// to bf16; the weightless per-head scaling with every step rounded to bf16.
// Operands: the input rows, the weight (when weighted), the output rows
// (which may be the input's).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_RMSNORMKERNEL_H
#define KF_CODEGEN_RMSNORMKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct RmsNormKernelSpec {
  int64_t d = 0;    ///< floats per row, a positive multiple of 16
  float eps = 0.0f; ///< added to the mean square
  /// A weight of d floats scales the normalised row (kf.rms_norm's f32
  /// compute); without one the row is scaled alone.
  bool weighted = true;
  /// kf.rms_norm compute(bf16): every step rounded to bf16 (weightless).
  bool bf16Compute = false;

  /// "kf_rms_norm_d4096_w_e358637bd" (eps's bits in hex), "..._bf16".
  std::string getSymbolName() const;
  /// "rms_norm kernel [D = 4096, weighted, eps = 1e-06]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless D is a positive multiple of
/// 16, eps finite and non-negative, and a bf16 compute weightless.
llvm::Error verifyRmsNormKernel(const RmsNormKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildRmsNormKernel(mlir::ModuleOp module, const RmsNormKernelSpec &spec,
                   const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_RMSNORMKERNEL_H
