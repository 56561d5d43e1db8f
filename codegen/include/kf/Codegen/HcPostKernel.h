//===- HcPostKernel.h - The compiled kf.hc_post ---------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) combining a sublayer's output back
// into the hyper-connection streams, one work item per token, with the
// golden's arithmetic (docs/engine.md, "Op kernels"; the golden's hcPost):
// new stream k = bf16(post_k · f + Σ_j comb[j][k] · stream_j), summed in
// fp64 in that order. Operands: the sublayer output f [T, D], the streams
// [T, mult, D], post [T, mult], comb [T, mult, mult] (kf.hc_pre's), the new
// streams [T, mult, D] (which may be the old ones).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_HCPOSTKERNEL_H
#define KF_CODEGEN_HCPOSTKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct HcPostKernelSpec {
  int64_t mult = 0; ///< streams, 1 to kMaxHcMult (kf/Codegen/HcPreKernel.h)
  int64_t d = 0;    ///< floats per stream, a positive multiple of 16

  /// "kf_hc_post_m4_d4096".
  std::string getSymbolName() const;
  /// "hc_post kernel [mult = 4, D = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless mult is in [1, kMaxHcMult]
/// and D a positive multiple of 16.
llvm::Error verifyHcPostKernel(const HcPostKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildHcPostKernel(mlir::ModuleOp module, const HcPostKernelSpec &spec,
                  const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_HCPOSTKERNEL_H
