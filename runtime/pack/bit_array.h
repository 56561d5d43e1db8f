// Single bits of a byte array, bit i being bit i % 8 of byte i / 8: the packed
// layouts that keep one bit per weight or slot where their kernels read it as
// a lane mask (IQ2_XXS's code book sign masks, IQ1_M's ternary delta bits).
#pragma once

#include <cstdint>

namespace kf::pack {

inline bool getBit(const uint8_t *bytes, int64_t bit) {
  return (bytes[bit / 8] >> bit % 8 & 1) != 0;
}

inline void setBit(uint8_t *bytes, int64_t bit, bool value) {
  const auto mask = static_cast<uint8_t>(1u << bit % 8);
  bytes[bit / 8] = static_cast<uint8_t>(value ? bytes[bit / 8] | mask
                                              : bytes[bit / 8] & ~mask);
}

} // namespace kf::pack
