// Scalar reference decoders: the golden every compiled kernel is checked
// against.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "kf/runtime/format.h"

namespace kf {

// Decodes `dst.size()` elements of format `f` from `src`, which must hold
// exactly that many elements' blocks. Bit-exact with ggml's to_float.
// Fails (InvalidArgument) when the element count is not a whole number of
// blocks, the byte count does not match, or `f` is an activation-only format.
absl::Status dequantize(Format f, std::span<const uint8_t> src,
                        std::span<float> dst);

} // namespace kf
