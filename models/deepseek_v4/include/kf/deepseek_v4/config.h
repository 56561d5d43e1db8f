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
const char *attentionKindName(AttentionKind kind);

struct Config {
  // Sizes.
  uint32_t nEmbd = 0;         // D, the hidden size
  uint32_t nLayer = 0;        // trunk layers (MTP/DSpark stages excluded)
  uint32_t nVocab = 0;        // V
  uint32_t contextLength = 0; // positions trained for
  std::optional<uint32_t> bosToken;
  std::optional<uint32_t> eosToken;

  // Attention (one KV head: K and V are the same latent).
  uint32_t nHead = 0;     // query heads
  uint32_t headDim = 0;   // Dh, also the KV latent width
  uint32_t ropeDim = 0;   // Dr: the last rope_dim dims of each head
  uint32_t qLoraRank = 0; // Rq
  uint32_t oGroups = 0;   // G: output projection groups
  uint32_t oLoraRank = 0; // Ro, per group
  uint32_t window = 0;    // W, the current token included
  std::vector<uint32_t> compressRatios; // per layer: 0, 4 or 128
  uint32_t indexerHeads = 0;
  uint32_t indexerHeadDim = 0;
  uint32_t indexerTopK = 0;

  // RoPE: plain on ratio-0 layers, YaRN on compressed layers.
  float ropeBase = 0;
  float compressRopeBase = 0;
  float yarnFactor = 0;
  float yarnBetaFast = 0;
  float yarnBetaSlow = 0;
  uint32_t yarnOriginalContext = 0;

  // Hyper-connections.
  uint32_t hc = 0; // streams
  uint32_t sinkhornIterations = 0;
  float hcEps = 0;
  float normEps = 0; // RMSNorm, also inside HC and the per-head q norm

  // Mixture of experts.
  uint32_t nExpert = 0;       // E, routed experts
  uint32_t nExpertUsed = 0;   // k, per token
  uint32_t nExpertShared = 0; // shared experts, always active
  uint32_t nFfExp = 0;        // F, routed and shared expert width
  float routeScale = 0;       // applied to the normalised weights
  bool normalizeWeights = false;
  uint32_t hashLayers = 0;           // layers [0, hashLayers) route by token id
  std::vector<float> swigluClampExp; // per layer, routed experts
  std::vector<float> swigluClampShexp; // per layer, shared experts

  // Reads the deepseek4 keys as llama.cpp does, with its types, and checks
  // that they describe a model this code can run. Errors are one line naming
  // the file, the key and what was expected.
  static absl::StatusOr<Config> fromGguf(const gguf::File &file);

  // general.architecture and every deepseek4.* key, as fromGguf reads them
  // back; the tokenizer keys are the writer's (synth's) business.
  std::vector<gguf::KeyValue> ggufMetadata() const;

  AttentionKind attention(uint32_t layer) const;
  bool hashRouted(uint32_t layer) const { return layer < hashLayers; }
  // How many projection halves a compressor of `layer` has: 2 for ratio 4
  // (overlapping blocks), 1 for ratio 128, 0 for window-only layers.
  uint32_t compressorHalves(uint32_t layer) const;

  bool operator==(const Config &) const = default;
};

} // namespace kf::deepseek_v4
