#include "kf/deepseek_v4/reference/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

using internal::check;

double yarnCorrectionDim(const RopeConfig &config, double rotations) {
  return config.ropeDim *
         std::log(config.originalLen / (2 * std::numbers::pi * rotations)) /
         (2 * std::log(config.base));
}

YarnRange yarnCorrectionRange(const RopeConfig &config) {
  double lo = std::floor(yarnCorrectionDim(config, config.betaFast));
  double hi = std::ceil(yarnCorrectionDim(config, config.betaSlow));
  return {std::max(static_cast<int>(lo), 0),
          std::min(static_cast<int>(hi), config.ropeDim - 1)};
}

void ropeFrequencies(const RopeConfig &config, std::span<float> freqs) {
  check(config.ropeDim > 0 && config.ropeDim % 2 == 0 &&
            freqs.size() == static_cast<size_t>(config.ropeDim / 2),
        "rope_frequencies: freqs must hold rope_dim/2 values");
  for (size_t i = 0; i < freqs.size(); ++i)
    freqs[i] = static_cast<float>(
        std::pow(config.base, -2.0 * static_cast<double>(i) / config.ropeDim));
  if (!config.yarn)
    return;
  YarnRange range = yarnCorrectionRange(config);
  check(range.hi > range.lo, "rope_frequencies: empty YaRN ramp");
  float span = static_cast<float>(range.hi - range.lo);
  float factor = static_cast<float>(config.yarnFactor);
  for (size_t i = 0; i < freqs.size(); ++i) {
    float r = std::clamp((static_cast<float>(i) - range.lo) / span, 0.0f, 1.0f);
    float f = freqs[i];
    freqs[i] = f * (1 - r) + (f / factor) * r;
  }
}

namespace {

// (a + jb) · (cos θ + j·sign·sin θ) for every pair, θ = fl32(pos) · f_i.
void rotate(std::span<float> x, int64_t pos, std::span<const float> freqs,
            float sign, Precision precision) {
  check(x.size() == 2 * freqs.size(),
        "rope: the slice must hold two values per frequency");
  float p = static_cast<float>(pos);
  for (size_t i = 0; i < freqs.size(); ++i) {
    float angle = p * freqs[i];
    // The reference's polar() table is complex64: cos and sin held in fp32.
    float c = static_cast<float>(std::cos(static_cast<double>(angle)));
    float s = sign * static_cast<float>(std::sin(static_cast<double>(angle)));
    float a = x[2 * i];
    float b = x[2 * i + 1];
    if (precision == Precision::F32) {
      double da = a, db = b, dc = c, ds = s;
      x[2 * i] = static_cast<float>(da * dc - db * ds);
      x[2 * i + 1] = static_cast<float>(da * ds + db * dc);
      continue;
    }
    x[2 * i] = roundBf16(a * c - b * s);
    x[2 * i + 1] = roundBf16(a * s + b * c);
  }
}

} // namespace

void rope(std::span<float> x, int64_t pos, std::span<const float> freqs,
          Precision precision) {
  rotate(x, pos, freqs, 1.0f, precision);
}

void inverseRope(std::span<float> x, int64_t pos, std::span<const float> freqs,
                 Precision precision) {
  rotate(x, pos, freqs, -1.0f, precision);
}

} // namespace kf::deepseek_v4::reference
