#include "kf/deepseek_v4/reference/quant_sim.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "internal.h"

namespace kf::deepseek_v4::reference {

using internal::check;

int ceilLog2(float v) {
  check(std::isnormal(v) && v > 0, "ceil_log2: needs a positive normal float");
  uint32_t bits = std::bit_cast<uint32_t>(v);
  int exponent = static_cast<int>(bits >> 23) - 127;
  return exponent + ((bits & 0x7fffffu) != 0 ? 1 : 0);
}

namespace {

// 2^ceil_log2(max(amax, floor) · fl32(1/maxCode)). Both floors keep the
// argument a normal float, so ceil_log2 reads a well-defined exponent.
float blockScale(float amax, float floor, float maxCode) {
  float a = std::max(amax, floor);
  float reciprocal = 1.0f / maxCode; // fl32(1/maxCode)
  return std::ldexp(1.0f, ceilLog2(a * reciprocal));
}

// Round to nearest even onto a minifloat grid with `mantissaBits` fraction
// bits whose smallest normal is 2^minExponent; below it the grid keeps the
// subnormal step 2^(minExponent − mantissaBits). y/step is exact (a power of
// two), and nearbyint rounds ties to even in the default rounding mode.
float roundToGrid(float y, int mantissaBits, int minExponent) {
  if (y == 0)
    return y;
  int exponent = std::max(std::ilogb(y), minExponent);
  float step = std::ldexp(1.0f, exponent - mantissaBits);
  return std::nearbyint(y / step) * step;
}

// max |x| over one block.
float blockAmax(std::span<const float> block) {
  float amax = 0;
  for (float v : block)
    amax = std::max(amax, std::fabs(v));
  return amax;
}

} // namespace

float fp8BlockScale(float amax) { return blockScale(amax, 1e-4f, 448.0f); }

float fp4BlockScale(float amax) {
  return blockScale(amax, 6.0f * std::ldexp(1.0f, -126), 6.0f);
}

float roundE4m3(float y) {
  return roundToGrid(std::clamp(y, -448.0f, 448.0f), 3, -6);
}

float roundE2m1(float y) {
  return roundToGrid(std::clamp(y, -6.0f, 6.0f), 1, 0);
}

// In both simulations code · scale needs no bf16 rounding although §2
// (docs/models/deepseek_v4_model.md) writes one: the code has at most 4
// significant bits and the scale is a power of two no smaller than 2^−126, so
// the product is an exact bf16 value.

void fp8Sim(std::span<float> x, size_t block) {
  check(block > 0 && x.size() % block == 0,
        "fp8_sim: length must be a multiple of the block");
  for (size_t b = 0; b < x.size(); b += block) {
    std::span<float> v = x.subspan(b, block);
    float s = fp8BlockScale(blockAmax(v));
    for (float &e : v)
      e = roundE4m3(e / s) * s;
  }
}

void fp4Sim(std::span<float> x, size_t block) {
  check(block > 0 && x.size() % block == 0,
        "fp4_sim: length must be a multiple of the block");
  for (size_t b = 0; b < x.size(); b += block) {
    std::span<float> v = x.subspan(b, block);
    float s = fp4BlockScale(blockAmax(v));
    for (float &e : v)
      e = roundE2m1(e / s) * s;
  }
}

} // namespace kf::deepseek_v4::reference
