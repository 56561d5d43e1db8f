//===- MoeGateKernel.h - The compiled kf.moe_gate -------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) routing each token to k of E
// experts, as the interpreter's kf.moe_gate (the golden's routeLearned and
// routeHash) does; one work item per token (docs/engine.md, "Op kernels").
// From the token's router logits, the scores s = sqrt(softplus(logit)) in
// fp64, rounded to fp32; the experts are the top k of s + bias (learned
// routing: larger first, of equal values the lower index) or the token's row
// of the i32 table tid2eid [V, k] (hash routing); their weights s_e / Σ s ·
// route_scale, the sum in fp64 in slot order and rounded to fp32. Bit for
// bit but for the scores' fp64 exp and log1p, which are within a few fp64
// ulps of libm's (MoeGateEmitter.cpp).
//
// What the interpreter refuses, and a kernel cannot report, gives a defined
// result: a NaN biased score ranks as -inf (ties by index), so every slot
// names a distinct expert; a token id outside [0, V), or a table row naming
// an expert outside [0, E), gives the experts 0 .. k-1 with weights +0,
// reading nothing of the table past its row.
//
// Operands: the logits [T, E], then the bias [E] (learned) or the table and
// the token ids [T] (one i32 per item, hash), then the ids [T, k] (i32) and
// the weights [T, k].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_MOEGATEKERNEL_H
#define KF_CODEGEN_MOEGATEKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct MoeGateKernelSpec {
  int64_t experts = 0;     ///< E, in [1, 1024]
  int64_t k = 0;           ///< slots per token, in [1, E]
  float routeScale = 1.0f; ///< positive and finite
  /// Hash routing: tid2eid's rows V, at least 1; 0: learned routing.
  int64_t vocab = 0;

  bool isHashRouted() const { return vocab != 0; }
  /// "kf_moe_gate_e256_k6_s3fc00000",
  /// "kf_moe_gate_hash_v129280_e256_k6_s3fc00000" (the route scale's bits).
  std::string getSymbolName() const;
  /// "moe_gate kernel [learned, E = 256, k = 6, route_scale = 1.5]", for
  /// messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless E is in [1, 1024], k in
/// [1, E], the route scale positive and finite and V not negative.
llvm::Error verifyMoeGateKernel(const MoeGateKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildMoeGateKernel(mlir::ModuleOp module, const MoeGateKernelSpec &spec,
                   const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_MOEGATEKERNEL_H
