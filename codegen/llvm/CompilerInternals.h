//===- CompilerInternals.h - Shared by Translate.cpp and Jit.cpp ----------===//

#ifndef KF_CODEGEN_LLVM_COMPILERINTERNALS_H
#define KF_CODEGEN_LLVM_COMPILERINTERNALS_H

#include "kf/Codegen/KernelCompiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace kf::codegen {

/// LLVM's machine for `target`'s triple, CPU and features, at -O3.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const target::TargetInfo &target);

/// A module holding every kernel of the set, each verified against
/// `target`; a kernel given twice is an error.
/// A top-level copy of a kernels module nested in a graph, for the
/// conversions to lower in place, its functions compiled for `cpu`.
mlir::OwningOpRef<mlir::ModuleOp> cloneKernelModule(mlir::ModuleOp kernels,
                                                    llvm::StringRef cpu);

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildKernelModule(mlir::MLIRContext &context, const KernelSet &kernels,
                  const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_LLVM_COMPILERINTERNALS_H
