// DeepSeek-V4 golden reference: RMSNorm, weightless RMS scaling and bf16
// rounding (docs/models/deepseek_v4_model.md §2, precisions §8).
//
// Tensors are spans of float. Where the spec says a tensor is bf16, its
// values here are floats that bf16 can represent exactly; roundBf16 makes
// them so. Every function keeps the precision §8 gives the operation.
#pragma once

#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

// §1: rms_norm_eps, also used inside HC and by the per-head q normalisation.
inline constexpr float kNormEps = 1e-6f;

// The nearest bf16 value, ties to even (the cast of a float tensor to bf16).
float roundBf16(float x);
void roundBf16(std::span<float> x);

// 1/sqrt(mean(x²) + eps) in fp32, with the sum of squares accumulated in
// fp64. The factor of RMSNorm (§2) and of HcPre/HcHead (§3, §4.1).
float inverseRms(std::span<const float> x, float eps);

// RMSNorm with a weight (§2): y = bf16(w ⊙ (x · inverse_rms(x))), in fp32.
// The weight is stored in bf16 and used in fp32; the output is rounded to
// bf16 because every RMSNorm of the model reads a bf16 tensor and the
// reference casts back to the input dtype; under Precision::F32 it is not
// rounded. `y` may alias `x`.
void rmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> y, Precision precision = Precision::Model);

// Weightless RMS scaling of one attention head's q in place (§4.2):
// x ← x · rsqrt(mean(x²) + eps). Under Precision::Model in bf16 arithmetic
// as §8 says — the squares, their mean, mean + eps, the rsqrt and the
// products are each rounded to bf16, as the reference's bf16 tensor
// operations round them; under F32 with inverse_rms's factor.
void rmsScale(std::span<float> x, float eps,
              Precision precision = Precision::Model);

} // namespace kf::deepseek_v4::reference
