//===- EmbedKernel.h - The compiled kf.embed ------------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) looking up the embedding: for each
// token, row `id` of the [V, D] table decoded to fp32 as the runtime's
// reference decoder does (kf::dequantize) and rounded to bf16, as the
// interpreter's kf.embed does, bit for bit; one work item per token
// (docs/engine.md, "Op kernels"). The table is a weight read as stored (the
// plan binds the file's bytes in place), in F32, F16, BF16 or Q8_0. A token
// id outside [0, V) — which the interpreter reports as an error, and a
// kernel cannot — gives a row of zeros (+0), reading nothing of the table.
// Operands: the token ids [T] (one i32 per item), the table, the output rows
// [T, D].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_EMBEDKERNEL_H
#define KF_CODEGEN_EMBEDKERNEL_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct EmbedKernelSpec {
  kf::Format format = kf::Format::F32; ///< the table's: F32, F16, BF16, Q8_0
  int64_t vocab = 0;                   ///< the table's rows V, at least 1
  int64_t d = 0; ///< its columns: a positive multiple of 16 (Q8_0: 32)

  /// "kf_embed_q8_0_v129280_d4096".
  std::string getSymbolName() const;
  /// "embed kernel [q8_0, V = 129280, D = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the format is F32, F16,
/// BF16 or Q8_0, V at least 1 and D a positive multiple of 16 and of the
/// format's block.
llvm::Error verifyEmbedKernel(const EmbedKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildEmbedKernel(mlir::ModuleOp module, const EmbedKernelSpec &spec,
                 const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_EMBEDKERNEL_H
