// VQ3_64's constants (docs/formats/vq3_64.md): the codebooks and the block
// scale's factor, for the reference codec (vq3_64.cpp) and the compiled
// kernels, which look the books up and multiply by the same G.
#pragma once

#include <cstdint>

namespace kf::quant {

#include "quant/vq3_64_codebook.inc"

// The global constant of the block scale: y = (fp16(d) * G) * m * C.
inline constexpr float kVq3BlockScaleFactor = 8.6373016238e-3f;
// m = 2 + u for a 3-bit u.
inline constexpr int kVq3MinSubScale = 2, kVq3MaxSubScale = 9;

} // namespace kf::quant
