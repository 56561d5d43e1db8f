//===- ArgmaxKernel.h - The compiled kf.argmax ----------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) picking the greedy token: for each
// row of V floats, the index of its largest value as an i32, the first one
// on ties, as the interpreter's kf.argmax does, bit for bit; one work item
// per row (docs/engine.md, "Op kernels"). Values compare as floats: -0 and
// +0 tie (the first wins), a NaN never wins, and a row of NaNs alone gives
// 0. Operands: the rows [T, ..., V], the indices [T, ...].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_ARGMAXKERNEL_H
#define KF_CODEGEN_ARGMAXKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct ArgmaxKernelSpec {
  int64_t v = 0; ///< floats per row, in [1, 2^31 - 1] (an index is an i32)

  /// "kf_argmax_v129280".
  std::string getSymbolName() const;
  /// "argmax kernel [V = 129280]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless V is in [1, 2^31 - 1].
llvm::Error verifyArgmaxKernel(const ArgmaxKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildArgmaxKernel(mlir::ModuleOp module, const ArgmaxKernelSpec &spec,
                  const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_ARGMAXKERNEL_H
