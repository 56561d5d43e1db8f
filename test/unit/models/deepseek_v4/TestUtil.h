// Helpers of the DeepSeek-V4 reference tests.
#pragma once

#include <cmath>

#include "kf/runtime/half.h"

namespace kf::deepseek_v4::reference::test {

// Whether a float is exactly a bf16 value.
inline bool isBf16(float x) { return bf16ToFp32(fp32ToBf16(x)) == x; }

// The nearest bf16 value, through the runtime's conversions.
inline double toBf16(double x) {
  return bf16ToFp32(fp32ToBf16(static_cast<float>(x)));
}

// fp32's unit roundoff.
inline constexpr double kU32 = 0x1p-24;

// Rounding a real v to bf16 (8 significant bits) moves it by at most half an
// ulp, 2^(floor(log2|v|) − 8) ≤ 2^−8·|v|.
inline double bf16RoundingBound(double v) { return 0x1p-8 * std::fabs(v); }

} // namespace kf::deepseek_v4::reference::test
