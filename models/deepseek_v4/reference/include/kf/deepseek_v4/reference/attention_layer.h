// DeepSeek-V4 golden reference: one layer's attention sublayer with its
// state (docs/models/deepseek_v4_model.md §4.2 q/kv path, index sets and
// output, §4.3 compressor, §4.4 indexer, §5 state and positions).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/reference/compressor.h"
#include "kf/deepseek_v4/reference/options.h"
#include "kf/deepseek_v4/reference/rope.h"
#include "kf/deepseek_v4/reference/weights.h"

namespace kf::deepseek_v4::reference {

// The RoPE table of `layer` (§2 "Frequencies"): base rope_base without YaRN
// on window-only layers, compressRopeBase with YaRN on compressed layers.
RopeConfig layerRope(const Config &config, uint32_t layer);

// Attention_l of §4 for one layer. Inputs are the normed block inputs
// RMSNorm(x; attn_norm), one [D] row per token; outputs are [D] bf16 rows.
// The layer keeps its window ring, its compressor (CSA and HCA) and its
// indexer's compressor (CSA) between calls.
class AttentionLayer {
public:
  // `weights` must outlive the layer.
  AttentionLayer(const Config &config, const LayerWeights &weights,
                 uint32_t layer, const Options &options);

  // A prefill from position 0 of x [T, D] (§5): starts a new sequence. The
  // bank is the T fresh KV rows followed by the compressed entries built in
  // this call; row t attends to the window of position t and the entries
  // c < floor((t + 1)/ratio) (HCA all, CSA those its indexer selects).
  // Returns [T, D].
  std::vector<float> prefill(std::span<const float> x);
  // The token at `pos`, the position after the last one seen (§4.2 decode
  // order): q path, kv, the indexer's compressor, the ring write, the main
  // compressor, then attention over [ring | cached entries]. Returns [D].
  std::vector<float> decode(std::span<const float> x, int64_t pos);

private:
  struct Query {
    std::vector<float> qr; // [Rq] the q latent, which the indexer reads
    std::vector<float> q;  // [H][Dh]
  };
  // §4.2: qr = RMSNorm(Lin_wq_a(x); q_norm); q = Lin_wq_b(qr) per head RMS
  // scaled in bf16, its last rope_dim dims rotated.
  Query query(std::span<const float> x, int64_t pos) const;
  // §4.2: kv = RMSNorm(Lin_wkv(x); kv_norm), last rope_dim dims rotated,
  // FP8SIM in blocks of 64 on the rest.
  std::vector<float> kv(std::span<const float> x, int64_t pos) const;
  // §4.4: qi = Lin_wq_b_idx(qr) per head, last rope_dim dims rotated, then
  // Hadamard and FP4SIM. [Hi][Di]
  std::vector<float> indexerQuery(std::span<const float> qr, int64_t pos) const;
  // §4.4: w = bf16(bf16(x · weights_projᵀ) · Di^−½·Hi^−½). [Hi]
  std::vector<float> indexerWeights(std::span<const float> x) const;
  // Appends to `idx` the bank rows firstEntryRow + c of the compressed
  // entries the query at `pos` attends to (§4.2): all c < visible for HCA;
  // for CSA the indexer's top min(index_topk, n_entries) of the first
  // n_entries cached entries, of which only c < visible are candidates.
  void addCompressed(std::span<const float> x, std::span<const float> qr,
                     int64_t pos, int64_t nEntries, int32_t firstEntryRow,
                     std::vector<int32_t> &idx) const;
  // §4.2 after SAttn: inverse RoPE of each head's output at `pos`, the
  // grouped wo_a in bf16, then Lin_wo_b. o [H][Dh] is modified.
  std::vector<float> output(std::span<float> o, int64_t pos) const;

  const Config &config_;
  const LayerWeights &weights_;
  uint32_t layer_;
  AttentionKind kind_;
  int ratio_;
  Options options_;
  std::vector<float> ropeFreqs_;
  std::vector<float> ring_; // [window][Dh], position p in slot p mod window
  std::optional<Compressor> compressor_;        // CSA and HCA
  std::optional<Compressor> indexerCompressor_; // CSA
  int64_t nextPos_ = 0;
};

} // namespace kf::deepseek_v4::reference
