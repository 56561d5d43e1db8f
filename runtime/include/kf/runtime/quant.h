// The reference codecs of every format: the golden that compiled kernels are
// checked against. Scalar, plain and bit-exact with ggml where ggml defines the
// result (docs/formats/README.md); our own formats follow docs/formats/.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/format.h"

namespace kf {

// Decodes `dst.size()` elements of format `f` from `src`, which must hold
// exactly that many elements' blocks. Bit-exact with ggml's to_float.
absl::Status dequantize(Format f, std::span<const uint8_t> src,
                        std::span<float> dst);

// Encodes weights with the format's reference quantizer (ggml's
// quantize_row_*_ref where ggml has one; docs/formats/README.md and each
// quantizer's definition say what it does). `dst` must hold exactly the blocks
// of `src.size()` elements.
absl::Status quantize(Format f, std::span<const float> src,
                      std::span<uint8_t> dst);

// Encodes activations into an activation format (Q8_0, Q8_1, Q8_K, F16, BF16,
// F32) exactly as ggml's x86 CPU backend does before its dot products.
absl::Status quantizeActivation(Format f, std::span<const float> src,
                                std::span<uint8_t> dst);

// The reference dot product of one weight row `w` (format `f`) with one
// activation row `a` in formatInfo(f).dot_format, in the integer and float
// arithmetic ggml's scalar vec_dot uses. The element count follows from
// `w.size()`; `a` must hold the same number of elements.
absl::StatusOr<float> dot(Format f, std::span<const uint8_t> w,
                          std::span<const uint8_t> a);

// Which of the above a format has.
bool hasDequantize(Format f);
bool hasQuantize(Format f);
bool hasQuantizeActivation(Format f);
bool hasDot(Format f);

} // namespace kf
