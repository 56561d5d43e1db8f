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

std::string model_key(std::string_view suffix) {
  return absl::StrCat(to_absl(kArchitecture), ".", to_absl(suffix));
}

// Typed reads of one file's keys, and its one-line errors.
class Keys {
public:
  explicit Keys(const gguf::File &file) : file_(file) {}

  template <typename T> absl::StatusOr<T> get(std::string_view key) const {
    return file_.get<T>(key);
  }
  template <typename T> absl::StatusOr<T> model(std::string_view suffix) const {
    return file_.get<T>(model_key(suffix));
  }
  // The value of an optional model key, or `fallback` when it is absent.
  template <typename T>
  absl::StatusOr<T> model_or(std::string_view suffix, T fallback) const {
    if (!file_.find(model_key(suffix)))
      return fallback;
    return model<T>(suffix);
  }
  bool has_model(std::string_view suffix) const {
    return file_.find(model_key(suffix)) != nullptr;
  }

  // "FILE: key 'K' is V, expected WHAT".
  template <typename V>
  absl::Status invalid(std::string_view key, const V &value,
                       std::string_view expected) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_.name(), ": key ", gguf::quoted(key), " is ", value,
                     ", expected ", to_absl(expected)));
  }
  template <typename V>
  absl::Status invalid_model(std::string_view suffix, const V &value,
                             std::string_view expected) const {
    return invalid(model_key(suffix), value, expected);
  }

  // A model key that must be at least 1.
  absl::StatusOr<uint32_t> positive(std::string_view suffix) const {
    KF_ASSIGN_OR_RETURN(uint32_t value, model<uint32_t>(suffix));
    if (value == 0)
      return invalid_model(suffix, value, "at least 1");
    return value;
  }

  // A scalar float32, or an array of exactly `layers` of them, as llama.cpp's
  // get_key_or_arr reads swiglu_clamp_exp.
  absl::StatusOr<std::vector<float>> per_layer(std::string_view suffix,
                                               uint32_t layers) const {
    std::string key = model_key(suffix);
    const gguf::Value *value = file_.find(key);
    if (value && value->is_array()) {
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
  absl::StatusOr<std::vector<uint32_t>> compress_ratios(uint32_t layers) const {
    std::string key = model_key(kCompressRatios);
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
          value->type_description(), ", expected array of uint32 or int32"));
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
absl::Status read_vocabulary(const Keys &keys, const gguf::File &file,
                             Config &c) {
  // llama.cpp refuses a file without a tokenizer model; which one it is
  // concerns the tokenizer, not the forward pass.
  KF_RETURN_IF_ERROR(keys.get<std::string_view>(kTokenizerModel).status());
  std::optional<uint32_t> vocab_size;
  if (keys.has_model(kVocabSize)) {
    KF_ASSIGN_OR_RETURN(vocab_size, keys.model<uint32_t>(kVocabSize));
  }
  if (file.find(kTokenizerTokens)) {
    KF_ASSIGN_OR_RETURN(
        std::span<const std::string> tokens,
        keys.get<std::span<const std::string>>(kTokenizerTokens));
    if (vocab_size && *vocab_size != tokens.size())
      return keys.invalid_model(kVocabSize, *vocab_size,
                                absl::StrCat(tokens.size(), ", the length of ",
                                             gguf::quoted(kTokenizerTokens)));
    c.n_vocab = static_cast<uint32_t>(tokens.size());
  } else if (vocab_size) {
    c.n_vocab = *vocab_size;
  } else {
    return absl::NotFoundError(absl::StrCat(
        file.name(), ": no key ", gguf::quoted(model_key(kVocabSize)),
        " and no ", gguf::quoted(kTokenizerTokens),
        ": the vocabulary size is unknown"));
  }
  if (c.n_vocab == 0)
    return keys.invalid_model(kVocabSize, 0, "at least 1");
  for (auto [key, token] : {std::pair{kBosToken, &c.bos_token},
                            std::pair{kEosToken, &c.eos_token}}) {
    if (!file.find(key))
      continue;
    KF_ASSIGN_OR_RETURN(uint32_t id, keys.get<uint32_t>(key));
    if (id >= c.n_vocab)
      return keys.invalid(key, id,
                          absl::StrCat("a token id below ", c.n_vocab));
    *token = id;
  }
  return absl::OkStatus();
}

absl::Status read_attention(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.n_head, keys.positive(kHeadCount));
  KF_ASSIGN_OR_RETURN(uint32_t kv_heads, keys.model<uint32_t>(kHeadCountKv));
  if (kv_heads != 1)
    return keys.invalid_model(kHeadCountKv, kv_heads,
                              "1 (DeepSeek-V4 has one KV latent)");
  KF_ASSIGN_OR_RETURN(c.head_dim, keys.positive(kKeyLength));
  KF_ASSIGN_OR_RETURN(uint32_t value_length,
                      keys.model<uint32_t>(kValueLength));
  if (value_length != c.head_dim)
    return keys.invalid_model(
        kValueLength, value_length,
        absl::StrCat(c.head_dim, ", the key length (K and V are one latent)"));
  KF_ASSIGN_OR_RETURN(c.q_lora_rank, keys.positive(kQLoraRank));
  KF_ASSIGN_OR_RETURN(c.o_groups, keys.positive(kOutputGroups));
  if (c.n_head % c.o_groups != 0)
    return keys.invalid_model(
        kOutputGroups, c.o_groups,
        absl::StrCat("a divisor of the ", c.n_head, " heads"));
  KF_ASSIGN_OR_RETURN(c.o_lora_rank, keys.positive(kOutputLoraRank));
  KF_ASSIGN_OR_RETURN(c.window, keys.positive(kSlidingWindow));
  KF_ASSIGN_OR_RETURN(c.compress_ratios, keys.compress_ratios(c.n_layer));
  KF_ASSIGN_OR_RETURN(c.indexer_heads, keys.positive(kIndexerHeads));
  KF_ASSIGN_OR_RETURN(c.indexer_head_dim, keys.positive(kIndexerHeadDim));
  if (!std::has_single_bit(c.indexer_head_dim))
    return keys.invalid_model(
        kIndexerHeadDim, c.indexer_head_dim,
        "a power of two (the indexer's Hadamard transform)");
  KF_ASSIGN_OR_RETURN(c.indexer_top_k, keys.positive(kIndexerTopK));
  return absl::OkStatus();
}

absl::Status read_rope(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.rope_dim, keys.positive(kRopeDim));
  // Heads and compressed entries keep dims that do not rotate: the FP8
  // simulation and the indexer's pooled keys act on them (model §4.2-§4.4,
  // docs/models/deepseek_v4_model.md).
  uint32_t narrowest = std::min(c.head_dim, c.indexer_head_dim);
  if (c.rope_dim % 2 != 0 || c.rope_dim >= narrowest)
    return keys.invalid_model(
        kRopeDim, c.rope_dim,
        absl::StrCat("an even number of dimensions, fewer than ", narrowest,
                     " (the head and indexer key lengths)"));
  KF_ASSIGN_OR_RETURN(c.rope_base, keys.model_or(kRopeBase, kDefaultRopeBase));
  KF_ASSIGN_OR_RETURN(c.compress_rope_base,
                      keys.model<float>(kCompressRopeBase));
  // Without the type llama.cpp applies linear scaling, without the factor
  // or the original length none: both load and give wrong logits.
  KF_ASSIGN_OR_RETURN(std::string_view scaling,
                      keys.model<std::string_view>(kRopeScalingType));
  if (scaling != "yarn")
    return keys.invalid_model(kRopeScalingType,
                              absl::StrCat("\"", to_absl(scaling), "\""),
                              "\"yarn\"");
  KF_ASSIGN_OR_RETURN(c.yarn_factor, keys.model<float>(kYarnFactor));
  KF_ASSIGN_OR_RETURN(c.yarn_original_context,
                      keys.positive(kYarnOriginalContext));
  KF_ASSIGN_OR_RETURN(c.yarn_beta_fast,
                      keys.model_or(kYarnBetaFast, kDefaultYarnBetaFast));
  KF_ASSIGN_OR_RETURN(c.yarn_beta_slow,
                      keys.model_or(kYarnBetaSlow, kDefaultYarnBetaSlow));
  return absl::OkStatus();
}

absl::Status read_hyper_connections(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.hc, keys.positive(kHcCount));
  KF_ASSIGN_OR_RETURN(c.sinkhorn_iterations,
                      keys.positive(kHcSinkhornIterations));
  KF_ASSIGN_OR_RETURN(c.hc_eps, keys.model<float>(kHcEps));
  KF_ASSIGN_OR_RETURN(c.norm_eps, keys.model<float>(kNormEps));
  if (keys.has_model(kEmbeddingLengthOut)) {
    KF_ASSIGN_OR_RETURN(uint32_t out,
                        keys.model<uint32_t>(kEmbeddingLengthOut));
    if (out != c.hc * c.n_embd)
      return keys.invalid_model(
          kEmbeddingLengthOut, out,
          absl::StrCat(c.hc * c.n_embd, " (streams times embedding length)"));
  }
  return absl::OkStatus();
}

absl::Status read_experts(const Keys &keys, Config &c) {
  KF_ASSIGN_OR_RETURN(c.n_expert, keys.positive(kExpertCount));
  KF_ASSIGN_OR_RETURN(c.n_expert_used, keys.positive(kExpertUsedCount));
  if (c.n_expert_used > c.n_expert)
    return keys.invalid_model(
        kExpertUsedCount, c.n_expert_used,
        absl::StrCat("at most the ", c.n_expert, " experts"));
  KF_ASSIGN_OR_RETURN(c.n_expert_shared, keys.positive(kExpertSharedCount));
  KF_ASSIGN_OR_RETURN(c.n_ff_exp, keys.positive(kExpertFfLength));
  KF_ASSIGN_OR_RETURN(c.route_scale, keys.model<float>(kExpertWeightsScale));
  KF_ASSIGN_OR_RETURN(c.normalize_weights,
                      keys.model<bool>(kExpertWeightsNorm));
  KF_ASSIGN_OR_RETURN(uint32_t gating, keys.model<uint32_t>(kExpertGatingFunc));
  if (gating != kSqrtSoftplusGating)
    return keys.invalid_model(kExpertGatingFunc, gating,
                              "4 (sqrt-softplus scoring)");
  KF_ASSIGN_OR_RETURN(c.hash_layers, keys.model<uint32_t>(kHashLayerCount));
  if (c.hash_layers > c.n_layer)
    return keys.invalid_model(
        kHashLayerCount, c.hash_layers,
        absl::StrCat("at most the ", c.n_layer, " layers"));
  KF_ASSIGN_OR_RETURN(c.swiglu_clamp_exp,
                      keys.per_layer(kSwigluClampExp, c.n_layer));
  // The shared expert is clamped too (model §4.5); llama.cpp defaults its
  // clamp to the routed experts'.
  if (keys.has_model(kSwigluClampShexp)) {
    KF_ASSIGN_OR_RETURN(c.swiglu_clamp_shexp,
                        keys.per_layer(kSwigluClampShexp, c.n_layer));
  } else {
    c.swiglu_clamp_shexp = c.swiglu_clamp_exp;
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Config> Config::from_gguf(const gguf::File &file) {
  Keys keys(file);
  KF_ASSIGN_OR_RETURN(std::string_view architecture,
                      keys.get<std::string_view>(kArchitectureKey));
  if (architecture != kArchitecture)
    return keys.invalid(kArchitectureKey,
                        absl::StrCat("\"", to_absl(architecture), "\""),
                        absl::StrCat("\"", to_absl(kArchitecture), "\""));
  Config c;
  KF_ASSIGN_OR_RETURN(c.n_embd, keys.positive(kEmbeddingLength));
  KF_ASSIGN_OR_RETURN(c.n_layer, keys.positive(kBlockCount));
  KF_ASSIGN_OR_RETURN(c.context_length, keys.positive(kContextLength));
  if (keys.has_model(kNextnPredictLayers)) {
    KF_ASSIGN_OR_RETURN(uint32_t nextn,
                        keys.model<uint32_t>(kNextnPredictLayers));
    if (nextn != 0)
      return keys.invalid_model(
          kNextnPredictLayers, nextn,
          "0: Kernelforge does not run MTP or DSpark stages yet");
  }
  KF_RETURN_IF_ERROR(read_vocabulary(keys, file, c));
  KF_RETURN_IF_ERROR(read_attention(keys, c));
  KF_RETURN_IF_ERROR(read_rope(keys, c));
  KF_RETURN_IF_ERROR(read_hyper_connections(keys, c));
  KF_RETURN_IF_ERROR(read_experts(keys, c));
  return c;
}

std::vector<gguf::KeyValue> Config::gguf_metadata() const {
  std::vector<gguf::KeyValue> kv;
  kv.push_back({std::string(kArchitectureKey), std::string(kArchitecture)});
  auto add = [&](std::string_view suffix, gguf::Value value) {
    kv.push_back({model_key(suffix), std::move(value)});
  };
  add(kContextLength, context_length);
  add(kEmbeddingLength, n_embd);
  add(kEmbeddingLengthOut, hc * n_embd);
  add(kBlockCount, n_layer);
  add(kVocabSize, n_vocab);
  add(kHeadCount, n_head);
  add(kHeadCountKv, uint32_t{1});
  add(kKeyLength, head_dim);
  add(kValueLength, head_dim);
  add(kNormEps, norm_eps);
  add(kQLoraRank, q_lora_rank);
  add(kSlidingWindow, window);
  add(kOutputGroups, o_groups);
  add(kOutputLoraRank, o_lora_rank);
  add(kCompressRatios, compress_ratios);
  add(kCompressRopeBase, compress_rope_base);
  add(kIndexerHeads, indexer_heads);
  add(kIndexerHeadDim, indexer_head_dim);
  add(kIndexerTopK, indexer_top_k);
  add(kRopeDim, rope_dim);
  add(kRopeBase, rope_base);
  add(kRopeScalingType, "yarn");
  add(kYarnFactor, yarn_factor);
  add(kYarnOriginalContext, yarn_original_context);
  add(kYarnBetaFast, yarn_beta_fast);
  add(kYarnBetaSlow, yarn_beta_slow);
  add(kExpertCount, n_expert);
  add(kExpertUsedCount, n_expert_used);
  add(kExpertSharedCount, n_expert_shared);
  add(kExpertFfLength, n_ff_exp);
  add(kExpertWeightsScale, route_scale);
  add(kExpertWeightsNorm, normalize_weights);
  add(kExpertGatingFunc, kSqrtSoftplusGating);
  add(kSwigluClampExp, swiglu_clamp_exp);
  add(kSwigluClampShexp, swiglu_clamp_shexp);
  add(kHcCount, hc);
  add(kHcSinkhornIterations, sinkhorn_iterations);
  add(kHcEps, hc_eps);
  add(kHashLayerCount, hash_layers);
  add(kNextnPredictLayers, uint32_t{0});
  return kv;
}

const char *attention_kind_name(AttentionKind kind) {
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
  switch (compress_ratios.at(layer)) {
  case 0:
    return AttentionKind::Window;
  case 4:
    return AttentionKind::Csa;
  default:
    return AttentionKind::Hca;
  }
}

uint32_t Config::compressor_halves(uint32_t layer) const {
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
