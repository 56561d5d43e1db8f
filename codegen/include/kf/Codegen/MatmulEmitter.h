//===- MatmulEmitter.h - Building kernels in MLIR -------------------------===//
//
// Builds the kernel function of a MatmulKernelSpec with the func, scf, arith,
// vector and llvm dialects: the loop nest of docs/codegen.md (row groups,
// column tiles of a run-time decomposition of m, K blocks) composed of the
// format's decode emitter and the ISA's dot emitter (kf/Codegen/Emitters.h);
// and the activation quantizer's.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_MATMULEMITTER_H
#define KF_CODEGEN_MATMULEMITTER_H

#include "kf/Codegen/MatmulKernel.h"
#include "kf/Codegen/QuantizeKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir {
class Location;
class MLIRContext;
class ModuleOp;
class OpBuilder;
class Value;
} // namespace mlir

namespace kf::codegen {

/// Loads the dialects the kernel emitters build with.
void loadKernelDialects(mlir::MLIRContext &context);

/// Appends to `module` the kernel function `name` taking `args` and returning
/// nothing, carrying `target`'s CPU and features (so that kernels for several
/// ISAs can share a module), with its entry block; `b` is set to its start
/// and `loc` to a location named after it. The kernel dialects must be
/// loaded (loadKernelDialects).
mlir::func::FuncOp createKernelFunction(mlir::OpBuilder &b, mlir::Location &loc,
                                        mlir::ModuleOp module,
                                        llvm::StringRef name,
                                        mlir::TypeRange args,
                                        const target::TargetInfo &target);

/// Appends the kernel function of `spec`, named spec.getSymbolName(), to
/// `module`, after verifyMatmulKernel(spec, target) (whose error it returns:
/// nothing is built for a target that cannot run the kernel). The function
/// takes the kernel ABI's arguments as !llvm.ptr and i64 and carries the
/// target's CPU and features, so kernels for several ISAs can share a module.
llvm::Expected<mlir::func::FuncOp>
buildMatmulKernel(mlir::ModuleOp module, const MatmulKernelSpec &spec,
                  const target::TargetInfo &target);

/// Appends the quantizer of `spec` to `module` (after verifyQuantizeKernel).
llvm::Expected<mlir::func::FuncOp>
buildQuantizeKernel(mlir::ModuleOp module, const QuantizeKernelSpec &spec,
                    const target::TargetInfo &target);

/// The quantizer's code at b's insertion point: m columns of K floats, ldx
/// apart from x, packed as `spec` says into m columns from `packed` (x and
/// packed !llvm.ptr, ldx and m i64). What buildQuantizeKernel's function
/// runs, and a fused matmul kernel's prologue.
void emitQuantizeColumns(mlir::OpBuilder &b, mlir::Location loc,
                         const QuantizeKernelSpec &spec,
                         const target::TargetInfo &target, mlir::Value x,
                         mlir::Value ldx, mlir::Value packed, mlir::Value m);

/// The IR of nextColumnTile (kf/Tiling/ColumnTiles.h): the width of the next
/// column tile for `remaining` (i64, >= 1) columns, as an i64.
mlir::Value emitNextColumnTile(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value remaining, int64_t maxCols);

} // namespace kf::codegen

#endif // KF_CODEGEN_MATMULEMITTER_H
