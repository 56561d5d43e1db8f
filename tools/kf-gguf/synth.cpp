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

// The tokenizer keys of the file: the deepseek-coder vocabulary copied
// whole, or only a token count.
absl::StatusOr<std::vector<gguf::KeyValue>>
tokenizer_metadata(const dsv4::Preset &preset, const std::string &vocab_path) {
  const dsv4::Config &c = preset.config;
  if (preset.vocabulary == dsv4::Vocabulary::CountOnly)
    return std::vector<gguf::KeyValue>{
        {"tokenizer.ggml.model", "none"},
        {"tokenizer.ggml.bos_token_id", *c.bos_token},
        {"tokenizer.ggml.eos_token_id", *c.eos_token},
    };
  absl::StatusOr<gguf::File> vocab = gguf::File::open(vocab_path);
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
  if (tokens.size() != c.n_vocab || bos != *c.bos_token || eos != *c.eos_token)
    return absl::InvalidArgumentError(absl::StrCat(
        vocab_path, ": ", tokens.size(), " tokens, bos ", bos, ", eos ", eos,
        "; the ", preset.name, " preset needs deepseek-coder's ", c.n_vocab,
        " tokens, bos ", *c.bos_token, ", eos ", *c.eos_token));
  std::vector<gguf::KeyValue> keys;
  for (const gguf::KeyValue &kv : vocab->metadata())
    if (kv.key.starts_with(kTokenizerPrefix))
      keys.push_back(kv);
  return keys;
}

// Fills `dst` with the tensor's values encoded in `format`, rows on
// `threads` threads.
absl::Status draw_tensor(const dsv4::TensorSpec &spec,
                         const dsv4::Config &config, uint64_t seed,
                         Format format, int threads, Progress &progress,
                         std::span<uint8_t> dst) {
  dsv4::TensorDraw draw(spec, config, seed);
  const uint64_t row_size = *row_bytes(format, spec.shape[0]);
  return parallel_rows(
      spec.rows(), spec.shape[0], threads, progress, spec.name,
      [&](int64_t r, std::span<float> values) {
        std::span<uint8_t> out = dst.subspan(r * row_size, row_size);
        if (format == Format::I32) { // an integer table: stored as drawn
          std::vector<int32_t> experts(values.size());
          draw.experts(r, experts);
          std::memcpy(out.data(), experts.data(), row_size);
          return absl::OkStatus();
        }
        draw.row(r, values);
        return kf::quantize(format, values, out);
      });
}

} // namespace

absl::Status synth(const SynthOptions &options, const std::string &out_path) {
  KF_ASSIGN_OR_RETURN(dsv4::Preset preset, dsv4::preset(options.preset));
  const dsv4::Config &config = preset.config;
  std::vector<dsv4::TensorSpec> specs = dsv4::tensor_specs(config);
  KF_ASSIGN_OR_RETURN(std::vector<Format> formats,
                      dsv4::tensor_formats(specs, options.recipe, options.log));
  KF_ASSIGN_OR_RETURN(std::vector<gguf::KeyValue> tokenizer,
                      tokenizer_metadata(preset, options.vocab));

  bool quantized = false;
  uint64_t total_rows = 0, data_bytes = 0;
  std::map<std::string_view, int> tensors_per_format;
  for (size_t i = 0; i < specs.size(); ++i) {
    const dsv4::TensorSpec &spec = specs[i];
    Format format = formats[i];
    quantized |= format_info(format).block_elems > 1;
    total_rows += spec.rows();
    data_bytes += *row_bytes(format, spec.shape[0]) * spec.rows();
    ++tensors_per_format[format_info(format).name];
  }

  gguf::Writer writer;
  std::vector<gguf::KeyValue> model = config.gguf_metadata();
  writer.add_metadata(model[0].key, model[0].value); // general.architecture
  writer.add_metadata("general.name", absl::StrCat("DeepSeek-V4 ", preset.name,
                                                   " (synthetic)"));
  if (quantized)
    writer.add_metadata(std::string(gguf::kQuantizationVersionKey),
                        gguf::kQuantizationVersion);
  for (size_t i = 1; i < model.size(); ++i)
    writer.add_metadata(model[i].key, model[i].value);
  for (gguf::KeyValue &kv : tokenizer)
    writer.add_metadata(std::move(kv.key), std::move(kv.value));
  std::string recipe = std::string(dsv4::kDefaultRecipe);
  if (options.recipe)
    recipe = absl::StrCat(*options.recipe, ",", recipe);
  writer.add_metadata(std::string(kPresetKey), preset.name);
  writer.add_metadata(std::string(kSeedKey), options.seed);
  writer.add_metadata(std::string(kRecipeKey), recipe);

  Progress progress(options.progress, total_rows);
  for (size_t i = 0; i < specs.size(); ++i)
    writer.add_tensor(
        specs[i].name, formats[i], specs[i].shape,
        [&, &spec = specs[i], format = formats[i]](std::span<uint8_t> dst) {
          return draw_tensor(spec, config, options.seed, format,
                             options.threads, progress, dst);
        });
  absl::Status written = writer.write(out_path);
  progress.finish();
  KF_RETURN_IF_ERROR(written);
  if (options.log) {
    std::vector<std::string> counts;
    for (const auto &[format, n] : tensors_per_format)
      counts.push_back(absl::StrCat(to_absl(format), " ", n));
    *options.log << out_path << ": " << preset.name << ", seed " << options.seed
                 << ": " << specs.size() << " tensors ("
                 << absl::StrJoin(counts, ", ") << "), "
                 << dsv4::count_parameters(config).total << " parameters, "
                 << data_bytes << " bytes of tensor data\n";
  }
  return absl::OkStatus();
}

} // namespace kf::gguf_tool
