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
uint32_t flashRatio(uint32_t layer) {
  if (layer < 2)
    return 0;
  return layer % 2 == 0 ? 4 : 128;
}

// The first `layers` trunk layers of DeepSeek-V4-Flash (model §1.1).
Config flash(uint32_t layers) {
  Config c;
  c.nEmbd = 4096;
  c.nLayer = layers;
  c.nVocab = 129280;
  c.contextLength = 1048576;
  c.bosToken = 0;
  c.eosToken = 1;
  c.nHead = 64;
  c.headDim = 512;
  c.ropeDim = 64;
  c.qLoraRank = 1024;
  c.oGroups = 8;
  c.oLoraRank = 1024;
  c.window = 128;
  for (uint32_t layer = 0; layer < layers; ++layer)
    c.compressRatios.push_back(flashRatio(layer));
  c.indexerHeads = 64;
  c.indexerHeadDim = 128;
  c.indexerTopK = 512;
  c.ropeBase = 10000;
  c.compressRopeBase = 160000;
  c.yarnFactor = 16;
  c.yarnBetaFast = 32;
  c.yarnBetaSlow = 1;
  c.yarnOriginalContext = 65536;
  c.hc = 4;
  c.sinkhornIterations = 20;
  c.hcEps = 1e-6f;
  c.normEps = 1e-6f;
  c.nExpert = 256;
  c.nExpertUsed = 6;
  c.nExpertShared = 1;
  c.nFfExp = 2048;
  c.routeScale = 1.5f;
  c.normalizeWeights = true;
  c.hashLayers = std::min(layers, 3u);
  c.swigluClampExp.assign(layers, 10.0f);
  c.swigluClampShexp.assign(layers, 10.0f);
  return c;
}

// Model §9: every structural feature of Flash at under 1 % of a layer's
// size. One deviation: the vocabulary is deepseek-coder's (32256 tokens,
// embedded in the file) rather than §9's 2048, so that the file carries a
// real tokenizer; that makes the embedding and the head most of its size.
Config tiny() {
  Config c = flash(7); // the same schedule, rope, YaRN, HC and routing
  c.nEmbd = 256;
  c.nVocab = kDeepseekCoderTokens;
  c.contextLength = 4096;
  c.bosToken = kDeepseekCoderBos;
  c.eosToken = kDeepseekCoderEos;
  c.nHead = 8;
  c.headDim = 192;
  c.qLoraRank = 128;
  c.oGroups = 4;
  c.oLoraRank = 64;
  c.window = 16;
  c.indexerHeads = 16;
  c.indexerTopK = 8;
  c.nExpert = 16;
  c.nExpertUsed = 4;
  c.nFfExp = 128;
  // Low enough that the clamp triggers with unit-scale activations.
  c.swigluClampExp.assign(c.nLayer, 2.0f);
  c.swigluClampShexp.assign(c.nLayer, 2.0f);
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
    if (!absl::SimpleAtoi(toAbsl(n), &layers) || layers < 1 ||
        layers > kFlashLayers)
      return absl::InvalidArgumentError(absl::StrCat(
          "preset '", toAbsl(name),
          "': expected flash-slice:N with N from 1 to ", kFlashLayers));
    return Preset{std::string(name), flash(layers), Vocabulary::CountOnly};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown preset '", toAbsl(name),
                   "'; expected tiny, flash or flash-slice:N (N from 1 to ",
                   kFlashLayers, ")"));
}

} // namespace kf::deepseek_v4
