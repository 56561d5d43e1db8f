// IEEE binary16 and bfloat16 conversions, bit-exact with ggml
// (docs/formats/README.md, "Conventions").
#pragma once

#include <bit>
#include <cstdint>

namespace kf {

// binary16 -> binary32 is exact for every input, NaN payloads included.
constexpr float fp16ToFp32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) // inf / NaN
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0)
    return std::bit_cast<float>(sign);
  // Subnormal: normalise the significand into an fp32 normal.
  uint32_t e = 113;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

// binary32 -> binary16, round to nearest even; overflow gives inf; NaN stays a
// quiet NaN with the top payload bits kept (what x86 F16C vcvtps2ph produces).
constexpr uint16_t fp32ToFp16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) // >= 65520 rounds past the largest half (65504)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (ax >= 0x38800000u) { // half normal range: drop 13 bits, ties to even
    uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (ax <= 0x33000000u) // <= 2^-25: zero (2^-25 itself is a tie, to even)
    return static_cast<uint16_t>(sign);
  // Half subnormal: the value in units of 2^-24, rounded to nearest even.
  uint32_t exp = ax >> 23;
  uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - exp; // 14..24
  uint32_t q = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u)))
    ++q; // may carry into the smallest normal, which is the right encoding
  return static_cast<uint16_t>(sign | q);
}

constexpr float bf16ToFp32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Round to nearest even; a NaN is forced quiet (ggml's GGML_FP32_TO_BF16).
constexpr uint16_t fp32ToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 64u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

} // namespace kf
