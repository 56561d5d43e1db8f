//===- HcExpandKernel.h - The compiled kf.hc_expand -----------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) entering the hyper-connections:
// each token's hidden state of D floats copied into its `mult` streams, bit
// for bit, one work item per token (docs/engine.md, "Op kernels"). Operands:
// the input rows [T, D], the streams [T, mult, D].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_HCEXPANDKERNEL_H
#define KF_CODEGEN_HCEXPANDKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct HcExpandKernelSpec {
  int64_t mult = 0; ///< streams, 1 to kMaxHcMult (kf/Codegen/HcPreKernel.h)
  int64_t d = 0;    ///< floats per stream, a positive multiple of 16

  /// "kf_hc_expand_m4_d4096".
  std::string getSymbolName() const;
  /// "hc_expand kernel [mult = 4, D = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless mult is in [1, kMaxHcMult]
/// and D a positive multiple of 16.
llvm::Error verifyHcExpandKernel(const HcExpandKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildHcExpandKernel(mlir::ModuleOp module, const HcExpandKernelSpec &spec,
                    const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_HCEXPANDKERNEL_H
