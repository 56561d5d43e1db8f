//===- IndexerScoresKernel.h - The compiled kf.indexer_scores -------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) scoring the compressed entries
// for the lightning indexer (model §4.4), bit for bit as the interpreter's
// kf.indexer_scores (docs/engine.md, "Op kernels"): for token t and entry
// c, w[h] = bf16(weights[t, h] · scale) in fp32, then the golden's
// indexerScores at Precision::Model: each q[t, h] · keys[c] a sequential
// fp64 sum over d rounded to fp32 and bf16, ReLU'd (std::max(x, 0)),
// times w[h] in fp32 and rounded to bf16, summed over the heads in head
// order in fp64, rounded to fp32 and bf16. Only the entries the token sees,
// c < visible = (positions[t] + 1) / ratio, are computed; the others are
// -inf (which kf.indexer_topk never reads).
//
// Operands: the query (f32 [T, H, d]), the weights (f32 [T, H]), the keys
// (f32 [E, d], rows past the visible ones may hold anything), the positions
// (i64 [T]) and the scores (f32 [T, E]). Work items: E / entryBlock per
// token, item t · (E / entryBlock) + b writing scores[t, b · entryBlock ..
// (b + 1) · entryBlock). An item's cost grows with the entries its token
// sees, so a plan should let the threads claim them (WorkSplit::Claim).
//
// Cost: H · d fp64 multiply-adds per visible entry (an FMA where the target
// has one: the product of two floats is exact in fp64, so it rounds as the
// golden's product and sum do), 16 entries to a vector (a lane per entry:
// no sum is reordered); per 16 entries, their keys are transposed and
// widened once for all H heads (16 · d values), and per call and token the
// query is widened once (H · d values) into the kernel's stack.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_INDEXERSCORESKERNEL_H
#define KF_CODEGEN_INDEXERSCORESKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct IndexerScoresKernelSpec {
  int64_t heads = 0;   ///< H, at least 1
  int64_t dim = 0;     ///< d, a positive multiple of 16
  int64_t entries = 0; ///< E, the keys' capacity, in [1, 2^31 - 1]
  float scale = 0.0f;  ///< the weights' factor, finite
  int64_t ratio = 0;   ///< tokens per compressed entry, at least 1
  /// Entries per work item, dividing E (defaultEntryBlock's choice).
  int64_t entryBlock = 0;

  /// A block dividing E: the largest multiple of 16 up to 64 that divides
  /// it, else its largest divisor in [16, 64], else the smallest above 64
  /// (E itself for E <= 64 or prime): items of whole vectors where E allows,
  /// small enough that a decode step's one token splits into many.
  static int64_t defaultEntryBlock(int64_t entries);
  /// E / entryBlock: the work items of a token.
  int64_t getItemsPerToken() const;
  /// "kf_indexer_scores_h64_d128_e262144_r4_b64_s3c3504f3" (the scale's
  /// bits in hex).
  std::string getSymbolName() const;
  /// "indexer_scores kernel [H = 64, d = 128, E = 262144, scale =
  /// 0.011048543, ratio = 4, block = 64]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless H >= 1, d is a positive
/// multiple of 16, E is in [1, 2^31 - 1], the ratio is at least 1, the block
/// divides E, the scale is finite and the kernel's stack (the widened query,
/// H · d doubles, and 16 transposed keys) fits in 1 MiB.
llvm::Error verifyIndexerScoresKernel(const IndexerScoresKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildIndexerScoresKernel(mlir::ModuleOp module,
                         const IndexerScoresKernelSpec &spec,
                         const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_INDEXERSCORESKERNEL_H
