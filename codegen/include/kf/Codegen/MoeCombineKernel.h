//===- MoeCombineKernel.h - The compiled kf.moe_combine -------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) ending a MoE layer: for each
// token, its k routed slots' rows of D floats summed in fp64 in slot order,
// then the shared expert's row added, the sum rounded to fp32 and then to
// bf16, as the interpreter's kf.moe_combine (the golden's moe) does, bit for
// bit; one work item per token (docs/engine.md, "Op kernels"). Operands:
// the routed rows [T, k, D], the shared expert's rows [T, D], the output
// rows [T, D] (which may be the shared expert's).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_MOECOMBINEKERNEL_H
#define KF_CODEGEN_MOECOMBINEKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct MoeCombineKernelSpec {
  int64_t k = 0; ///< routed slots per token, at least 1
  int64_t d = 0; ///< floats per row, a positive multiple of 16

  /// "kf_moe_combine_k6_d4096".
  std::string getSymbolName() const;
  /// "moe_combine kernel [k = 6, D = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless k is at least 1 and D a
/// positive multiple of 16.
llvm::Error verifyMoeCombineKernel(const MoeCombineKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildMoeCombineKernel(mlir::ModuleOp module, const MoeCombineKernelSpec &spec,
                      const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_MOECOMBINEKERNEL_H
