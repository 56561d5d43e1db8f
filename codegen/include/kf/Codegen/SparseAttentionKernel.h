//===- SparseAttentionKernel.h - The compiled kf.sparse_attention ---------===//
//
// A step kernel (kf/Codegen/StepKernel.h) of the attention with a sink over
// listed rows of a window bank and of compressed entries, with the golden's
// arithmetic (reference::sparseAttention at Precision::Model, called as the
// interpreter's kf.sparse_attention calls it), bit for bit: per head, the
// logits scale · fp32(q · k) (each dot a sequential fp64 sum over d), their
// softmax with the head's sink (the sum in fp64 in key order), the
// probabilities rounded to bf16, and out = bf16(fp32(Σ_j p_j · k_j)), summed
// in fp64 in key order (docs/engine.md, "Op kernels").
//
// A work item is one token's group of headsPerItem heads: each key row the
// token attends to serves all the heads of the group, as key and as value
// (read once for the logits, and for the output once per pass of up to 8
// heads; SparseAttentionEmitter.cpp). It takes a stack scratch of
// getSparseAttentionScratchBytes (109 KiB for the full model). Operands, in
// this order: the queries [T, H, d]; the window bank, rows of d floats (the
// call's fresh rows or a ring: window index i addresses row i); the window
// indices [T, windowWidth] (i32); when entryWidth > 0, the compressed entries,
// rows of d floats, and the entry indices [T, entryWidth] (i32, index c
// addresses entry row c); the sinks [H] (a weight); the result [T, H, d]. An
// index of -1 is padding, skipped wherever it appears; the others must lie
// inside their bank (the kernel does not check them). The keys are the window's
// columns in order, then the entries' in order, as the interpreter lists them.
// Item i is token i / (H / headsPerItem) and its heads (i mod (H /
// headsPerItem)) · headsPerItem onwards; it writes only their rows of the
// result.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_SPARSEATTENTIONKERNEL_H
#define KF_CODEGEN_SPARSEATTENTIONKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct SparseAttentionKernelSpec {
  int64_t heads = 0;        ///< H, at least 1
  int64_t dim = 0;          ///< d, floats per head and bank row, a positive
                            ///< multiple of 16
  int64_t windowWidth = 0;  ///< columns of the window indices, at least 0
  int64_t entryWidth = 0;   ///< columns of the entry indices; 0: no entries
                            ///< operands
  float scale = 0.0f;       ///< the logits' factor (kf.sparse_attention's)
  int64_t headsPerItem = 1; ///< heads of one work item, dividing H

  /// The heads per item a lowering should choose for H heads: a divisor of H
  /// of at most 8, and at most H / 2 where H > 1, so that a decode step (one
  /// token) has at least two items for two threads while each key row read
  /// serves up to 8 heads (the full model's H = 64: 8; the tiny model's
  /// H = 8: 4).
  static int64_t defaultHeadsPerItem(int64_t heads);

  /// Work items per token row: H / headsPerItem.
  int64_t getItemsPerToken() const { return heads / headsPerItem; }

  /// "kf_sparse_attention_h64_d512_w128_e512_g8_s3d3504f3" (g: heads per
  /// item; s: the scale's bits in hex).
  std::string getSymbolName() const;
  /// "sparse_attention kernel [H = 64, d = 512, window = 128, entries = 512,
  /// heads per item = 8, scale = 0.044194173]", for messages.
  std::string describe() const;
};

/// The bytes of stack scratch the kernel of `spec` allocates (its key list,
/// scores, and a transposed block of keys); verifySparseAttentionKernel
/// bounds it.
int64_t getSparseAttentionScratchBytes(const SparseAttentionKernelSpec &spec);

/// Fails, in one line naming the kernel, unless H is positive, d a positive
/// multiple of 16, the widths not negative, headsPerItem a positive divisor
/// of H, and the stack scratch at most 4 MiB.
llvm::Error verifySparseAttentionKernel(const SparseAttentionKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildSparseAttentionKernel(mlir::ModuleOp module,
                           const SparseAttentionKernelSpec &spec,
                           const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_SPARSEATTENTIONKERNEL_H
