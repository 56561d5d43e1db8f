#include "kf/deepseek_v4/presets.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"

namespace kf::deepseek_v4 {

namespace {

constexpr std::string_view kSlicePrefix = "flash-slice:";

// DeepSeek-V4-Flash's compress ratio of trunk layer `layer` (model §1.2,
// docs/models/deepseek_v4_model.md): two window-only layers, then CSA on even
// and HCA on odd layers.
uint32_t flash_ratio(uint32_t layer) {
  if (layer < 2)
    return 0;
  return layer % 2 == 0 ? 4 : 128;
}

// The first `layers` trunk layers of DeepSeek-V4-Flash (model §1.1).
Config flash(uint32_t layers) {
  Config c;
  c.n_embd = 4096;
  c.n_layer = layers;
  c.n_vocab = 129280;
  c.context_length = 1048576;
  c.bos_token = 0;
  c.eos_token = 1;
  c.n_head = 64;
  c.head_dim = 512;
  c.rope_dim = 64;
  c.q_lora_rank = 1024;
  c.o_groups = 8;
  c.o_lora_rank = 1024;
  c.window = 128;
  for (uint32_t layer = 0; layer < layers; ++layer)
    c.compress_ratios.push_back(flash_ratio(layer));
  c.indexer_heads = 64;
  c.indexer_head_dim = 128;
  c.indexer_top_k = 512;
  c.rope_base = 10000;
  c.compress_rope_base = 160000;
  c.yarn_factor = 16;
  c.yarn_beta_fast = 32;
  c.yarn_beta_slow = 1;
  c.yarn_original_context = 65536;
  c.hc = 4;
  c.sinkhorn_iterations = 20;
  c.hc_eps = 1e-6f;
  c.norm_eps = 1e-6f;
  c.n_expert = 256;
  c.n_expert_used = 6;
  c.n_expert_shared = 1;
  c.n_ff_exp = 2048;
  c.route_scale = 1.5f;
  c.normalize_weights = true;
  c.hash_layers = std::min(layers, 3u);
  c.swiglu_clamp_exp.assign(layers, 10.0f);
  c.swiglu_clamp_shexp.assign(layers, 10.0f);
  return c;
}

// Model §9: every structural feature of Flash at under 1 % of a layer's
// size. One deviation: the vocabulary is deepseek-coder's (32256 tokens,
// embedded in the file) rather than §9's 2048, so that the file carries a
// real tokenizer; that makes the embedding and the head most of its size.
Config tiny() {
  Config c = flash(7); // the same schedule, rope, YaRN, HC and routing
  c.n_embd = 256;
  c.n_vocab = kDeepseekCoderTokens;
  c.context_length = 4096;
  c.bos_token = kDeepseekCoderBos;
  c.eos_token = kDeepseekCoderEos;
  c.n_head = 8;
  c.head_dim = 192;
  c.q_lora_rank = 128;
  c.o_groups = 4;
  c.o_lora_rank = 64;
  c.window = 16;
  c.indexer_heads = 16;
  c.indexer_top_k = 8;
  c.n_expert = 16;
  c.n_expert_used = 4;
  c.n_ff_exp = 128;
  // Low enough that the clamp triggers with unit-scale activations.
  c.swiglu_clamp_exp.assign(c.n_layer, 2.0f);
  c.swiglu_clamp_shexp.assign(c.n_layer, 2.0f);
  return c;
}

constexpr uint32_t kFlashLayers = 43;

} // namespace

absl::StatusOr<Preset> preset(std::string_view name) {
  if (name == "tiny")
    return Preset{"tiny", tiny(), Vocabulary::DeepseekCoder};
  if (name == "flash")
    return Preset{"flash", flash(kFlashLayers), Vocabulary::CountOnly};
  uint32_t layers = 0;
  if (name.starts_with(kSlicePrefix)) {
    std::string_view n = name.substr(kSlicePrefix.size());
    if (!absl::SimpleAtoi(to_absl(n), &layers) || layers < 1 ||
        layers > kFlashLayers)
      return absl::InvalidArgumentError(absl::StrCat(
          "preset '", to_absl(name),
          "': expected flash-slice:N with N from 1 to ", kFlashLayers));
    return Preset{std::string(name), flash(layers), Vocabulary::CountOnly};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown preset '", to_absl(name),
                   "'; expected tiny, flash or flash-slice:N (N from 1 to ",
                   kFlashLayers, ")"));
}

} // namespace kf::deepseek_v4
