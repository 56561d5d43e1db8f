//===- MatmulSteps.h - Matmul and quantizer kernels as plan steps ---------===//
//
// A plan calls every kernel through the step ABI (kf/Codegen/StepKernel.h);
// the matmul and quantizer kernels keep their own (kf/runtime/kernel_abi.h),
// which the kernel tests and kf-bench call directly, and each gets a step
// kernel that adapts it: its work items are the quantizer's rows or the
// matmul's output rows (weight rows), its operands the kernel's pointers.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_MATMULSTEPS_H
#define KF_CODEGEN_MATMULSTEPS_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

/// The step of the quantizer `quantizer` (a function of `module`): item i
/// packs row i of K floats — at `xColumnBytes` into row i of operand 0,
/// rows `ldx` floats apart (a column slice of a wider tensor, read in
/// place) — into row i of `packedRowBytes` (operand 1). Named
/// "<quantizer>_step", with "_ldx<ldx>_at<xColumnBytes>" for a slice;
/// built once.
llvm::Expected<mlir::func::FuncOp>
getOrBuildQuantizeStep(mlir::ModuleOp module, llvm::StringRef quantizer,
                       int64_t k, int64_t ldx, int64_t xColumnBytes,
                       int64_t packedRowBytes,
                       const target::TargetInfo &target);

/// The step of the matmul kernel `matmul` (a function of `module`) writing
/// rows ldy floats apart from `yColumnBytes` on (the columns of a
/// concatenation, written in place): items [begin, end) are the output's
/// columns (the weight's rows, begin a multiple of the kernel's row group),
/// operands the packed weight, the packed activations of m rows and the
/// output. Named "<matmul>_step_ldy<ldy>", with "_at<yColumnBytes>" when
/// not 0; built once.
llvm::Expected<mlir::func::FuncOp>
getOrBuildMatmulStep(mlir::ModuleOp module, llvm::StringRef matmul, int64_t ldy,
                     int64_t yColumnBytes, const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_MATMULSTEPS_H
