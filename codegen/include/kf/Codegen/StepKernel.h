//===- StepKernel.h - The entry of a plan's step kernels ------------------===//
//
// Every op of a compiled plan but the matmuls runs as a step kernel of the
// plan ABI (kf/runtime/plan_abi.h, docs/engine.md): a function of the
// step's operand addresses, the run's token rows m and a range of work
// items. The op emitters build their kernels on this entry.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_STEPKERNEL_H
#define KF_CODEGEN_STEPKERNEL_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/plan_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class Location;
class ModuleOp;
class OpBuilder;
} // namespace mlir

namespace kf::codegen {

using StepKernelFn = kf_step_fn;

/// The arguments of a step kernel's entry block.
struct StepKernelArgs {
  mlir::func::FuncOp fn;
  mlir::Value operands; ///< !llvm.ptr to the operand addresses
  mlir::Value m;        ///< i64 token rows of the run
  mlir::Value begin;    ///< i64 first work item
  mlir::Value end;      ///< i64 one past the last
};

/// Appends the step kernel `name` to `module` for `target` (as
/// createKernelFunction does), `b` set to the start of its body; the caller
/// ends it with a func.return.
StepKernelArgs createStepKernelFunction(mlir::OpBuilder &b, mlir::Location &loc,
                                        mlir::ModuleOp module,
                                        llvm::StringRef name,
                                        const target::TargetInfo &target);

/// The shortest decimal that reads back as `v` ("1e-06"), for the op
/// kernels' descriptions.
std::string formatShortest(float v);

/// The address of operand `index` (an !llvm.ptr).
mlir::Value emitStepOperand(mlir::OpBuilder &b, mlir::Location loc,
                            const StepKernelArgs &args, int64_t index);

} // namespace kf::codegen

#endif // KF_CODEGEN_STEPKERNEL_H
