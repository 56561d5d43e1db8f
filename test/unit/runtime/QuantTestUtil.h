// Shared helpers of the quantization tests: data, codec calls that must
// succeed, error metrics, and the tolerance of a reference dot product.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "kf/runtime/quant.h"
#include "gtest/gtest.h"

namespace kf::testing {

inline std::vector<float> gaussian(size_t n, uint32_t seed,
                                   float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// Heavy-tailed weights (Student-t with `nu` degrees of freedom).
inline std::vector<float> studentT(size_t n, uint32_t seed, double nu = 3.0) {
  std::mt19937 rng(seed);
  std::student_t_distribution<double> dist(nu);
  std::vector<float> v(n);
  for (float &x : v)
    x = static_cast<float>(dist(rng));
  return v;
}

inline std::vector<uint8_t> quantized(Format f, std::span<const float> x) {
  std::vector<uint8_t> q(*rowBytes(f, static_cast<int64_t>(x.size())));
  absl::Status s = quantize(f, x, q);
  EXPECT_TRUE(s.ok()) << s;
  return q;
}

inline std::vector<uint8_t> activation(Format f, std::span<const float> x) {
  std::vector<uint8_t> q(*rowBytes(f, static_cast<int64_t>(x.size())));
  absl::Status s = quantizeActivation(f, x, q);
  EXPECT_TRUE(s.ok()) << s;
  return q;
}

inline std::vector<float> dequantized(Format f, std::span<const uint8_t> q,
                                      size_t n) {
  std::vector<float> y(n);
  absl::Status s = dequantize(f, q, y);
  EXPECT_TRUE(s.ok()) << s;
  return y;
}

// Signal-to-quantization-noise ratio in dB: 10 log10(sum x^2 / sum (x - y)^2).
inline double sqnrDb(std::span<const float> x, std::span<const float> y) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    signal += double(x[i]) * x[i];
    noise += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
  }
  return noise == 0 ? INFINITY : 10.0 * std::log10(signal / noise);
}

// The exact dot of two decoded rows, and how far a reference dot product may be
// from it. The reference computes exact integer sums per block and then one
// float multiply-add chain per block (at most 4 roundings of 2^-24 relative
// each: the scale products, the multiply by the integer sum, and the running
// float sum, whose error grows with the number of blocks). So
//   |dot - exact| <= (nblocks + 4) * 2^-24 * sum_i |w_i * a_i|,
// a bound on the total rounding that no ordering of those operations exceeds.
struct DotCheck {
  double exact = 0;
  double tolerance = 0;
};

inline DotCheck exactDot(std::span<const float> w, std::span<const float> a,
                         int64_t nblocks) {
  DotCheck c;
  double magnitude = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    c.exact += double(w[i]) * a[i];
    magnitude += std::fabs(double(w[i]) * a[i]);
  }
  c.tolerance = (nblocks + 4) * std::ldexp(1.0, -24) * magnitude;
  return c;
}

} // namespace kf::testing
