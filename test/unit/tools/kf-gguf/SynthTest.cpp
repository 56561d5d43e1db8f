// kf-gguf synth and config: a synthetic tiny model read back, validated,
// verified and shown; reproducible bytes; recipes; errors and the command
// line.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "RunTool.h"
#include "TempDir.h"
#include "commands.h"
#include "kf/deepseek_v4/parameters.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/tensor_formats.h"
#include "kf/deepseek_v4/tensors.h"
#include "gmock/gmock.h"

namespace kf::gguf_tool {
namespace {

using kf::testing::TempDir;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

const std::string kVocab =
    KF_TEST_DATA_DIR "/gguf/ggml-vocab-deepseek-coder.gguf";

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

SynthOptions tinyOptions(uint64_t seed, int threads) {
  SynthOptions options;
  options.preset = "tiny";
  options.seed = seed;
  options.vocab = kVocab;
  options.threads = threads;
  return options;
}

// One synthetic tiny model for the tests that only read it.
class SynthTiny : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    path_ = dir_->file("tiny.gguf");
    std::ostringstream log;
    SynthOptions options = tinyOptions(1, 2);
    options.log = &log;
    absl::Status s = synth(options, path_);
    ASSERT_TRUE(s.ok()) << s;
    log_ = log.str();
  }
  static void TearDownTestSuite() { delete dir_; }

  static gguf::File open() {
    absl::StatusOr<gguf::File> file = gguf::File::open(path_);
    EXPECT_TRUE(file.ok()) << file.status();
    return *std::move(file);
  }

  static inline TempDir *dir_ = nullptr;
  static inline std::string path_, log_;
};

TEST_F(SynthTiny, ReadsBackAsThePresetAndValidates) {
  gguf::File file = open();
  absl::StatusOr<deepseek_v4::Config> config =
      deepseek_v4::Config::fromGguf(file);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config, deepseek_v4::preset("tiny")->config);
  absl::Status valid = deepseek_v4::validateTensors(*config, file);
  EXPECT_TRUE(valid.ok()) << valid;
  EXPECT_EQ(log_, path_ +
                      ": tiny, seed 1: 212 tensors (f32 108, i32 3, mxfp4 "
                      "21, q8_0 80), 33729783 parameters, 32834268 bytes of "
                      "tensor data\n");
}

TEST_F(SynthTiny, EmbedsTheCoderVocabularyAndSaysHowItWasMade) {
  gguf::File file = open();
  absl::StatusOr<gguf::File> vocab = gguf::File::open(kVocab);
  ASSERT_TRUE(vocab.ok());
  int tokenizerKeys = 0;
  for (const gguf::KeyValue &kv : vocab->metadata()) {
    if (!kv.key.starts_with("tokenizer."))
      continue;
    ++tokenizerKeys;
    const gguf::Value *copied = file.find(kv.key);
    ASSERT_NE(copied, nullptr) << kv.key;
    EXPECT_EQ(*copied, kv.value) << kv.key;
  }
  EXPECT_EQ(tokenizerKeys, 10);
  EXPECT_EQ(*file.get<std::string_view>("kernelforge.synth.preset"), "tiny");
  EXPECT_EQ(*file.get<uint64_t>("kernelforge.synth.seed"), 1u);
  EXPECT_EQ(*file.get<std::string_view>("kernelforge.synth.margins"),
            "natural");
  EXPECT_EQ(*file.get<std::string_view>("kernelforge.synth.recipe"),
            deepseek_v4::kDefaultRecipe);
  EXPECT_EQ(*file.get<uint32_t>("general.quantization_version"), 2u);
}

TEST_F(SynthTiny, UsesTheDefaultRecipe) {
  gguf::File file = open();
  auto format = [&](const std::string &name) {
    const gguf::TensorInfo *t = file.findTensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? std::string(formatInfo(t->format).name) : "";
  };
  for (const char *name :
       {"token_embd.weight", "output.weight", "blk.0.attn_q_a.weight",
        "blk.0.attn_q_b.weight", "blk.0.attn_kv.weight",
        "blk.0.attn_output_a.weight", "blk.0.attn_output_b.weight",
        "blk.2.indexer.proj.weight", "blk.2.indexer.attn_q_b.weight",
        "blk.2.indexer_compressor_kv.weight",
        "blk.3.attn_compressor_gate.weight", "blk.3.ffn_down_shexp.weight"})
    EXPECT_EQ(format(name), "q8_0") << name;
  for (const char *name :
       {"blk.0.ffn_gate_exps.weight", "blk.6.ffn_down_exps.weight"})
    EXPECT_EQ(format(name), "mxfp4") << name;
  for (const char *name :
       {"output_norm.weight", "output_hc_fn.weight", "blk.0.hc_attn_fn.weight",
        "blk.0.hc_attn_scale.weight", "blk.0.attn_sinks.weight",
        "blk.2.attn_compressor_ape.weight", "blk.3.exp_probs_b.bias",
        "blk.4.ffn_gate_inp.weight"})
    EXPECT_EQ(format(name), "f32") << name;
  EXPECT_EQ(format("blk.2.ffn_gate_tid2eid.weight"), "i32");
}

TEST_F(SynthTiny, VerifiesAndShowsItsTensors) {
  gguf::File file = open();
  std::ostringstream verified;
  absl::StatusOr<int> bad = verify(file, verified);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(*bad, 0);
  EXPECT_THAT(verified.str(),
              HasSubstr(": 212 tensors, 0 with non-finite values, 0 not "
                        "checked\n"));
  std::ostringstream shown;
  info(file, shown);
  EXPECT_THAT(shown.str(), HasSubstr("57 metadata keys, 212 tensors"));
  for (const char *line : {
           R"(token_embd\.weight +\[256, 32256\] +q8_0 +8773632)",
           R"(blk\.0\.ffn_gate_tid2eid\.weight +\[4, 32256\] +i32 +516096)",
           R"(blk\.2\.indexer\.proj\.weight +\[256, 16\] +q8_0)",
           R"(blk\.2\.attn_compressor_ape\.weight +\[384, 4\] +f32)",
           R"(blk\.3\.attn_compressor_ape\.weight +\[192, 128\] +f32)",
           R"(blk\.3\.attn_output_a\.weight +\[384, 256\] +q8_0)",
           R"(blk\.6\.ffn_up_exps\.weight +\[256, 128, 16\] +mxfp4 +278528)",
           R"(blk\.6\.exp_probs_b\.bias +\[16\] +f32 +64)",
       })
    EXPECT_THAT(shown.str(), ContainsRegex(line));
}

TEST_F(SynthTiny, IsTheSameBytesForTheSameSeedOnAnyThreads) {
  std::vector<uint8_t> reference = fileBytes(path_);
  TempDir dir;
  for (int threads : {2, 1}) {
    std::string again = dir.file("again.gguf");
    ASSERT_TRUE(synth(tinyOptions(1, threads), again).ok());
    EXPECT_TRUE(fileBytes(again) == reference) << threads << " threads";
  }
  std::string other = dir.file("other.gguf");
  ASSERT_TRUE(synth(tinyOptions(2, 2), other).ok());
  std::vector<uint8_t> otherBytes = fileBytes(other);
  ASSERT_EQ(otherBytes.size(), reference.size());
  EXPECT_FALSE(otherBytes == reference);
}

TEST(Synth, UserRulesComeFirstWithinWhatATensorAccepts) {
  TempDir dir;
  SynthOptions options = tinyOptions(1, 2);
  // q4_k needs rows of 256: the 128-wide down projections fall back to the
  // default. Tensors whose kind fixes their format (norms, HC bases) pass
  // over the bf16 rule silently, and "keep" leaves the head to the default.
  options.recipe = R"(.*_exps\.weight=q4_k,output\.weight=keep,)"
                   R"((token_embd|.*_ape|.*hc_.*|.*_norm)\.weight=bf16)";
  std::ostringstream log;
  options.log = &log;
  std::string path = dir.file("bf16.gguf");
  absl::Status s = synth(options, path);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<gguf::File> file = gguf::File::open(path);
  ASSERT_TRUE(file.ok());
  auto format = [&](const std::string &name) {
    return std::string(formatInfo(file->findTensor(name)->format).name);
  };
  EXPECT_EQ(format("blk.0.ffn_up_exps.weight"), "q4_k");
  EXPECT_EQ(format("blk.0.ffn_down_exps.weight"), "mxfp4");
  EXPECT_EQ(format("output.weight"), "q8_0");
  EXPECT_EQ(format("token_embd.weight"), "bf16");
  EXPECT_EQ(format("blk.2.attn_compressor_ape.weight"), "bf16");
  EXPECT_EQ(format("blk.0.hc_attn_fn.weight"), "bf16");
  EXPECT_EQ(format("blk.0.attn_norm.weight"), "f32");
  EXPECT_EQ(format("blk.0.hc_attn_base.weight"), "f32");
  EXPECT_EQ(format("blk.0.attn_q_a.weight"), "q8_0");
  EXPECT_EQ(format("blk.0.ffn_gate_tid2eid.weight"), "i32");
  std::string warning = "warning: tensor 'blk.0.ffn_down_exps.weight' has "
                        "rows of 128 elements, not a multiple of 256 (the "
                        "block size of q4_k); rule '.*_exps\\\\.weight=q4_k' "
                        "passed over\n"; // quoted() escapes the backslash
  EXPECT_THAT(log.str(), ::testing::StartsWith(warning));
  EXPECT_EQ(*file->get<std::string_view>("kernelforge.synth.recipe"),
            std::string(*options.recipe) + "," +
                std::string(deepseek_v4::kDefaultRecipe));
  absl::StatusOr<deepseek_v4::Config> config =
      deepseek_v4::Config::fromGguf(*file);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(deepseek_v4::validateTensors(*config, *file).ok());
}

TEST(Synth, Errors) {
  TempDir dir;
  std::string out = dir.file("out.gguf");
  auto error = [&](SynthOptions options) {
    absl::Status s = synth(options, out);
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  };
  SynthOptions options = tinyOptions(1, 1);
  options.vocab = dir.file("missing.gguf");
  EXPECT_EQ(error(options),
            options.vocab +
                ": cannot open: No such file or directory (the tiny preset "
                "embeds llama.cpp's deepseek-coder vocabulary, "
                "models/ggml-vocab-deepseek-coder.gguf: pass it with --vocab "
                "FILE)");
  options.vocab = KF_TEST_DATA_DIR "/gguf/ggml-vocab-deepseek-llm.gguf";
  EXPECT_EQ(error(options),
            options.vocab +
                ": 102400 tokens, bos 100000, eos 100001; the tiny preset "
                "needs deepseek-coder's 32256 tokens, bos 32013, eos 32014");
  options = tinyOptions(1, 1);
  options.preset = "huge";
  EXPECT_THAT(error(options), ::testing::StartsWith("unknown preset 'huge'"));
  options = tinyOptions(1, 1);
  options.recipe = "attn_.*=q9_9";
  EXPECT_THAT(error(options),
              ::testing::StartsWith("recipe rule 1 'attn_.*=q9_9': unknown "
                                    "format 'q9_9'"));
  EXPECT_THAT(dir.files(), ::testing::IsEmpty());
}

TEST(SynthCommandLine, WritesTinyWithTheDefaultVocabulary) {
  TempDir dir;
  std::string out = dir.file("tiny.gguf");
  Ran ran = runTool({"synth", "--preset", "tiny", "--seed", "5", "--threads",
                     "2", "-o", out});
  EXPECT_EQ(ran.code, 0) << ran.err;
  EXPECT_THAT(ran.err, ::testing::StartsWith(out + ": tiny, seed 5: "));
  Ran config = runTool({"config", out});
  EXPECT_EQ(config.code, 0) << config.err;
  EXPECT_THAT(config.out,
              ::testing::StartsWith("deepseek4 configuration of " + out));
  EXPECT_THAT(config.out, ContainsRegex(R"(total +33729783 \(33\.73 M\))"));
}

TEST(SynthCommandLine, WideMarginsAreRecordedAndDrawn) {
  TempDir dir;
  std::string natural = dir.file("natural.gguf"), wide = dir.file("wide.gguf");
  ASSERT_EQ(runTool({"synth", "--preset", "tiny", "--seed", "5", "-o", natural,
                     "--margins", "natural"})
                .code,
            0);
  ASSERT_EQ(runTool({"synth", "--preset", "tiny", "--seed", "5", "-o", wide,
                     "--margins", "wide"})
                .code,
            0);
  absl::StatusOr<gguf::File> a = gguf::File::open(natural);
  absl::StatusOr<gguf::File> b = gguf::File::open(wide);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a->get<std::string_view>("kernelforge.synth.margins"), "natural");
  EXPECT_EQ(*b->get<std::string_view>("kernelforge.synth.margins"), "wide");
  auto same = [&](std::string_view name) {
    std::span<const uint8_t> x = a->data(*a->findTensor(name));
    std::span<const uint8_t> y = b->data(*b->findTensor(name));
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  };
  // The head, the embedding and a learned layer's bias differ; a
  // projection does not.
  for (std::string_view name :
       {"output.weight", "token_embd.weight", "blk.3.exp_probs_b.bias"})
    EXPECT_FALSE(same(name)) << name;
  EXPECT_TRUE(same("blk.0.attn_q_a.weight"));
}

TEST(ConfigCommandLine, PrintsPresetsAndRejectsInvalidFiles) {
  Ran flash = runTool({"config", "--preset", "flash"});
  EXPECT_EQ(flash.code, 0);
  EXPECT_THAT(flash.out,
              ContainsRegex(R"(layers +43: 2 window-only, 21 CSA, )"
                            R"(20 HCA; layers below 3 hash-routed)"));
  EXPECT_THAT(flash.out, ContainsRegex(R"(total +284332240471 \(284\.33 B\))"));
  EXPECT_THAT(flash.out,
              ContainsRegex(R"(active per token +13270101591 \(13\.27 B\))"));
  Ran vocabOnly = runTool(
      {"config", KF_TEST_DATA_DIR "/gguf/ggml-vocab-deepseek-coder.gguf"});
  EXPECT_EQ(vocabOnly.code, 1);
  EXPECT_THAT(vocabOnly.err,
              HasSubstr("key 'general.architecture' is \"llama\", expected "
                        "\"deepseek4\""));
}

TEST(SynthCommandLine, UsageErrorsExitWithTwo) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"synth", "--preset", "tiny", "-o", "x.gguf"}, "synth needs --seed"},
      {{"synth", "--preset", "tiny", "--seed", "-1", "-o", "x.gguf"},
       "--seed is '-1', expected a number from 0 to 2^64 - 1"},
      {{"synth", "x.gguf", "--preset", "tiny", "--seed", "1", "-o", "y"},
       "synth takes 0 arguments, got 1"},
      {{"synth", "--preset", "tiny", "--seed", "1", "-o", "x.gguf", "--margins",
        "huge"},
       "--margins is 'huge', expected natural or wide"},
      {{"config"}, "config takes a FILE or --preset NAME"},
      {{"config", "a.gguf", "--preset", "tiny"},
       "config takes a FILE or --preset NAME"},
      {{"config", "a", "b"}, "config takes 0 to 1 arguments, got 2"},
  };
  for (const auto &[args, message] : cases) {
    Ran ran = runTool(args);
    EXPECT_EQ(ran.code, 2) << message;
    EXPECT_EQ(ran.err, "kf-gguf: " + message + " (kf-gguf --help for usage)\n");
  }
}

} // namespace
} // namespace kf::gguf_tool
