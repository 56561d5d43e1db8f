//===- HadamardKernel.h - The compiled kf.hadamard ------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) applying the Walsh-Hadamard
// transform (natural order) to rows of n floats, one work item per row, with
// the model's arithmetic (docs/engine.md, "Op kernels"): y = bf16(fp32(H x ·
// n^-1/2)), the sums in fp64 by a fast transform (n log n butterflies), as
// the golden's hadamard computes them in fp64 one row of H at a time.
// Operands: the input rows, the output rows (which may be the input's).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_HADAMARDKERNEL_H
#define KF_CODEGEN_HADAMARDKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct HadamardKernelSpec {
  /// Floats per row, a power of two up to kMaxN.
  int64_t n = 0;

  /// The longest row: the kernel keeps a row's fp64 sums on the stack
  /// (8 bytes a value, 32 KiB here).
  static constexpr int64_t kMaxN = 4096;

  /// "kf_hadamard_n128".
  std::string getSymbolName() const;
  /// "hadamard kernel [n = 128]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless n is a power of two no larger
/// than HadamardKernelSpec::kMaxN.
llvm::Error verifyHadamardKernel(const HadamardKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildHadamardKernel(mlir::ModuleOp module, const HadamardKernelSpec &spec,
                    const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_HADAMARDKERNEL_H
