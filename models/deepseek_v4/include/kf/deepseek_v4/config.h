// The hyper-parameters of a DeepSeek-V4 model (model §1,
// docs/models/deepseek_v4_model.md), as llama.cpp's `deepseek4` GGUF files
// carry them (docs/models/deepseek_v4.md, "What llama.cpp needs in a deepseek4
// file"): everything the forward pass needs, read from a file or taken from a
// preset.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_value.h"

namespace kf::deepseek_v4 {

// general.architecture of DeepSeek-V4 files, and the prefix of their keys.
inline constexpr std::string_view kArchitecture = "deepseek4";
// deepseek4.expert_gating_func: llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE
// for s = sqrt(softplus(logit)), the only scoring DeepSeek-V4 uses.
inline constexpr uint32_t kSqrtSoftplusGating = 4;

// What attention a layer runs, by its compress ratio (model §1.2).
enum class AttentionKind {
  Window, // ratio 0: the sliding window only
  Csa,    // ratio 4: window + indexer-selected compressed entries
  Hca,    // ratio 128: window + every compressed entry
};

// The kind's short name, as the model's documents and reports write it:
// "SWA", "CSA" or "HCA".
const char *attention_kind_name(AttentionKind kind);

struct Config {
  // Sizes.
  uint32_t n_embd = 0;         // D, the hidden size
  uint32_t n_layer = 0;        // trunk layers (MTP/DSpark stages excluded)
  uint32_t n_vocab = 0;        // V
  uint32_t context_length = 0; // positions trained for
  std::optional<uint32_t> bos_token;
  std::optional<uint32_t> eos_token;

  // Attention (one KV head: K and V are the same latent).
  uint32_t n_head = 0;      // query heads
  uint32_t head_dim = 0;    // Dh, also the KV latent width
  uint32_t rope_dim = 0;    // Dr: the last rope_dim dims of each head
  uint32_t q_lora_rank = 0; // Rq
  uint32_t o_groups = 0;    // G: output projection groups
  uint32_t o_lora_rank = 0; // Ro, per group
  uint32_t window = 0;      // W, the current token included
  std::vector<uint32_t> compress_ratios; // per layer: 0, 4 or 128
  uint32_t indexer_heads = 0;
  uint32_t indexer_head_dim = 0;
  uint32_t indexer_top_k = 0;

  // RoPE: plain on ratio-0 layers, YaRN on compressed layers.
  float rope_base = 0;
  float compress_rope_base = 0;
  float yarn_factor = 0;
  float yarn_beta_fast = 0;
  float yarn_beta_slow = 0;
  uint32_t yarn_original_context = 0;

  // Hyper-connections.
  uint32_t hc = 0; // streams
  uint32_t sinkhorn_iterations = 0;
  float hc_eps = 0;
  float norm_eps = 0; // RMSNorm, also inside HC and the per-head q norm

  // Mixture of experts.
  uint32_t n_expert = 0;        // E, routed experts
  uint32_t n_expert_used = 0;   // k, per token
  uint32_t n_expert_shared = 0; // shared experts, always active
  uint32_t n_ff_exp = 0;        // F, routed and shared expert width
  float route_scale = 0;        // applied to the normalised weights
  bool normalize_weights = false;
  uint32_t hash_layers = 0; // layers [0, hash_layers) route by token id
  std::vector<float> swiglu_clamp_exp;   // per layer, routed experts
  std::vector<float> swiglu_clamp_shexp; // per layer, shared experts

  // Reads the deepseek4 keys as llama.cpp does, with its types, and checks
  // that they describe a model this code can run. Errors are one line naming
  // the file, the key and what was expected.
  static absl::StatusOr<Config> from_gguf(const gguf::File &file);

  // general.architecture and every deepseek4.* key, as from_gguf reads them
  // back; the tokenizer keys are the writer's (synth's) business.
  std::vector<gguf::KeyValue> gguf_metadata() const;

  AttentionKind attention(uint32_t layer) const;
  bool hash_routed(uint32_t layer) const { return layer < hash_layers; }
  // How many projection halves a compressor of `layer` has: 2 for ratio 4
  // (overlapping blocks), 1 for ratio 128, 0 for window-only layers.
  uint32_t compressor_halves(uint32_t layer) const;

  bool operator==(const Config &) const = default;
};

} // namespace kf::deepseek_v4
