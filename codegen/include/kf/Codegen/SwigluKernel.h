//===- SwigluKernel.h - The compiled kf.swiglu ----------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) computing an expert's clamped
// SwiGLU on rows of F floats, one work item per row, with the model's
// arithmetic (docs/engine.md, "Op kernels"): bf16(silu(min(g, limit)) ·
// clamp(u, -limit, limit) · weight), silu in fp64 rounded to fp32. Operands:
// the gate rows, the up rows, the routing weights (when weighted: one float
// per row), the output rows (which may be the gate's or the up's).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_SWIGLUKERNEL_H
#define KF_CODEGEN_SWIGLUKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct SwigluKernelSpec {
  int64_t f = 0;      ///< floats per row, a positive multiple of 16
  float limit = 0.0f; ///< the gate's upper bound and the up's clamp
  /// A routing weight per row scales the result (the routed experts'
  /// [T, k, F] rows); without one the weight is 1 (the shared expert).
  bool weighted = true;

  /// "kf_swiglu_f2048_w_l41200000" (limit's bits in hex).
  std::string getSymbolName() const;
  /// "swiglu kernel [F = 2048, weighted, limit = 10]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless F is a positive multiple of
/// 16 and the limit finite and positive.
llvm::Error verifySwigluKernel(const SwigluKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildSwigluKernel(mlir::ModuleOp module, const SwigluKernelSpec &spec,
                  const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_SWIGLUKERNEL_H
