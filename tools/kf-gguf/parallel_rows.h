// Work on the rows of a tensor, spread over threads: the threading of
// kf-gguf's quantize and synth.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "progress.h"

namespace kf::gguf_tool {

// Calls `work(row, scratch)` for every row in [0, rows), on `threads`
// threads, the calling thread among them; `scratch` is that thread's buffer
// of `rowElements` floats. Rows are claimed in batches of about 64 Ki
// elements, so which thread does a row depends on timing: `work` must give
// a row the same result whichever thread runs it. The calling thread draws
// `progress`, labelled `label`. Stops at the first error and returns it.
absl::Status
parallelRows(int64_t rows, int64_t rowElements, int threads, Progress &progress,
             std::string_view label,
             absl::FunctionRef<absl::Status(int64_t, std::span<float>)> work);

} // namespace kf::gguf_tool
