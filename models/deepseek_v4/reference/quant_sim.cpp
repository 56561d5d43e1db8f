#include "kf/deepseek_v4/reference/quant_sim.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "internal.h"

namespace kf::deepseek_v4::reference {

using internal::check;

int ceil_log2(float v) {
  check(std::isnormal(v) && v > 0, "ceil_log2: needs a positive normal float");
  uint32_t bits = std::bit_cast<uint32_t>(v);
  int exponent = static_cast<int>(bits >> 23) - 127;
  return exponent + ((bits & 0x7fffffu) != 0 ? 1 : 0);
}

namespace {

// 2^ceil_log2(max(amax, floor) · fl32(1/max_code)). Both floors keep the
// argument a normal float, so ceil_log2 reads a well-defined exponent.
float block_scale(float amax, float floor, float max_code) {
  float a = std::max(amax, floor);
  float reciprocal = 1.0f / max_code; // fl32(1/max_code)
  return std::ldexp(1.0f, ceil_log2(a * reciprocal));
}

// Round to nearest even onto a minifloat grid with `mantissa_bits` fraction
// bits whose smallest normal is 2^min_exponent; below it the grid keeps the
// subnormal step 2^(min_exponent − mantissa_bits). y/step is exact (a power of
// two), and nearbyint rounds ties to even in the default rounding mode.
float round_to_grid(float y, int mantissa_bits, int min_exponent) {
  if (y == 0)
    return y;
  int exponent = std::max(std::ilogb(y), min_exponent);
  float step = std::ldexp(1.0f, exponent - mantissa_bits);
  return std::nearbyint(y / step) * step;
}

// max |x| over one block.
float block_amax(std::span<const float> block) {
  float amax = 0;
  for (float v : block)
    amax = std::max(amax, std::fabs(v));
  return amax;
}

} // namespace

float fp8_block_scale(float amax) { return block_scale(amax, 1e-4f, 448.0f); }

float fp4_block_scale(float amax) {
  return block_scale(amax, 6.0f * std::ldexp(1.0f, -126), 6.0f);
}

float round_e4m3(float y) {
  return round_to_grid(std::clamp(y, -448.0f, 448.0f), 3, -6);
}

float round_e2m1(float y) {
  return round_to_grid(std::clamp(y, -6.0f, 6.0f), 1, 0);
}

// In both simulations code · scale needs no bf16 rounding although §2
// (docs/models/deepseek_v4_model.md) writes one: the code has at most 4
// significant bits and the scale is a power of two no smaller than 2^−126, so
// the product is an exact bf16 value.

void fp8_sim(std::span<float> x, size_t block) {
  check(block > 0 && x.size() % block == 0,
        "fp8_sim: length must be a multiple of the block");
  for (size_t b = 0; b < x.size(); b += block) {
    std::span<float> v = x.subspan(b, block);
    float s = fp8_block_scale(block_amax(v));
    for (float &e : v)
      e = round_e4m3(e / s) * s;
  }
}

void fp4_sim(std::span<float> x, size_t block) {
  check(block > 0 && x.size() % block == 0,
        "fp4_sim: length must be a multiple of the block");
  for (size_t b = 0; b < x.size(); b += block) {
    std::span<float> v = x.subspan(b, block);
    float s = fp4_block_scale(block_amax(v));
    for (float &e : v)
      e = round_e2m1(e / s) * s;
  }
}

} // namespace kf::deepseek_v4::reference
