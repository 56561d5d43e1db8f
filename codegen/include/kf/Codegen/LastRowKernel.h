//===- LastRowKernel.h - A copy of a run's last token row -----------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) copying the last of the run's m
// token rows of a tensor into a one-row tensor: the prefill's hidden state
// of its last token, which the head reads (docs/engine.md, "Building a
// plan"). One work item. Operands: the rows [T, ...], the row [1, ...].
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_LASTROWKERNEL_H
#define KF_CODEGEN_LASTROWKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct LastRowKernelSpec {
  int64_t rowBytes = 0; ///< bytes of a row, a positive multiple of 4

  /// "kf_last_row_b4096".
  std::string getSymbolName() const;
  /// "last_row kernel [4096 bytes]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the row is a positive
/// multiple of 4 bytes.
llvm::Error verifyLastRowKernel(const LastRowKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildLastRowKernel(mlir::ModuleOp module, const LastRowKernelSpec &spec,
                   const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_LASTROWKERNEL_H
