#include "kf/deepseek_v4/config.h"

#include <algorithm>
#include <bit>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4 {

namespace {

// The keys, as llama.cpp names them (docs/models/deepseek_v4.md). Those after
// the prefix are relative to "deepseek4.".
constexpr std::string_view kArchitectureKey = "general.architecture";
constexpr std::string_view kContextLength = "context_length";
constexpr std::string_view kEmbeddingLength = "embedding_length";
constexpr std::string_view kEmbeddingLengthOut = "embedding_length_out";
constexpr std::string_view kBlockCount = "block_count";
constexpr std::string_view kVocabSize = "vocab_size";
constexpr std::string_view kHeadCount = "attention.head_count";
constexpr std::string_view kHeadCountKv = "attention.head_count_kv";
constexpr std::string_view kKeyLength = "attention.key_length";
constexpr std::string_view kValueLength = "attention.value_length";
constexpr std::string_view kNormEps = "attention.layer_norm_rms_epsilon";
constexpr std::string_view kQLoraRank = "attention.q_lora_rank";
constexpr std::string_view kSlidingWindow = "attention.sliding_window";
constexpr std::string_view kOutputGroups = "attention.output_group_count";
constexpr std::string_view kOutputLoraRank = "attention.output_lora_rank";
constexpr std::string_view kCompressRatios = "attention.compress_ratios";
constexpr std::string_view kCompressRopeBase =
    "attention.compress_rope_freq_base";
constexpr std::string_view kIndexerHeads = "attention.indexer.head_count";
constexpr std::string_view kIndexerHeadDim = "attention.indexer.key_length";
constexpr std::string_view kIndexerTopK = "attention.indexer.top_k";
constexpr std::string_view kRopeDim = "rope.dimension_count";
constexpr std::string_view kRopeBase = "rope.freq_base";
constexpr std::string_view kRopeScalingType = "rope.scaling.type";
constexpr std::string_view kYarnFactor = "rope.scaling.factor";
constexpr std::string_view kYarnOriginalContext =
    "rope.scaling.original_context_length";
constexpr std::string_view kYarnBetaFast = "rope.scaling.yarn_beta_fast";
constexpr std::string_view kYarnBetaSlow = "rope.scaling.yarn_beta_slow";
constexpr std::string_view kExpertCount = "expert_count";
constexpr std::string_view kExpertUsedCount = "expert_used_count";
constexpr std::string_view kExpertSharedCount = "expert_shared_count";
constexpr std::string_view kExpertFfLength = "expert_feed_forward_length";
constexpr std::string_view kExpertWeightsScale = "expert_weights_scale";
constexpr std::string_view kExpertWeightsNorm = "expert_weights_norm";
constexpr std::string_view kExpertGatingFunc = "expert_gating_func";
constexpr std::string_view kSwigluClampExp = "swiglu_clamp_exp";
constexpr std::string_view kSwigluClampShexp = "swiglu_clamp_shexp";
constexpr std::string_view kHcCount = "hyper_connection.count";
constexpr std::string_view kHcSinkhornIterations =
    "hyper_connection.sinkhorn_iterations";
constexpr std::string_view kHcEps = "hyper_connection.epsilon";
constexpr std::string_view kHashLayerCount = "hash_layer_count";
constexpr std::string_view kNextnPredictLayers = "nextn_predict_layers";
constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model";
constexpr std::string_view kTokenizerTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kBosToken = "tokenizer.ggml.bos_token_id";
constexpr std::string_view kEosToken = "tokenizer.ggml.eos_token_id";

// Defaults of the optional keys: DeepSeek's values, as llama.cpp assumes.
constexpr float kDefaultRopeBase = 10000;
constexpr float kDefaultYarnBetaFast = 32;
constexpr float kDefaultYarnBetaSlow = 1;

std::string modelKey(std::string_view suffix) {
  return absl::StrCat(toAbsl(kArchitecture), ".", toAbsl(suffix));
}

// Typed reads of one file's keys, and its one-line errors.
class Keys {
public:
  explicit Keys(const gguf::File &file) : file_(file) {}

  template <typename T> absl::StatusOr<T> get(std::string_view key) const {
    return file_.get<T>(key);
  }
  template <typename T> absl::StatusOr<T> model(std::string_view suffix) const {
    return file_.get<T>(modelKey(suffix));
  }
  // The value of an optional model key, or `fallback` when it is absent.
  template <typename T>
  absl::StatusOr<T> modelOr(std::string_view suffix, T fallback) const {
    if (!file_.find(modelKey(suffix)))
      return fallback;
    return model<T>(suffix);
  }
  bool hasModel(std::string_view suffix) const {
    return file_.find(modelKey(suffix)) != nullptr;
  }

  // "FILE: key 'K' is V, expected WHAT".
  template <typename V>
  absl::Status invalid(std::string_view key, const V &value,
                       std::string_view expected) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_.name(), ": key ", gguf::quoted(key), " is ", value,
                     ", expected ", toAbsl(expected)));
  }
  template <typename V>
  absl::Status invalidModel(std::string_view suffix, const V &value,
                            std::string_view expected) const {
    return invalid(modelKey(suffix), value, expected);
  }

  // A model key that must be at least 1.
  absl::StatusOr<uint32_t> positive(std::string_view suffix) const {
    KF_ASSIGN_OR_RETURN(uint32_t value, model<uint32_t>(suffix));
    if (value == 0)
      return invalidModel(suffix, value, "at least 1");
    return value;
  }

  // A scalar float32, or an array of exactly `layers` of them, as llama.cpp's
  // get_key_or_arr reads swiglu_clamp_exp.
  absl::StatusOr<std::vector<float>> perLayer(std::string_view suffix,
                                              uint32_t layers) const {
    std::string key = modelKey(suffix);
    const gguf::Value *value = file_.find(key);
    if (value && value->isArray()) {
      KF_ASSIGN_OR_RETURN(std::span<const float> values,
                          file_.get<std::span<const float>>(key));
      if (values.size() != layers)
        return absl::InvalidArgumentError(
            absl::StrCat(file_.name(), ": key ", gguf::quoted(key), " has ",
                         values.size(), " values, expected ", layers,
                         " (one per layer) or a single value"));
      return std::vector<float>(values.begin(), values.end());
    }
    KF_ASSIGN_OR_RETURN(float scalar, file_.get<float>(key));
    return std::vector<float>(layers, scalar);
  }

  // attention.compress_ratios: INT32 or UINT32, at least `layers` values
  // (llama.cpp's files carry the MTP stages' too), each 0, 4 or 128.
  absl::StatusOr<std::vector<uint32_t>> compressRatios(uint32_t layers) const {
    std::string key = modelKey(kCompressRatios);
    const gguf::Value *value = file_.find(key);
    if (!value)
      return file_.get<std::span<const uint32_t>>(key).status();
    std::vector<int64_t> ratios;
    if (auto u = value->as<std::span<const uint32_t>>())
      ratios.assign(u->begin(), u->end());
    else if (auto i = value->as<std::span<const int32_t>>())
      ratios.assign(i->begin(), i->end());
    else
      return absl::InvalidArgumentError(absl::StrCat(
          file_.name(), ": key ", gguf::quoted(key), " has type ",
          value->typeDescription(), ", expected array of uint32 or int32"));
    if (ratios.size() < layers)
      return absl::InvalidArgumentError(absl::StrCat(
          file_.name(), ": key ", gguf::quoted(key), " has ", ratios.size(),
          " values, expected at least ", layers, " (one per layer)"));
    std::vector<uint32_t> kept;
    for (uint32_t layer = 0; layer < layers; ++layer) {
      int64_t ratio = ratios[layer];
      if (ratio != 0 && ratio != 4 && ratio != 128)
        return absl::InvalidArgumentError(absl::StrCat(
            file_.name(), ": key ", gguf::quoted(key), " has ", ratio,
            " for layer ", layer, ", expected 0, 4 or 128"));
      kept.push_back(static_cast<uint32_t>(ratio));
    }
    return kept;
  }

private:
  const gguf::File &file_;
};

// The keys that describe the vocabulary: its size and special tokens.
absl::Status readVocabulary(const Keys &keys, const gguf::File &file,
                            Config &c) {
  // llama.cpp refuses a file without a tokenizer model; which one it is
  // concerns the tokenizer, not the forward pass.
  KF_RETURN_IF_ERROR(keys.get<std::string_view>(kTokenizerModel).status());
  std::optional<uint32_t> vocabSize;
  if (keys.hasModel(kVocabSize)) {
    KF_ASSIGN_OR_RETURN(vocabSize, keys.model<uint32_t>(kVocabSize));
  }
  if (file.find(kTokenizerTokens)) {
    KF_ASSIGN_OR_RETURN(
        std::span<const std::string> tokens,
        keys.get<std::span<const std::string>>(kTokenizerTokens));
    if (vocabSize && *vocabSize != tokens.size())
      return keys.invalidModel(kVocabSize, *vocabSize,
                               absl::StrCat(tokens.size(), ", the length of ",
                                            gguf::quoted(kTokenizerTokens)));
    c.nVocab = static_cast<uint32_t>(tokens.size());
  } else if (vocabSize) {
    c.nVocab = *vocabSize;
  } else {
    return absl::NotFoundError(absl::StrCat(
        file.name(), ": no key ", gguf::quoted(modelKey(kVocabSize)),
        " and no ", gguf::quoted(kTokenizerTokens),
        ": the vocabulary size is unknown"));
  }
  if (c.nVocab == 0)
    return keys.invalidModel(kVocabSize, 0, "at least 1");
  for (auto [key, token] :
       {std::pair{kBosToken, &c.bosToken}, std::pair{kEosToken, &c.eosToken}}) {
    if (!file.find(key))
      continue;
    KF_ASSIGN_OR_RETURN(uint32_t id, keys.get<uint32_t>(key));
    if (id >= c.nVocab)
      return keys.invalid(key, id, absl::StrCat("a token id below ", c.nVocab));
    *token = id;
  }
  return absl::OkStatus();
}

absl::Status readAttention(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.nHead, keys.positive(kHeadCount));
  KF_ASSIGN_OR_RETURN(uint32_t kvHeads, keys.model<uint32_t>(kHeadCountKv));
  if (kvHeads != 1)
    return keys.invalidModel(kHeadCountKv, kvHeads,
                             "1 (DeepSeek-V4 has one KV latent)");
  KF_ASSIGN_OR_RETURN(c.headDim, keys.positive(kKeyLength));
  KF_ASSIGN_OR_RETURN(uint32_t valueLength, keys.model<uint32_t>(kValueLength));
  if (valueLength != c.headDim)
    return keys.invalidModel(
        kValueLength, valueLength,
        absl::StrCat(c.headDim, ", the key length (K and V are one latent)"));
  KF_ASSIGN_OR_RETURN(c.qLoraRank, keys.positive(kQLoraRank));
  KF_ASSIGN_OR_RETURN(c.oGroups, keys.positive(kOutputGroups));
  if (c.nHead % c.oGroups != 0)
    return keys.invalidModel(
        kOutputGroups, c.oGroups,
        absl::StrCat("a divisor of the ", c.nHead, " heads"));
  KF_ASSIGN_OR_RETURN(c.oLoraRank, keys.positive(kOutputLoraRank));
  KF_ASSIGN_OR_RETURN(c.window, keys.positive(kSlidingWindow));
  KF_ASSIGN_OR_RETURN(c.compressRatios, keys.compressRatios(c.nLayer));
  KF_ASSIGN_OR_RETURN(c.indexerHeads, keys.positive(kIndexerHeads));
  KF_ASSIGN_OR_RETURN(c.indexerHeadDim, keys.positive(kIndexerHeadDim));
  if (!std::has_single_bit(c.indexerHeadDim))
    return keys.invalidModel(
        kIndexerHeadDim, c.indexerHeadDim,
        "a power of two (the indexer's Hadamard transform)");
  KF_ASSIGN_OR_RETURN(c.indexerTopK, keys.positive(kIndexerTopK));
  return absl::OkStatus();
}

absl::Status readRope(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.ropeDim, keys.positive(kRopeDim));
  // Heads and compressed entries keep dims that do not rotate: the FP8
  // simulation and the indexer's pooled keys act on them (model §4.2-§4.4,
  // docs/models/deepseek_v4_model.md).
  uint32_t narrowest = std::min(c.headDim, c.indexerHeadDim);
  if (c.ropeDim % 2 != 0 || c.ropeDim >= narrowest)
    return keys.invalidModel(
        kRopeDim, c.ropeDim,
        absl::StrCat("an even number of dimensions, fewer than ", narrowest,
                     " (the head and indexer key lengths)"));
  KF_ASSIGN_OR_RETURN(c.ropeBase, keys.modelOr(kRopeBase, kDefaultRopeBase));
  KF_ASSIGN_OR_RETURN(c.compressRopeBase, keys.model<float>(kCompressRopeBase));
  // Without the type llama.cpp applies linear scaling, without the factor
  // or the original length none: both load and give wrong logits.
  KF_ASSIGN_OR_RETURN(std::string_view scaling,
                      keys.model<std::string_view>(kRopeScalingType));
  if (scaling != "yarn")
    return keys.invalidModel(kRopeScalingType,
                             absl::StrCat("\"", toAbsl(scaling), "\""),
                             "\"yarn\"");
  KF_ASSIGN_OR_RETURN(c.yarnFactor, keys.model<float>(kYarnFactor));
  KF_ASSIGN_OR_RETURN(c.yarnOriginalContext,
                      keys.positive(kYarnOriginalContext));
  KF_ASSIGN_OR_RETURN(c.yarnBetaFast,
                      keys.modelOr(kYarnBetaFast, kDefaultYarnBetaFast));
  KF_ASSIGN_OR_RETURN(c.yarnBetaSlow,
                      keys.modelOr(kYarnBetaSlow, kDefaultYarnBetaSlow));
  return absl::OkStatus();
}

absl::Status readHyperConnections(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.hc, keys.positive(kHcCount));
  KF_ASSIGN_OR_RETURN(c.sinkhornIterations,
                      keys.positive(kHcSinkhornIterations));
  KF_ASSIGN_OR_RETURN(c.hcEps, keys.model<float>(kHcEps));
  KF_ASSIGN_OR_RETURN(c.normEps, keys.model<float>(kNormEps));
  if (keys.hasModel(kEmbeddingLengthOut)) {
    KF_ASSIGN_OR_RETURN(uint32_t out,
                        keys.model<uint32_t>(kEmbeddingLengthOut));
    if (out != c.hc * c.nEmbd)
      return keys.invalidModel(
          kEmbeddingLengthOut, out,
          absl::StrCat(c.hc * c.nEmbd, " (streams times embedding length)"));
  }
  return absl::OkStatus();
}

absl::Status readExperts(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.nExpert, keys.positive(kExpertCount));
  KF_ASSIGN_OR_RETURN(c.nExpertUsed, keys.positive(kExpertUsedCount));
  if (c.nExpertUsed > c.nExpert)
    return keys.invalidModel(
        kExpertUsedCount, c.nExpertUsed,
        absl::StrCat("at most the ", c.nExpert, " experts"));
  KF_ASSIGN_OR_RETURN(c.nExpertShared, keys.positive(kExpertSharedCount));
  KF_ASSIGN_OR_RETURN(c.nFfExp, keys.positive(kExpertFfLength));
  KF_ASSIGN_OR_RETURN(c.routeScale, keys.model<float>(kExpertWeightsScale));
  KF_ASSIGN_OR_RETURN(c.normalizeWeights, keys.model<bool>(kExpertWeightsNorm));
  KF_ASSIGN_OR_RETURN(uint32_t gating, keys.model<uint32_t>(kExpertGatingFunc));
  if (gating != kSqrtSoftplusGating)
    return keys.invalidModel(kExpertGatingFunc, gating,
                             "4 (sqrt-softplus scoring)");
  KF_ASSIGN_OR_RETURN(c.hashLayers, keys.model<uint32_t>(kHashLayerCount));
  if (c.hashLayers > c.nLayer)
    return keys.invalidModel(kHashLayerCount, c.hashLayers,
                             absl::StrCat("at most the ", c.nLayer, " layers"));
  KF_ASSIGN_OR_RETURN(c.swigluClampExp,
                      keys.perLayer(kSwigluClampExp, c.nLayer));
  // The shared expert is clamped too (model §4.5); llama.cpp defaults its
  // clamp to the routed experts'.
  if (keys.hasModel(kSwigluClampShexp)) {
    KF_ASSIGN_OR_RETURN(c.swigluClampShexp,
                        keys.perLayer(kSwigluClampShexp, c.nLayer));
  } else {
    c.swigluClampShexp = c.swigluClampExp;
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Config> Config::fromGguf(const gguf::File &file) {
  Keys keys(file);
  KF_ASSIGN_OR_RETURN(std::string_view architecture,
                      keys.get<std::string_view>(kArchitectureKey));
  if (architecture != kArchitecture)
    return keys.invalid(kArchitectureKey,
                        absl::StrCat("\"", toAbsl(architecture), "\""),
                        absl::StrCat("\"", toAbsl(kArchitecture), "\""));
  Config c;
  KF_ASSIGN_OR_RETURN(c.nEmbd, keys.positive(kEmbeddingLength));
  KF_ASSIGN_OR_RETURN(c.nLayer, keys.positive(kBlockCount));
  KF_ASSIGN_OR_RETURN(c.contextLength, keys.positive(kContextLength));
  if (keys.hasModel(kNextnPredictLayers)) {
    KF_ASSIGN_OR_RETURN(uint32_t nextn,
                        keys.model<uint32_t>(kNextnPredictLayers));
    if (nextn != 0)
      return keys.invalidModel(
          kNextnPredictLayers, nextn,
          "0: Kernelforge does not run MTP or DSpark stages yet");
  }
  KF_RETURN_IF_ERROR(readVocabulary(keys, file, c));
  KF_RETURN_IF_ERROR(readAttention(keys, c));
  KF_RETURN_IF_ERROR(readRope(keys, c));
  KF_RETURN_IF_ERROR(readHyperConnections(keys, c));
  KF_RETURN_IF_ERROR(readExperts(keys, c));
  return c;
}

std::vector<gguf::KeyValue> Config::ggufMetadata() const {
  std::vector<gguf::KeyValue> kv;
  kv.push_back({std::string(kArchitectureKey), std::string(kArchitecture)});
  auto add = [&](std::string_view suffix, gguf::Value value) {
    kv.push_back({modelKey(suffix), std::move(value)});
  };
  add(kContextLength, contextLength);
  add(kEmbeddingLength, nEmbd);
  add(kEmbeddingLengthOut, hc * nEmbd);
  add(kBlockCount, nLayer);
  add(kVocabSize, nVocab);
  add(kHeadCount, nHead);
  add(kHeadCountKv, uint32_t{1});
  add(kKeyLength, headDim);
  add(kValueLength, headDim);
  add(kNormEps, normEps);
  add(kQLoraRank, qLoraRank);
  add(kSlidingWindow, window);
  add(kOutputGroups, oGroups);
  add(kOutputLoraRank, oLoraRank);
  add(kCompressRatios, compressRatios);
  add(kCompressRopeBase, compressRopeBase);
  add(kIndexerHeads, indexerHeads);
  add(kIndexerHeadDim, indexerHeadDim);
  add(kIndexerTopK, indexerTopK);
  add(kRopeDim, ropeDim);
  add(kRopeBase, ropeBase);
  add(kRopeScalingType, "yarn");
  add(kYarnFactor, yarnFactor);
  add(kYarnOriginalContext, yarnOriginalContext);
  add(kYarnBetaFast, yarnBetaFast);
  add(kYarnBetaSlow, yarnBetaSlow);
  add(kExpertCount, nExpert);
  add(kExpertUsedCount, nExpertUsed);
  add(kExpertSharedCount, nExpertShared);
  add(kExpertFfLength, nFfExp);
  add(kExpertWeightsScale, routeScale);
  add(kExpertWeightsNorm, normalizeWeights);
  add(kExpertGatingFunc, kSqrtSoftplusGating);
  add(kSwigluClampExp, swigluClampExp);
  add(kSwigluClampShexp, swigluClampShexp);
  add(kHcCount, hc);
  add(kHcSinkhornIterations, sinkhornIterations);
  add(kHcEps, hcEps);
  add(kHashLayerCount, hashLayers);
  add(kNextnPredictLayers, uint32_t{0});
  return kv;
}

const char *attentionKindName(AttentionKind kind) {
  switch (kind) {
  case AttentionKind::Window:
    return "SWA";
  case AttentionKind::Csa:
    return "CSA";
  case AttentionKind::Hca:
    return "HCA";
  }
  return "?";
}

AttentionKind Config::attention(uint32_t layer) const {
  switch (compressRatios.at(layer)) {
  case 0:
    return AttentionKind::Window;
  case 4:
    return AttentionKind::Csa;
  default:
    return AttentionKind::Hca;
  }
}

uint32_t Config::compressorHalves(uint32_t layer) const {
  switch (attention(layer)) {
  case AttentionKind::Window:
    return 0;
  case AttentionKind::Csa:
    return 2;
  case AttentionKind::Hca:
    return 1;
  }
  return 0;
}

} // namespace kf::deepseek_v4
