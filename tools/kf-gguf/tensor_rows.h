// Decoding a tensor of a GGUF file to float32 a batch of whole rows at a
// time, so that a tensor larger than memory can be streamed.
#pragma once

#include <span>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "kf/runtime/gguf.h"

namespace kf::gguf_tool {

// Calls `sink` with the decoded elements of `tensor`, in order, in batches
// of whole rows (about 1 Mi elements each). Fails with a message naming the
// file and tensor when Kernelforge has no decoder for its format.
absl::Status
decodeRows(const gguf::File &file, const gguf::TensorInfo &tensor,
           absl::FunctionRef<absl::Status(std::span<const float>)> sink);

} // namespace kf::gguf_tool
