//===- HcPreKernel.h - The compiled kf.hc_pre -----------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) computing a hyper-connection
// site's pre-mix for each token, one work item per token, with the golden's
// arithmetic (docs/engine.md, "Op kernels"; the golden's hcPre): from the
// token's mult streams of D floats, the (2 + mult)·mult mixes of the site's
// fn weights and the streams' inverse RMS, the input weights pre (a
// sigmoid), the post weights (twice a sigmoid) and the Sinkhorn-normalised
// mult × mult combination, then x = bf16(Σ_j pre_j · stream_j). Operands:
// the streams [T, mult, D], fn [(2 + mult)·mult, mult·D], base
// [(2 + mult)·mult], scale [3] (the three weights read whole), x [T, D],
// post [T, mult], comb [T, mult, mult].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_HCPREKERNEL_H
#define KF_CODEGEN_HCPREKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

/// The most streams a hyper-connection kernel takes: the kernels unroll
/// their per-stream arithmetic ((2 + mult)·mult dot products, a mult × mult
/// Sinkhorn); the model has 4.
constexpr int64_t kMaxHcMult = 8;

struct HcPreKernelSpec {
  int64_t mult = 0;          ///< streams, 1 to kMaxHcMult
  int64_t d = 0;             ///< floats per stream, a positive multiple of 16
  int64_t sinkhornIters = 0; ///< column normalisations, at least 1
  float eps = 0.0f;          ///< after the sigmoid, the softmax and in Sinkhorn
  float normEps = 0.0f;      ///< the streams' inverse RMS's

  /// "kf_hc_pre_m4_d4096_s20_e358637bd_n358637bd" (the epsilons' bits in
  /// hex).
  std::string getSymbolName() const;
  /// "hc_pre kernel [mult = 4, D = 4096, sinkhorn = 20, eps = 1e-06,
  /// norm_eps = 1e-06]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless mult is in [1, kMaxHcMult],
/// D a positive multiple of 16, the iterations at least 1 and both
/// epsilons finite and non-negative.
llvm::Error verifyHcPreKernel(const HcPreKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildHcPreKernel(mlir::ModuleOp module, const HcPreKernelSpec &spec,
                 const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_HCPREKERNEL_H
