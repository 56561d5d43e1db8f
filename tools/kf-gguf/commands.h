// The subcommands of kf-gguf, as functions over an opened file, so that tests
// run them without a process.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/synthetic.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/recipe.h"

namespace kf::gguf_tool {

// The header, the metadata (long arrays summarised), the tensor table, and
// bytes, parameters and bits per weight per format.
void info(const gguf::File &file, std::ostream &out);

// Decodes a tensor to a float32 .npy file of its numpy shape, atomically.
absl::Status dequant(const gguf::File &file, std::string_view tensor,
                     const std::string &outPath);

// Decodes every tensor and reports each: fine, its non-finite values, or that
// its format has no decoder. Returns how many had non-finite values.
absl::StatusOr<int> verify(const gguf::File &file, std::ostream &out);

struct QuantizeOptions {
  int threads = 1;
  // Where warnings and the summary go.
  std::ostream *log = nullptr;
  // Where the progress bar goes; null for none.
  std::ostream *progress = nullptr;
};

// Writes `outPath` atomically with every tensor the recipe chooses a new
// format for re-encoded, row by row on `threads` threads.
absl::Status quantize(const gguf::File &file, const std::string &outPath,
                      const Recipe &recipe, const QuantizeOptions &options);

// The rules synth applies after the user's: attention, indexer and
// compressor projections, shared experts, embedding and head q8_0, routed
// experts mxfp4, everything else f32.
struct SynthOptions {
  std::string preset; // a kf::deepseek_v4::preset name
  uint64_t seed = 0;
  // Rules applied before kf::deepseek_v4::kDefaultRecipe's.
  std::optional<std::string> recipe;
  // The deepseek-coder vocabulary file the tiny preset embeds.
  std::string vocab;
  int threads = 1;
  // How clear the model's routing choices are.
  deepseek_v4::Margins margins = deepseek_v4::Margins::Natural;
  // Where warnings and the summary go.
  std::ostream *log = nullptr;
  // Where the progress bar goes; null for none.
  std::ostream *progress = nullptr;
};

// Writes `outPath` atomically: a deepseek4 model of the preset with random
// weights, the same bytes for the same preset, seed and recipe whatever the
// thread count. Tensors are drawn and encoded while the file is written, one
// at a time.
absl::Status synth(const SynthOptions &options, const std::string &outPath);

// Prints a DeepSeek-V4 configuration (`source` names it: a preset or a
// file) and its parameter counts.
void printConfig(const deepseek_v4::Config &config, std::string_view source,
                 std::ostream &out);

// The command line: `args` without the program name. Returns the exit code:
// 0 on success, 1 when the command fails, 2 on a usage error.
int run(std::span<const std::string> args, std::ostream &out, std::ostream &err,
        bool progressBar);

} // namespace kf::gguf_tool
