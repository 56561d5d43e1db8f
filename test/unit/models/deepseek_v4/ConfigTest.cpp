// The configuration read from deepseek4 metadata: presets, parameter counts,
// the round trip through GGUF keys and every key error. Section numbers (§)
// are those of docs/models/deepseek_v4_model.md.
#include "ModelTestUtil.h"
#include "kf/deepseek_v4/parameters.h"
#include "gmock/gmock.h"

namespace kf::deepseek_v4 {
namespace {

using testing::InMemoryFile;
using testing::modelMetadata;

Config presetConfig(std::string_view name) {
  absl::StatusOr<Preset> p = preset(name);
  EXPECT_TRUE(p.ok()) << p.status();
  return p->config;
}

TEST(Presets, FlashIsSpecSectionOne) {
  Config c = presetConfig("flash");
  EXPECT_EQ(c.nEmbd, 4096u);
  EXPECT_EQ(c.nLayer, 43u);
  EXPECT_EQ(c.nVocab, 129280u);
  EXPECT_EQ(c.bosToken, 0u);
  EXPECT_EQ(c.eosToken, 1u);
  EXPECT_EQ(c.nHead, 64u);
  EXPECT_EQ(c.headDim, 512u);
  EXPECT_EQ(c.ropeDim, 64u);
  EXPECT_EQ(c.qLoraRank, 1024u);
  EXPECT_EQ(c.oGroups, 8u);
  EXPECT_EQ(c.oLoraRank, 1024u);
  EXPECT_EQ(c.window, 128u);
  EXPECT_EQ(c.indexerHeads, 64u);
  EXPECT_EQ(c.indexerHeadDim, 128u);
  EXPECT_EQ(c.indexerTopK, 512u);
  EXPECT_EQ(c.nExpert, 256u);
  EXPECT_EQ(c.nExpertUsed, 6u);
  EXPECT_EQ(c.nExpertShared, 1u);
  EXPECT_EQ(c.nFfExp, 2048u);
  EXPECT_EQ(c.hashLayers, 3u);
  EXPECT_EQ(c.routeScale, 1.5f);
  EXPECT_EQ(c.swigluClampExp, std::vector<float>(43, 10.0f));
  EXPECT_EQ(c.swigluClampShexp, std::vector<float>(43, 10.0f));
  // §1.2: [0, 0, 4, 128, 4, 128, ..., 4]: 2 window-only, 21 CSA, 20 HCA.
  ASSERT_EQ(c.compressRatios.size(), 43u);
  int kinds[3] = {};
  for (uint32_t layer = 0; layer < 43; ++layer)
    ++kinds[static_cast<int>(c.attention(layer))];
  EXPECT_THAT(kinds, ::testing::ElementsAre(2, 21, 20));
  EXPECT_EQ(c.compressRatios[2], 4u);
  EXPECT_EQ(c.compressRatios[3], 128u);
  EXPECT_EQ(c.compressRatios[42], 4u);
}

TEST(Presets, FlashSlicesAreFlashCutShort) {
  Config flash = presetConfig("flash");
  EXPECT_EQ(presetConfig("flash-slice:43"), flash);
  Config four = presetConfig("flash-slice:4");
  EXPECT_EQ(four.compressRatios, std::vector<uint32_t>({0, 0, 4, 128}));
  EXPECT_EQ(four.hashLayers, 3u); // layers 0-2 hash-, layer 3 learned-routed
  Config cut = flash;
  cut.nLayer = 4;
  cut.compressRatios.resize(4);
  cut.swigluClampExp.resize(4);
  cut.swigluClampShexp.resize(4);
  EXPECT_EQ(four, cut);
  EXPECT_EQ(presetConfig("flash-slice:1").hashLayers, 1u);
}

TEST(Presets, TinyIsSpecSectionNineWithTheCoderVocabulary) {
  absl::StatusOr<Preset> tiny = preset("tiny");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->vocabulary, Vocabulary::DeepseekCoder);
  const Config &c = tiny->config;
  EXPECT_EQ(c.nVocab, 32256u); // §9 says 2048: the one deviation
  EXPECT_EQ(c.bosToken, 32013u);
  EXPECT_EQ(c.eosToken, 32014u);
  EXPECT_EQ(c.nEmbd, 256u);
  EXPECT_EQ(c.compressRatios, std::vector<uint32_t>({0, 0, 4, 128, 4, 128, 4}));
  EXPECT_EQ(c.hashLayers, 3u);
  EXPECT_EQ(c.nHead, 8u);
  EXPECT_EQ(c.oGroups, 4u);
  EXPECT_EQ(c.oLoraRank, 64u);
  EXPECT_EQ(c.headDim, 192u);
  EXPECT_EQ(c.ropeDim, 64u);
  EXPECT_EQ(c.qLoraRank, 128u);
  EXPECT_EQ(c.window, 16u);
  EXPECT_EQ(c.indexerHeads, 16u);
  EXPECT_EQ(c.indexerHeadDim, 128u);
  EXPECT_EQ(c.indexerTopK, 8u);
  EXPECT_EQ(c.nExpert, 16u);
  EXPECT_EQ(c.nExpertUsed, 4u);
  EXPECT_EQ(c.nFfExp, 128u);
  EXPECT_EQ(c.swigluClampExp, std::vector<float>(7, 2.0f));
  EXPECT_EQ(c.hc, 4u);
  EXPECT_EQ(c.compressRopeBase, 160000.0f);
  EXPECT_EQ(c.yarnFactor, 16.0f);
}

TEST(Presets, Errors) {
  auto error = [](std::string_view name) {
    absl::StatusOr<Preset> p = preset(name);
    EXPECT_FALSE(p.ok()) << name;
    return std::string(p.status().message());
  };
  EXPECT_EQ(error("small"), "unknown preset 'small'; expected tiny, flash or "
                            "flash-slice:N (N from 1 to 43)");
  for (std::string_view bad :
       {"flash-slice:0", "flash-slice:44", "flash-slice:", "flash-slice:x"})
    EXPECT_EQ(error(bad), "preset '" + std::string(bad) +
                              "': expected flash-slice:N with N from 1 to 43");
}

TEST(Parameters, FlashIsSpecSectionOnesDerivedSizes) {
  ParameterCount p = countParameters(presetConfig("flash"));
  // Model §1.1: about 284.3 B in total, about 13.3 B active per token without
  // the embedding, 1.06 B for the embedding and head together.
  EXPECT_EQ(p.total, 284'332'240'471);
  EXPECT_NEAR(p.total / 1e9, 284.3, 0.05);
  EXPECT_EQ(p.active, 13'270'101'591);
  EXPECT_NEAR(p.active / 1e9, 13.3, 0.05);
  EXPECT_EQ(p.embeddingAndHead, 2 * 129280 * 4096);
}

TEST(Parameters, TinyByHand) {
  // D 256, V 32256, H 8, Dh 192, Rq 128, G 4, Ro 64, Hi 16, Di 128, E 16,
  // k 4, F 128, 4 HC streams, 7 layers.
  const int64_t globals = 2 * 256 * 32256     // token_embd, output
                          + 256               // output_norm
                          + 1024 * 4 + 4 + 1; // output_hc fn, base, scale
  const int64_t everyLayer =
      256 + 8                    // attn_norm, sinks
      + 256 * 128 + 128          // q_a, q_a_norm
      + 128 * 8 * 192            // q_b
      + 256 * 192 + 192          // kv, kv norm
      + (8 * 192 / 4) * (4 * 64) // output_a: 4 groups of 2 heads
      + 4 * 64 * 256             // output_b
      + 2 * (1024 * 24 + 24 + 3) // hc attn and ffn
      + 256                      // ffn_norm
      + 256 * 16                 // router
      + 16 * 3 * 256 * 128       // routed experts
      + 3 * 256 * 128;           // shared expert
  const int64_t csa = 2 * 256 * 384 + 384 * 4 + 192    // compressor, 2 halves
                      + 256 * 16 + 128 * 16 * 128      // indexer proj, q_b
                      + 2 * 256 * 256 + 256 * 4 + 128; // its compressor
  const int64_t hca = 2 * 256 * 192 + 192 * 128 + 192;
  const int64_t gateBias = 16; // learned layers 3..6
  const int64_t total =
      globals + 7 * everyLayer + 3 * csa + 2 * hca + 4 * gateBias;
  EXPECT_EQ(total, 33'729'783);
  ParameterCount p = countParameters(presetConfig("tiny"));
  EXPECT_EQ(p.total, total);
  // Without the embedding and 12 of 16 routed experts in each layer.
  EXPECT_EQ(p.active, total - 256 * 32256 - 7 * 12 * 3 * 256 * 128);
  EXPECT_EQ(p.embeddingAndHead, 2 * 256 * 32256);
}

// The keys of a file written from `config` after `edit` changed them.
absl::StatusOr<Config> readBack(
    const Config &config,
    const std::function<void(std::vector<gguf::KeyValue> &)> &edit = nullptr) {
  std::vector<gguf::KeyValue> kv = modelMetadata(config);
  if (edit)
    edit(kv);
  InMemoryFile file;
  write(file, kv, {});
  if (!file.file.ok())
    return file.file.status();
  return Config::fromGguf(*file.file);
}

gguf::KeyValue &key(std::vector<gguf::KeyValue> &kv, std::string_view name) {
  for (gguf::KeyValue &entry : kv)
    if (entry.key == name)
      return entry;
  ADD_FAILURE() << "no key " << name;
  return kv.front();
}

void removeKey(std::vector<gguf::KeyValue> &kv, std::string_view name) {
  std::erase_if(kv, [&](const gguf::KeyValue &e) { return e.key == name; });
}

TEST(FromGguf, ReadsBackEveryPreset) {
  for (std::string_view name : {"tiny", "flash", "flash-slice:4"}) {
    Config c = presetConfig(name);
    absl::StatusOr<Config> back = readBack(c);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, c) << name;
  }
}

TEST(FromGguf, AcceptsWhatLlamaCppAccepts) {
  Config c = presetConfig("tiny");
  absl::StatusOr<Config> back = readBack(c, [](auto &kv) {
    // Signed ratios, a scalar clamp, the MTP stages' extra ratios, and the
    // optional keys left to their defaults.
    key(kv, "deepseek4.attention.compress_ratios").value =
        std::vector<int32_t>{0, 0, 4, 128, 4, 128, 4, 0, 0, 0};
    key(kv, "deepseek4.swiglu_clamp_exp").value = 2.0f;
    for (std::string_view optional :
         {"deepseek4.swiglu_clamp_shexp", "deepseek4.rope.freq_base",
          "deepseek4.rope.scaling.yarn_beta_fast",
          "deepseek4.rope.scaling.yarn_beta_slow",
          "deepseek4.embedding_length_out", "deepseek4.nextn_predict_layers",
          "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"})
      removeKey(kv, optional);
  });
  ASSERT_TRUE(back.ok()) << back.status();
  c.bosToken.reset();
  c.eosToken.reset();
  EXPECT_EQ(*back, c);
}

TEST(FromGguf, TakesTheVocabularySizeFromTheTokens) {
  Config c = presetConfig("tiny");
  auto withTokens = [](size_t n) {
    return [n](std::vector<gguf::KeyValue> &kv) {
      removeKey(kv, "deepseek4.vocab_size");
      kv.push_back({"tokenizer.ggml.tokens", std::vector<std::string>(n, "t")});
    };
  };
  absl::StatusOr<Config> back = readBack(c, withTokens(32256));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->nVocab, 32256u);
  EXPECT_EQ(readBack(c, withTokens(32000)).status().message(),
            "test.gguf: key 'tokenizer.ggml.bos_token_id' is 32013, expected "
            "a token id below 32000");
  EXPECT_EQ(readBack(c,
                     [](auto &kv) {
                       kv.push_back({"tokenizer.ggml.tokens",
                                     std::vector<std::string>(10, "t")});
                     })
                .status()
                .message(),
            "test.gguf: key 'deepseek4.vocab_size' is 32256, expected 10, the "
            "length of 'tokenizer.ggml.tokens'");
}

TEST(FromGguf, KeyErrors) {
  const Config tiny = presetConfig("tiny");
  using Edit = std::function<void(std::vector<gguf::KeyValue> &)>;
  auto set = [](std::string_view name, gguf::Value value) -> Edit {
    return [name, value](auto &kv) { key(kv, name).value = value; };
  };
  auto remove = [](std::string_view name) -> Edit {
    return [name](auto &kv) { removeKey(kv, name); };
  };
  const std::pair<Edit, std::string> cases[] = {
      {remove("deepseek4.attention.q_lora_rank"),
       "no key 'deepseek4.attention.q_lora_rank'"},
      {remove("deepseek4.rope.scaling.factor"),
       "no key 'deepseek4.rope.scaling.factor'"},
      {remove("tokenizer.ggml.model"), "no key 'tokenizer.ggml.model'"},
      {[](auto &kv) { removeKey(kv, "deepseek4.vocab_size"); },
       "no key 'deepseek4.vocab_size' and no 'tokenizer.ggml.tokens': the "
       "vocabulary size is unknown"},
      {set("deepseek4.attention.head_count", int32_t{8}),
       "key 'deepseek4.attention.head_count' has type int32, expected "
       "uint32"},
      {set("general.architecture", "llama"),
       "key 'general.architecture' is \"llama\", expected \"deepseek4\""},
      {set("deepseek4.block_count", uint32_t{0}),
       "key 'deepseek4.block_count' is 0, expected at least 1"},
      {set("deepseek4.attention.head_count_kv", uint32_t{8}),
       "key 'deepseek4.attention.head_count_kv' is 8, expected 1 "
       "(DeepSeek-V4 has one KV latent)"},
      {set("deepseek4.attention.value_length", uint32_t{128}),
       "key 'deepseek4.attention.value_length' is 128, expected 192, the key "
       "length (K and V are one latent)"},
      {set("deepseek4.attention.output_group_count", uint32_t{3}),
       "key 'deepseek4.attention.output_group_count' is 3, expected a "
       "divisor of the 8 heads"},
      {set("deepseek4.attention.compress_ratios",
           std::vector<uint32_t>{0, 0, 4, 128, 4, 128}),
       "key 'deepseek4.attention.compress_ratios' has 6 values, expected at "
       "least 7 (one per layer)"},
      {set("deepseek4.attention.compress_ratios",
           std::vector<uint32_t>{0, 0, 4, 128, 8, 128, 4}),
       "key 'deepseek4.attention.compress_ratios' has 8 for layer 4, "
       "expected 0, 4 or 128"},
      {set("deepseek4.attention.compress_ratios",
           std::vector<float>{0, 0, 4, 128, 4, 128, 4}),
       "key 'deepseek4.attention.compress_ratios' has type array of "
       "float32, expected array of uint32 or int32"},
      {set("deepseek4.attention.indexer.key_length", uint32_t{96}),
       "key 'deepseek4.attention.indexer.key_length' is 96, expected a power "
       "of two (the indexer's Hadamard transform)"},
      {set("deepseek4.rope.dimension_count", uint32_t{256}),
       "key 'deepseek4.rope.dimension_count' is 256, expected an even number "
       "of dimensions, fewer than 128 (the head and indexer key lengths)"},
      // The indexer's keys must keep dims that do not rotate.
      {set("deepseek4.rope.dimension_count", uint32_t{128}),
       "key 'deepseek4.rope.dimension_count' is 128, expected an even number "
       "of dimensions, fewer than 128 (the head and indexer key lengths)"},
      {set("deepseek4.rope.scaling.type", "linear"),
       "key 'deepseek4.rope.scaling.type' is \"linear\", expected \"yarn\""},
      {set("deepseek4.expert_used_count", uint32_t{17}),
       "key 'deepseek4.expert_used_count' is 17, expected at most the 16 "
       "experts"},
      {set("deepseek4.expert_gating_func", uint32_t{1}),
       "key 'deepseek4.expert_gating_func' is 1, expected 4 (sqrt-softplus "
       "scoring)"},
      {set("deepseek4.hash_layer_count", uint32_t{8}),
       "key 'deepseek4.hash_layer_count' is 8, expected at most the 7 "
       "layers"},
      {set("deepseek4.swiglu_clamp_exp", std::vector<float>(6, 2.0f)),
       "key 'deepseek4.swiglu_clamp_exp' has 6 values, expected 7 (one per "
       "layer) or a single value"},
      {set("deepseek4.embedding_length_out", uint32_t{256}),
       "key 'deepseek4.embedding_length_out' is 256, expected 1024 (streams "
       "times embedding length)"},
      {set("deepseek4.nextn_predict_layers", uint32_t{1}),
       "key 'deepseek4.nextn_predict_layers' is 1, expected 0: Kernelforge "
       "does not run MTP or DSpark stages yet"},
  };
  for (const auto &[edit, message] : cases) {
    absl::StatusOr<Config> back = readBack(tiny, edit);
    EXPECT_FALSE(back.ok()) << message;
    EXPECT_EQ(back.status().message(), "test.gguf: " + message);
  }
}

} // namespace
} // namespace kf::deepseek_v4
