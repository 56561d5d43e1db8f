//===- InitAll.h - Everything the kf tools register -------------*- C++ -*-===//
//
// The dialects a kf graph may contain and the passes the tools expose, in one
// place so kf-opt and kf-compile accept the same inputs.
//
//===----------------------------------------------------------------------===//

#ifndef KF_PASSES_INITALL_H
#define KF_PASSES_INITALL_H

#include "kf/Dialect/KfDialect.h"
#include "kf/Dialect/Plan/PlanDialect.h"
#include "kf/Passes/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::kf {

/// The graph's dialects, the plan's, and those of the kernels
/// --kf-lower-quant-dot builds into it.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<KfDialect, kf_plan::KfPlanDialect, arith::ArithDialect,
                  func::FuncDialect, tensor::TensorDialect, LLVM::LLVMDialect,
                  scf::SCFDialect, vector::VectorDialect>();
}

/// The kf passes and the upstream ones kf pipelines use.
inline void registerAllPasses() {
  registerKfPasses();
  registerPlanPipeline();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
}

} // namespace mlir::kf

#endif // KF_PASSES_INITALL_H
