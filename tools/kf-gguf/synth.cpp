// kf-gguf synth: a complete random-weight deepseek4 GGUF for a preset,
// drawn by kf/deepseek_v4/synthetic.h and quantized per tensor by a recipe.
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "kf/deepseek_v4/parameters.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/synthetic.h"
#include "kf/deepseek_v4/tensor_formats.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "parallel_rows.h"
#include "progress.h"

namespace kf::gguf_tool {

namespace dsv4 = deepseek_v4;

namespace {

constexpr std::string_view kTokenizerPrefix = "tokenizer.";
// Where a synthetic file says how it was made.
constexpr std::string_view kPresetKey = "kernelforge.synth.preset";
constexpr std::string_view kSeedKey = "kernelforge.synth.seed";
constexpr std::string_view kRecipeKey = "kernelforge.synth.recipe";
constexpr std::string_view kMarginsKey = "kernelforge.synth.margins";

// The tokenizer keys of the file: the deepseek-coder vocabulary copied
// whole, or only a token count.
absl::StatusOr<std::vector<gguf::KeyValue>>
tokenizerMetadata(const dsv4::Preset &preset, const std::string &vocabPath) {
  const dsv4::Config &c = preset.config;
  if (preset.vocabulary == dsv4::Vocabulary::CountOnly)
    return std::vector<gguf::KeyValue>{
        {"tokenizer.ggml.model", "none"},
        {"tokenizer.ggml.bos_token_id", *c.bosToken},
        {"tokenizer.ggml.eos_token_id", *c.eosToken},
    };
  absl::StatusOr<gguf::File> vocab = gguf::File::open(vocabPath);
  if (!vocab.ok())
    return absl::Status(
        vocab.status().code(),
        absl::StrCat(vocab.status().message(), " (the ", preset.name,
                     " preset embeds llama.cpp's deepseek-coder vocabulary, "
                     "models/ggml-vocab-deepseek-coder.gguf: pass it with "
                     "--vocab FILE)"));
  KF_ASSIGN_OR_RETURN(auto tokens, vocab->get<std::span<const std::string>>(
                                       "tokenizer.ggml.tokens"));
  KF_ASSIGN_OR_RETURN(uint32_t bos,
                      vocab->get<uint32_t>("tokenizer.ggml.bos_token_id"));
  KF_ASSIGN_OR_RETURN(uint32_t eos,
                      vocab->get<uint32_t>("tokenizer.ggml.eos_token_id"));
  if (tokens.size() != c.nVocab || bos != *c.bosToken || eos != *c.eosToken)
    return absl::InvalidArgumentError(absl::StrCat(
        vocabPath, ": ", tokens.size(), " tokens, bos ", bos, ", eos ", eos,
        "; the ", preset.name, " preset needs deepseek-coder's ", c.nVocab,
        " tokens, bos ", *c.bosToken, ", eos ", *c.eosToken));
  std::vector<gguf::KeyValue> keys;
  for (const gguf::KeyValue &kv : vocab->metadata())
    if (kv.key.starts_with(kTokenizerPrefix))
      keys.push_back(kv);
  return keys;
}

// Fills `dst` with the tensor's values encoded in `format`, rows on
// `threads` threads.
absl::Status drawTensor(const dsv4::TensorSpec &spec,
                        const dsv4::Config &config, uint64_t seed,
                        dsv4::Margins margins, Format format, int threads,
                        Progress &progress, std::span<uint8_t> dst) {
  dsv4::TensorDraw draw(spec, config, seed, margins);
  const uint64_t rowSize = *rowBytes(format, spec.shape[0]);
  return parallelRows(
      spec.rows(), spec.shape[0], threads, progress, spec.name,
      [&](int64_t r, std::span<float> values) {
        std::span<uint8_t> out = dst.subspan(r * rowSize, rowSize);
        if (format == Format::I32) { // an integer table: stored as drawn
          std::vector<int32_t> experts(values.size());
          draw.experts(r, experts);
          std::memcpy(out.data(), experts.data(), rowSize);
          return absl::OkStatus();
        }
        draw.row(r, values);
        return kf::quantize(format, values, out);
      });
}

} // namespace

absl::Status synth(const SynthOptions &options, const std::string &outPath) {
  KF_ASSIGN_OR_RETURN(dsv4::Preset preset, dsv4::preset(options.preset));
  const dsv4::Config &config = preset.config;
  std::vector<dsv4::TensorSpec> specs = dsv4::tensorSpecs(config);
  KF_ASSIGN_OR_RETURN(std::vector<Format> formats,
                      dsv4::tensorFormats(specs, options.recipe, options.log));
  KF_ASSIGN_OR_RETURN(std::vector<gguf::KeyValue> tokenizer,
                      tokenizerMetadata(preset, options.vocab));

  bool quantized = false;
  uint64_t totalRows = 0, dataBytes = 0;
  std::map<std::string_view, int> tensorsPerFormat;
  for (size_t i = 0; i < specs.size(); ++i) {
    const dsv4::TensorSpec &spec = specs[i];
    Format format = formats[i];
    quantized |= formatInfo(format).blockElems > 1;
    totalRows += spec.rows();
    dataBytes += *rowBytes(format, spec.shape[0]) * spec.rows();
    ++tensorsPerFormat[formatInfo(format).name];
  }

  gguf::Writer writer;
  std::vector<gguf::KeyValue> model = config.ggufMetadata();
  writer.addMetadata(model[0].key, model[0].value); // general.architecture
  writer.addMetadata("general.name",
                     absl::StrCat("DeepSeek-V4 ", preset.name, " (synthetic)"));
  if (quantized)
    writer.addMetadata(std::string(gguf::kQuantizationVersionKey),
                       gguf::kQuantizationVersion);
  for (size_t i = 1; i < model.size(); ++i)
    writer.addMetadata(model[i].key, model[i].value);
  for (gguf::KeyValue &kv : tokenizer)
    writer.addMetadata(std::move(kv.key), std::move(kv.value));
  std::string recipe = std::string(dsv4::kDefaultRecipe);
  if (options.recipe)
    recipe = absl::StrCat(*options.recipe, ",", recipe);
  writer.addMetadata(std::string(kPresetKey), preset.name);
  writer.addMetadata(std::string(kSeedKey), options.seed);
  writer.addMetadata(std::string(kRecipeKey), recipe);
  writer.addMetadata(
      std::string(kMarginsKey),
      std::string(options.margins == dsv4::Margins::Wide ? "wide" : "natural"));

  Progress progress(options.progress, totalRows);
  for (size_t i = 0; i < specs.size(); ++i)
    writer.addTensor(
        specs[i].name, formats[i], specs[i].shape,
        [&, &spec = specs[i], format = formats[i]](std::span<uint8_t> dst) {
          return drawTensor(spec, config, options.seed, options.margins, format,
                            options.threads, progress, dst);
        });
  absl::Status written = writer.write(outPath);
  progress.finish();
  KF_RETURN_IF_ERROR(written);
  if (options.log) {
    std::vector<std::string> counts;
    for (const auto &[format, n] : tensorsPerFormat)
      counts.push_back(absl::StrCat(toAbsl(format), " ", n));
    *options.log << outPath << ": " << preset.name << ", seed " << options.seed
                 << ": " << specs.size() << " tensors ("
                 << absl::StrJoin(counts, ", ") << "), "
                 << dsv4::countParameters(config).total << " parameters, "
                 << dataBytes << " bytes of tensor data\n";
  }
  return absl::OkStatus();
}

} // namespace kf::gguf_tool
