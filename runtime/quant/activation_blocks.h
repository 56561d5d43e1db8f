// Internal: the activation block layouts that several weight families pair
// with (docs/formats/README.md: Q8_0, Q8_1 and Q8_K).
#pragma once

#include <cstdint>

namespace kf::quant {

// Q8_0: fp16 d, int8 qs[32]; y = d * q.
inline constexpr int kQ8_0Bytes = 34;
inline constexpr int kQ8_0QsOffset = 2;

// Q8_1: fp16 d, fp16 s = d * sum(qs), int8 qs[32].
inline constexpr int kQ8_1Bytes = 36;
inline constexpr int kQ8_1SumOffset = 2;
inline constexpr int kQ8_1QsOffset = 4;

// Q8_K: fp32 d, int8 qs[256], int16 bsums[16] with bsums[k] =
// sum(qs[16k..16k+15]).
inline constexpr int kQ8_KBytes = 292;
inline constexpr int kQ8_KQsOffset = 4;
inline constexpr int kQ8_KBsumsOffset = 260;

} // namespace kf::quant
