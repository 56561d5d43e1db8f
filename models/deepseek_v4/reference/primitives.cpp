#include "kf/deepseek_v4/reference/primitives.h"

#include <cmath>

#include "internal.h"
#include "kf/runtime/half.h"

namespace kf::deepseek_v4::reference {

using internal::check;

float roundBf16(float x) { return bf16ToFp32(fp32ToBf16(x)); }

float hold(Precision precision, float x) {
  return precision == Precision::Model ? roundBf16(x) : x;
}

void hold(Precision precision, std::span<float> x) {
  if (precision == Precision::Model)
    roundBf16(x);
}

void roundBf16(std::span<float> x) {
  for (float &v : x)
    v = roundBf16(v);
}

float inverseRms(std::span<const float> x, float eps) {
  check(!x.empty(), "inverse_rms: empty input");
  double sumSq = 0;
  for (float v : x)
    sumSq += static_cast<double>(v) * v;
  // The reference materialises mean(x²), mean + eps and the rsqrt as fp32.
  float mean = static_cast<float>(sumSq / static_cast<double>(x.size()));
  float var = mean + eps;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(var)));
}

void rmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> y, Precision precision) {
  check(weight.size() == x.size() && y.size() == x.size(),
        "rms_norm: x, weight and y must have the same length");
  float r = inverseRms(x, eps);
  // The order of docs/models/deepseek_v4_model.md §2: normalise, then scale
  // by the weight, then cast to bf16.
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = hold(precision, weight[i] * (x[i] * r));
}

void rmsScale(std::span<float> x, float eps, Precision precision) {
  check(!x.empty(), "rms_scale: empty input");
  if (precision == Precision::F32) {
    float r = inverseRms(x, eps);
    for (float &v : x)
      v *= r;
    return;
  }
  // mean() of a bf16 tensor accumulates in higher precision and rounds once.
  double sumSq = 0;
  for (float v : x)
    sumSq += roundBf16(v * v);
  float mean = roundBf16(static_cast<float>(sumSq / x.size()));
  float var = roundBf16(mean + eps);
  float r =
      roundBf16(static_cast<float>(1.0 / std::sqrt(static_cast<double>(var))));
  for (float &v : x)
    v = roundBf16(v * r);
}

} // namespace kf::deepseek_v4::reference
