// The storage format of every tensor of a DeepSeek-V4 model under a recipe:
// what kf-gguf synth writes and what the graph builder declares for a preset
// that has no file yet.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/format.h"

namespace kf::deepseek_v4 {

// q8_0 projections, embedding and head, shared experts; mxfp4 routed
// experts; f32 for the rest (norms, HC, sinks, compressor ape, router).
extern const std::string_view kDefaultRecipe;

// The format of each of `specs`: the one its kind allows, if it allows one;
// else that of the first rule matching its name whose format it accepts,
// `recipe`'s rules first ('keep' among them leaves the tensor to the default
// rules), then kDefaultRecipe's, which ends with "*=f32". A rule whose
// format's block does not divide a tensor's rows is passed over, with a
// warning on `log` if given. Fails only on a recipe that does not parse.
absl::StatusOr<std::vector<Format>>
tensorFormats(std::span<const TensorSpec> specs,
              std::optional<std::string_view> recipe, std::ostream *log);

} // namespace kf::deepseek_v4
