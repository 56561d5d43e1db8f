//===- HcHeadKernel.h - The compiled kf.hc_head ---------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) reducing the hyper-connection
// streams to the output head's one, one work item per token, with the
// golden's arithmetic (docs/engine.md, "Op kernels"; the golden's hcHead):
// kf.hc_pre's mixes and input weights without its post weights and Sinkhorn,
// y = bf16(Σ_j pre_j · stream_j). Operands: the streams [T, mult, D], fn
// [mult, mult·D], base [mult], scale [1] (the three weights read whole),
// y [T, D].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_HCHEADKERNEL_H
#define KF_CODEGEN_HCHEADKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct HcHeadKernelSpec {
  int64_t mult = 0;     ///< streams, 1 to kMaxHcMult (kf/Codegen/HcPreKernel.h)
  int64_t d = 0;        ///< floats per stream, a positive multiple of 16
  float eps = 0.0f;     ///< added to each sigmoid
  float normEps = 0.0f; ///< the streams' inverse RMS's

  /// "kf_hc_head_m4_d4096_e358637bd_n358637bd" (the epsilons' bits in hex).
  std::string getSymbolName() const;
  /// "hc_head kernel [mult = 4, D = 4096, eps = 1e-06, norm_eps = 1e-06]",
  /// for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless mult is in [1, kMaxHcMult],
/// D a positive multiple of 16 and both epsilons finite and non-negative.
llvm::Error verifyHcHeadKernel(const HcHeadKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildHcHeadKernel(mlir::ModuleOp module, const HcHeadKernelSpec &spec,
                  const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_HCHEADKERNEL_H
