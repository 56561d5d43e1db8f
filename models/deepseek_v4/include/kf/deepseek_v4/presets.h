// Named DeepSeek-V4 configurations, as data (docs/models/deepseek_v4.md; the
// sections are those of docs/models/deepseek_v4_model.md):
//   flash          the full DeepSeek-V4-Flash trunk of §1 (43 layers)
//   flash-slice:N  Flash's dimensions for its first N layers, with the
//                  embedding and the head
//   tiny           §9's test configuration, with the deepseek-coder
//                  tokenizer's 32256-token vocabulary
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kf/deepseek_v4/config.h"

namespace kf::deepseek_v4 {

// Where a preset's tokenizer comes from.
enum class Vocabulary {
  // Only a token count (tokenizer.ggml.model "none"): no DeepSeek-V4
  // tokenizer file is available to embed.
  CountOnly,
  // llama.cpp's deepseek-coder vocabulary file, embedded whole.
  DeepseekCoder,
};

struct Preset {
  std::string name;
  Config config;
  Vocabulary vocabulary;
};

// "tiny", "flash" or "flash-slice:N" with 1 <= N <= 43; an error lists them.
absl::StatusOr<Preset> preset(std::string_view name);

// The deepseek-coder vocabulary the tiny preset embeds: its token count and
// special tokens, which the vocabulary file must match.
inline constexpr uint32_t kDeepseekCoderTokens = 32256;
inline constexpr uint32_t kDeepseekCoderBos = 32013;
inline constexpr uint32_t kDeepseekCoderEos = 32014;

} // namespace kf::deepseek_v4
