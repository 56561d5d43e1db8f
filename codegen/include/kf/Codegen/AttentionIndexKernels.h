//===- AttentionIndexKernels.h - The compiled attention index ops --------===//
//
// Step kernels (kf/Codegen/StepKernel.h) of the index ops that list the bank
// rows an attention query reads, each the interpreter's op bit for bit, one
// work item per token (docs/engine.md, "Op kernels"):
//
// - kf.window_indices: the rows of the sliding window, positions
//   p - window + 1 .. p, as slots of a ring of `window` rows or as rows of a
//   bank of the call's own tokens. Operands: the positions (i64 [T]), the
//   indices (i32 [T, window]).
// - kf.visible_entries: every compressed entry the query may see (HCA):
//   column c holds c where c < (p + 1) / ratio, else -1. Operands: the
//   positions (i64 [T]), the entries (f32 [E, dim], not read: only its
//   capacity E is compiled in), the indices (i32 [T, E]).
// - kf.indexer_topk: the min(k, E) entries of highest score among the
//   causal ones (c < (p + 1) / ratio), in descending order of score, ties
//   to the lower index, -1 past the causal ones: the golden's
//   indexerSelect. Operands: the scores (f32 [T, E]), the positions (i64
//   [T]), the indices (i32 [T, min(k, E)]).
//
// Positions are those of the call's tokens, consecutive, in [0, 2^31 - 1)
// (the runtime checks them; the kernels do not).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_ATTENTIONINDEXKERNELS_H
#define KF_CODEGEN_ATTENTIONINDEXKERNELS_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

//===----------------------------------------------------------------------===//
// kf.window_indices
//===----------------------------------------------------------------------===//

/// Row t of the result lists positions q = p - window + 1 .. p (p =
/// positions[t]) in ascending order, -1 for q < 0; with a ring of R slots
/// each q as its slot q mod R, without as the row q - positions[0] of a bank
/// of the call's own tokens. Without a ring a q in [0, positions[0]), which
/// such a bank does not hold (the interpreter refuses it), gives -1 too.
/// Item t reads positions[t] and, without a ring, positions[0].
struct WindowIndicesKernelSpec {
  int64_t window = 0; ///< rows of the window, in [1, 2^31 - 1]
  int64_t ring = 0;   ///< slots of a !kf.window_cache (at least window), or
                      ///< 0: the call's fresh rows

  /// "kf_window_indices_w128", "kf_window_indices_w128_r639".
  std::string getSymbolName() const;
  /// "window_indices kernel [window = 128, ring = 639]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless window is in [1, 2^31 - 1]
/// and a ring, if any, in [window, 2^31 - 1].
llvm::Error verifyWindowIndicesKernel(const WindowIndicesKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildWindowIndicesKernel(mlir::ModuleOp module,
                         const WindowIndicesKernelSpec &spec,
                         const target::TargetInfo &target);

//===----------------------------------------------------------------------===//
// kf.visible_entries
//===----------------------------------------------------------------------===//

/// Row t of the result: column c holds c where c < visible = (positions[t]
/// + 1) / ratio, else -1. The runtime guarantees E >= visible (the cache
/// holds every entry a query sees); where it is not, the row is 0 .. E - 1.
struct VisibleEntriesKernelSpec {
  int64_t entries = 0; ///< E, the entries' capacity, in [1, 2^31 - 1]
  int64_t ratio = 0;   ///< tokens per compressed entry, at least 1

  /// "kf_visible_entries_e8192_r128".
  std::string getSymbolName() const;
  /// "visible_entries kernel [E = 8192, ratio = 128]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless E is in [1, 2^31 - 1] and
/// the ratio at least 1.
llvm::Error verifyVisibleEntriesKernel(const VisibleEntriesKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildVisibleEntriesKernel(mlir::ModuleOp module,
                          const VisibleEntriesKernelSpec &spec,
                          const target::TargetInfo &target);

//===----------------------------------------------------------------------===//
// kf.indexer_topk
//===----------------------------------------------------------------------===//

/// Row t of the result: reference::indexerSelect(scores[t], visible, row)
/// with visible = min(E, (positions[t] + 1) / ratio); only scores[t, c <
/// visible] are read. A NaN score, which the interpreter refuses, ranks as
/// -inf (ties to the lower index like any other).
///
/// The kernel keeps the best entries so far in the result row itself, its
/// only working storage, sorted in the golden's order: a new entry is
/// compared with the last (the threshold; 16 at a time while none passes,
/// so the scan of the row runs at vector speed), and one that passes is
/// placed by a binary search of the row (log2 K reads of scores[row[i]])
/// and a shift of the entries after it (at most K / 16 vector moves). For
/// scores in random order about K (1 + ln(visible / K)) entries pass (3700
/// for the full model's visible = 262144, K = 512: each ~100 cycles, beside
/// the scan's 16384 vector compares of a 1 MiB row); at worst (ascending
/// scores) every entry does, visible · K / 16 vector moves.
struct IndexerTopKKernelSpec {
  int64_t entries = 0; ///< E, scores per token, in [1, 2^31 - 1]
  int64_t k = 0;       ///< picks, at least 1 (the row has min(k, E))
  int64_t ratio = 0;   ///< tokens per compressed entry, at least 1

  /// min(k, E): the result's columns.
  int64_t getPicks() const;
  /// "kf_indexer_topk_e262144_k512_r4".
  std::string getSymbolName() const;
  /// "indexer_topk kernel [E = 262144, k = 512, ratio = 4]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless E is in [1, 2^31 - 1] and k
/// and the ratio are at least 1.
llvm::Error verifyIndexerTopKKernel(const IndexerTopKKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildIndexerTopKKernel(mlir::ModuleOp module, const IndexerTopKKernelSpec &spec,
                       const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_ATTENTIONINDEXKERNELS_H
