#include "kf/deepseek_v4/reference/primitives.h"

#include <cmath>

#include "internal.h"
#include "kf/runtime/half.h"

namespace kf::deepseek_v4::reference {

using internal::check;

float round_bf16(float x) { return bf16_to_fp32(fp32_to_bf16(x)); }

float hold(Precision precision, float x) {
  return precision == Precision::Model ? round_bf16(x) : x;
}

void hold(Precision precision, std::span<float> x) {
  if (precision == Precision::Model)
    round_bf16(x);
}

void round_bf16(std::span<float> x) {
  for (float &v : x)
    v = round_bf16(v);
}

float inverse_rms(std::span<const float> x, float eps) {
  check(!x.empty(), "inverse_rms: empty input");
  double sum_sq = 0;
  for (float v : x)
    sum_sq += static_cast<double>(v) * v;
  // The reference materialises mean(x²), mean + eps and the rsqrt as fp32.
  float mean = static_cast<float>(sum_sq / static_cast<double>(x.size()));
  float var = mean + eps;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(var)));
}

void rms_norm(std::span<const float> x, std::span<const float> weight,
              float eps, std::span<float> y, Precision precision) {
  check(weight.size() == x.size() && y.size() == x.size(),
        "rms_norm: x, weight and y must have the same length");
  float r = inverse_rms(x, eps);
  // The order of docs/models/deepseek_v4_model.md §2: normalise, then scale
  // by the weight, then cast to bf16.
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = hold(precision, weight[i] * (x[i] * r));
}

void rms_scale(std::span<float> x, float eps, Precision precision) {
  check(!x.empty(), "rms_scale: empty input");
  if (precision == Precision::F32) {
    float r = inverse_rms(x, eps);
    for (float &v : x)
      v *= r;
    return;
  }
  // mean() of a bf16 tensor accumulates in higher precision and rounds once.
  double sum_sq = 0;
  for (float v : x)
    sum_sq += round_bf16(v * v);
  float mean = round_bf16(static_cast<float>(sum_sq / x.size()));
  float var = round_bf16(mean + eps);
  float r =
      round_bf16(static_cast<float>(1.0 / std::sqrt(static_cast<double>(var))));
  for (float &v : x)
    v = round_bf16(v * r);
}

} // namespace kf::deepseek_v4::reference
