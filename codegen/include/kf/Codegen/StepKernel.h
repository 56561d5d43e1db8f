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
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
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

/// Shorthands the op emitters build their bodies with, at one location:
/// constants, float arithmetic (on scalars or vectors), loads and stores at
/// a byte offset, and counted loops.
class KernelBuilder {
public:
  KernelBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  /// An i64 constant (offsets, counts).
  mlir::Value index(int64_t v);
  /// `type` (a float vector) with every lane `v`.
  mlir::Value splat(mlir::VectorType type, double v);
  mlir::Value add(mlir::Value l, mlir::Value r);
  mlir::Value sub(mlir::Value l, mlir::Value r);
  mlir::Value mul(mlir::Value l, mlir::Value r);
  /// A `type` at `base` + `offset` bytes, `alignment` bytes aligned.
  mlir::Value load(mlir::Type type, mlir::Value base, mlir::Value offset,
                   int64_t alignment);
  void store(mlir::Value value, mlir::Value base, mlir::Value offset,
             int64_t alignment);
  /// A loop over [from, to) by `step`, its body built by `body` at the
  /// induction variable; the insertion point stays after the loop.
  void forEach(mlir::Value from, mlir::Value to, int64_t step,
               llvm::function_ref<void(mlir::Value)> body);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// The shortest decimal that reads back as `v` ("1e-06"), for the op
/// kernels' descriptions.
std::string formatShortest(float v);

/// The address of operand `index` (an !llvm.ptr).
mlir::Value emitStepOperand(mlir::OpBuilder &b, mlir::Location loc,
                            const StepKernelArgs &args, int64_t index);

} // namespace kf::codegen

#endif // KF_CODEGEN_STEPKERNEL_H
