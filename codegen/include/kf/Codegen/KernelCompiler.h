//===- KernelCompiler.h - Kernels to native code: ORC JIT and objects -----===//
//
// The last step of docs/codegen.md's pipeline: a module of kernels lowered to
// the LLVM dialect with the standard conversions, translated to LLVM IR for a
// target's triple, CPU and features, optimized, and then either JIT-compiled
// in process (the host) or written as an object file (any named target,
// AArch64 included). Every entry point checks the kernels against the target
// first (verifyMatmulKernel) and returns a one-line error; nothing the target
// cannot run reaches LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_KERNELCOMPILER_H
#define KF_CODEGEN_KERNELCOMPILER_H

#include "kf/Codegen/MatmulKernel.h"
#include "kf/Codegen/QuantizeKernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

/// The kernels of one compilation (one module, one object file).
struct KernelSet {
  std::vector<MatmulKernelSpec> matmuls;
  std::vector<QuantizeKernelSpec> quantizers;
};

/// A kernel compiled in process. `fn` stays valid while this object (or
/// another kernel from the same JIT) lives.
struct JitKernel {
  MatmulKernelFn fn = nullptr;
  MatmulKernelSpec spec;
  /// What the kernel reads: pack weights to this (kf::pack_weights) and
  /// activations with kf::pack_activations or a JitQuantizer.
  kf::PackedLayout weightLayout;
  std::shared_ptr<llvm::orc::LLJIT> jit;
};

struct JitQuantizer {
  QuantizeKernelFn fn = nullptr;
  QuantizeKernelSpec spec;
  std::shared_ptr<llvm::orc::LLJIT> jit;
};

/// JIT-compiles the kernel of `spec` for `target`, which must be able to run
/// on this machine (its architecture, and features the host has). Code is
/// generated for the target's CPU when it is this machine's or a generic ISA
/// level (x86-64-v3, ...), else for this machine's CPU with the target's
/// features: a specific CPU's name implies extensions beyond them.
llvm::Expected<JitKernel> jitMatmul(const MatmulKernelSpec &spec,
                                    const target::TargetInfo &target);
/// Several kernels in one module and one JIT: one LLVM compilation.
llvm::Expected<std::vector<JitKernel>>
jitMatmuls(llvm::ArrayRef<MatmulKernelSpec> specs,
           const target::TargetInfo &target);
llvm::Expected<JitQuantizer> jitQuantizer(const QuantizeKernelSpec &spec,
                                          const target::TargetInfo &target);

/// The kernels a lowered graph calls, compiled in process: the functions of
/// the `module @kernels` that --kf-lower-quant-dot builds into it.
class JitKernelModule {
public:
  explicit JitKernelModule(std::shared_ptr<llvm::orc::LLJIT> jit)
      : jit(std::move(jit)) {}
  /// The address of the kernel `symbol` (a function of the module).
  llvm::Expected<void *> lookup(llvm::StringRef symbol) const;

private:
  std::shared_ptr<llvm::orc::LLJIT> jit;
};

/// JIT-compiles the kernels module `kernels` (nested in a graph, which is
/// left unchanged) for `target`, which must run on this machine; the code is
/// generated for the CPU jitMatmul would choose.
llvm::Expected<JitKernelModule>
jitKernelModule(mlir::ModuleOp kernels, const target::TargetInfo &target);

/// Writes the kernels for `target` (any target LLVM was built for) as one
/// relocatable object file at `path`; nothing is written on an error.
llvm::Error emitObject(const KernelSet &kernels,
                       const target::TargetInfo &target, llvm::StringRef path);
llvm::Error emitObject(llvm::ArrayRef<MatmulKernelSpec> matmuls,
                       const target::TargetInfo &target, llvm::StringRef path);
/// The same for a kernels module nested in a graph (left unchanged), built
/// for `target` by --kf-lower-quant-dot.
llvm::Error emitObject(mlir::ModuleOp kernels, const target::TargetInfo &target,
                       llvm::StringRef path);
/// The kernels module as a shared library for `target` at `path`, linked
/// by ld.lld from the object emitObject writes (nothing is written on an
/// error); the runtime loads it without LLVM. Every symbol must resolve
/// inside the library.
llvm::Error emitSharedLibrary(mlir::ModuleOp kernels,
                              const target::TargetInfo &target,
                              llvm::StringRef path);
/// A compiled plan as one artifact: the shared library of `kernels` (as
/// emitSharedLibrary writes it) that also exports `plan`, the plan's bytes
/// (kf/runtime/plan_file.h), as the symbols of kf/runtime/plan_abi.h, for
/// the runtime's kf::PlanLibrary to load.
llvm::Error emitPlanLibrary(mlir::ModuleOp kernels,
                            llvm::ArrayRef<uint8_t> plan,
                            const target::TargetInfo &target,
                            llvm::StringRef path);
/// The same code as assembly text, for inspection.
llvm::Expected<std::string> emitAssembly(const KernelSet &kernels,
                                         const target::TargetInfo &target);
llvm::Expected<std::string>
emitAssembly(llvm::ArrayRef<MatmulKernelSpec> matmuls,
             const target::TargetInfo &target);
/// The same for a kernels module (left unchanged), built for `target`.
llvm::Expected<std::string> emitAssembly(mlir::ModuleOp kernels,
                                         const target::TargetInfo &target);

/// Lowers a module built by the emitters (func/scf/arith/vector/llvm) to the
/// LLVM dialect, translates it for `target` and optimizes it (O3 with the
/// target's machine). For callers that assemble their own modules.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateKernels(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                 const target::TargetInfo &target);

/// Fails, naming the feature, unless code for `target` runs on this machine.
llvm::Error checkRunsOnHost(const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELCOMPILER_H
