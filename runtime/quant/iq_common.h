// What ggml's IQ formats share: how a grid entry holds its 8 values, the IQ2
// grids' sign masks, and the Q8_K activation fields the dots read
// (docs/formats/README.md, "Lookup grids" and "Activation pairing"). Private
// to the IQ codecs (iq1.cpp, iq2.cpp, iq4.cpp).
#pragma once

#include <cstdint>

#include "quant/activation_blocks.h"
#include "quant/codec.h"

namespace kf::quant::iq {

constexpr int QK = 256;

// IQ1S_DELTA = IQ1M_DELTA: the shift of the IQ1 grid values.
constexpr float kIq1Delta = 0.125f;

// Byte j of a grid entry is the value of weight j ("Lookup grids").
constexpr uint8_t gridByte(uint64_t entry, int j) {
  return static_cast<uint8_t>(entry >> 8 * j);
}
constexpr int8_t gridValue(uint64_t entry, int j) {
  return static_cast<int8_t>(gridByte(entry, j));
}

// The IQ2 grids hold magnitudes; a 7-bit sign index selects an 8-bit mask
// (ksigns_iq2xs) whose bit j negates weight j.
inline void decodeSignedGrid(float db, uint64_t grid, uint8_t signs,
                             float *dst) {
  for (int j = 0; j < 8; ++j)
    dst[j] = db * gridByte(grid, j) * (signs >> j & 1 ? -1.f : 1.f);
}
inline int32_t signedGridDot(uint64_t grid, uint8_t signs, const int8_t *q8) {
  int32_t sumi = 0;
  for (int j = 0; j < 8; ++j)
    sumi += gridByte(grid, j) * q8[j] * (signs >> j & 1 ? -1 : 1);
  return sumi;
}

// The fp16 value nearest to x: the scale a decoder will read back.
inline float fp16Round(float x) { return fp16ToFp32(fp32ToFp16(x)); }

inline const int8_t *q8kQs(const uint8_t *a) {
  return reinterpret_cast<const int8_t *>(a + kQ8_KQsOffset);
}
inline int q8kBsum(const uint8_t *a, int k) {
  return static_cast<int16_t>(loadU16(a + kQ8_KBsumsOffset + 2 * k));
}

} // namespace kf::quant::iq
