//===- GraphStats.h - What a kf model graph costs ---------------*- C++ -*-===//
//
// Sizes a model graph without weights or a run: the weight bytes by format,
// the weight bytes and parameters one decode token touches (the numerator of
// the decode roofline), the KV cache per token and layer kind, and a
// liveness estimate of the activation arena of @prefill and @decode. The
// counting rules are in docs/graph.md ("What a graph costs").
//
//===----------------------------------------------------------------------===//

#ifndef KF_ANALYSIS_GRAPHSTATS_H
#define KF_ANALYSIS_GRAPHSTATS_H

#include "kf/Dialect/KfDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::kf {

struct GraphStatsOptions {
  /// Tokens of context: the KV cache total and the entries @decode reads.
  int64_t contextTokens = 65536;
  /// Token count of the @prefill whose arena is estimated.
  int64_t prefillTokens = 2048;
};

/// The `kf.weight` symbols of one format.
struct WeightFormatStats {
  Format format;
  int64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

/// What one token of @decode reads from the weights.
struct DecodeWeightStats {
  uint64_t bytes = 0;
  uint64_t activeParameters = 0;
};

/// The layers whose caches have the same kinds and shapes.
struct CacheKindStats {
  /// The model's name for the layers' kind (their caches' kf.layer_kind,
  /// e.g. DeepSeek-V4's SWA, CSA, HCA), or else their caches' roles joined
  /// by '+' ("kv+compressor").
  std::string kind;
  /// The layer's caches, e.g. "kv ring 128 x 512 bf16".
  std::string caches;
  int64_t layers = 0;
  /// Per layer: the rings and the compressors' running state.
  uint64_t fixedBytes = 0;
  /// Per layer: what the compressed entries grow by per token.
  double bytesPerToken = 0;
  /// All layers of the kind at the context length.
  uint64_t bytesAtContext = 0;
};

/// The peak of the activations live at once in one function.
struct ArenaStats {
  std::string function;
  int64_t tokens = 0;
  /// Tokens the caches hold when the function reads them.
  int64_t context = 0;
  uint64_t peakBytes = 0;
  /// The op at the peak and its location name, e.g.
  /// "kf.sparse_attention (blk.3.attention)".
  std::string peakAt;
};

/// The module's matmuls by how they run: the kernel ops --kf-lower-quant-dot
/// wrote, and the graph ops it left to the reference kernels.
struct MatmulStats {
  /// kf.qmatmul: linears, groups of grouped linears, shared experts.
  int64_t qmatmuls = 0;
  /// kf.expert_qmatmul: routed expert stacks, three per lowered kf.moe.
  int64_t expertMatmuls = 0;
  /// kf.moe lowered whole (one kf.moe_combine each).
  int64_t loweredMoes = 0;
  int64_t linears = 0;
  int64_t groupedLinears = 0;
  int64_t moes = 0;
};

struct GraphStats {
  GraphStatsOptions options;
  /// In #kf.format order.
  SmallVector<WeightFormatStats> formats;
  uint64_t weightBytes = 0;
  /// Elements of every weight but the integer tables, which are looked up,
  /// never multiplied.
  uint64_t parameters = 0;
  /// Absent without a @decode function.
  std::optional<DecodeWeightStats> decode;
  /// In the order of their first layer.
  SmallVector<CacheKindStats> caches;
  std::optional<ArenaStats> prefillArena, decodeArena;
  MatmulStats matmuls;

  uint64_t kvBytes() const;
  /// One arena serves both functions: the larger peak.
  uint64_t arenaBytes() const;

  /// Fails, with an error on the offending op, when a count is not defined
  /// (an expert stack whose experts per token cannot be told).
  static FailureOr<GraphStats> compute(ModuleOp module,
                                       const GraphStatsOptions &options);
  void print(raw_ostream &os) const;
};

} // namespace mlir::kf

#endif // KF_ANALYSIS_GRAPHSTATS_H
