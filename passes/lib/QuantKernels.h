//===- QuantKernels.h - Building the kernels of lowered matmuls -*- C++ -*-===//
//
// What --kf-lower-quant-dot needs per matmul, whatever op it came from: the
// kernel spec of its decision, the kernels built into the module's nested
// `module @kernels`, and the kernel ops that call them.
//
//===----------------------------------------------------------------------===//

#ifndef KF_PASSES_QUANTKERNELS_H
#define KF_PASSES_QUANTKERNELS_H

#include "kf/Codegen/MatmulKernel.h"
#include "kf/Dialect/KfMatmuls.h"
#include "kf/Target/TargetInfo.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kf {

/// The kernel spec of a matmul's decision (for kf.grouped_linear, one
/// group's: N its rows, K its columns; for an expert stack, one expert's);
/// failure with the reason (verifyMatmulKernel's one line) when no emitter
/// builds it for `target`.
FailureOr<::kf::codegen::MatmulKernelSpec>
getMatmulSpec(const Matmul &matmul, KernelAttr kernel, Precision precision,
              const ::kf::target::TargetInfo &target, std::string &reason);

/// The kernels one matmul calls: no quantizer when the matmul kernel
/// quantizes its activations itself (spec.fuseQuantize).
struct MatmulKernels {
  SymbolRefAttr quantize;
  SymbolRefAttr matmul;
};

/// The module's `module @kernels`, created on first use, into which kernels
/// are built once per symbol: matmuls of one shape and decision share one,
/// as do op kernels of one instance. Errors are reported on the op being
/// lowered, prefixed with the pass's flag.
class KernelModule {
public:
  KernelModule(ModuleOp parent, const ::kf::target::TargetInfo &target,
               StringRef pass)
      : parent(parent), target(target), pass(pass) {}

  /// The quantizer and matmul kernels of `spec`, built unless they exist;
  /// failure after reporting an error on `op`.
  FailureOr<MatmulKernels>
  getOrBuild(Operation *op, const ::kf::codegen::MatmulKernelSpec &spec);

  /// A reference to the kernel function `spec` names, built by `build`
  /// unless it exists; null after reporting an error on `op`.
  template <typename Spec>
  SymbolRefAttr getOrBuild(
      Operation *op, const Spec &spec,
      llvm::Expected<func::FuncOp> (*build)(ModuleOp, const Spec &,
                                            const ::kf::target::TargetInfo &)) {
    return getOrBuild(op, spec.getSymbolName(), [&](ModuleOp module) {
      return build(module, spec, target);
    });
  }

private:
  SymbolRefAttr
  getOrBuild(Operation *op, StringRef name,
             llvm::function_ref<llvm::Expected<func::FuncOp>(ModuleOp)> build);
  ModuleOp getModule(Operation *op);

  ModuleOp parent;
  const ::kf::target::TargetInfo &target;
  StringRef pass;
  ModuleOp kernels;
};

/// What the kernel of `spec` reads of the fp32 `input`: `input` itself when
/// it quantizes its activations, else a kf.quantize_activations of its
/// innermost rows by `quantizer` (the packed rows keep the input's leading
/// dimensions).
Value createKernelInput(OpBuilder &b, Location loc, Value input,
                        SymbolRefAttr quantizer,
                        const ::kf::codegen::MatmulKernelSpec &spec);

} // namespace mlir::kf

#endif // KF_PASSES_QUANTKERNELS_H
