// Internal: the per-format function table behind kf/runtime/quant.h. Each
// format family (plain.cpp, legacy.cpp, kquants.cpp, ...) lists its codecs;
// codec.cpp gathers them and validates sizes before calling any of them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>

#include "kf/runtime/format.h"
#include "kf/runtime/half.h"

namespace kf::quant {

// Every function takes `n` elements, a whole number of the format's blocks
// (the caller has checked that, and that the buffers are exactly large enough).
struct Codec {
  void (*dequantize)(const uint8_t *src, float *dst, int64_t n) = nullptr;
  // Reference quantizer for weights.
  void (*quantize)(const float *src, uint8_t *dst, int64_t n) = nullptr;
  // Activation quantizer (activation formats only).
  void (*quantizeActivation)(const float *src, uint8_t *dst,
                             int64_t n) = nullptr;
  // Weight row (this format) . activation row (its dot_format).
  float (*dot)(const uint8_t *w, const uint8_t *a, int64_t n) = nullptr;
};

struct CodecEntry {
  Format format;
  Codec codec;
};

// One list per family; codec.cpp gathers them.
std::span<const CodecEntry> plainCodecs(); // F32, F16, BF16, I32
std::span<const CodecEntry>
legacyCodecs();                          // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1
std::span<const CodecEntry> q8kCodecs(); // Q8_K (activations)
std::span<const CodecEntry> kquantCodecs();  // Q2_K .. Q6_K
std::span<const CodecEntry> iq1Codecs();     // IQ1_S, IQ1_M
std::span<const CodecEntry> iq2Codecs();     // IQ2_XXS, IQ2_XS
std::span<const CodecEntry> iq4Codecs();     // IQ4_NL, IQ4_XS
std::span<const CodecEntry> fp4Codecs();     // MXFP4
std::span<const CodecEntry> privateCodecs(); // FRACTAL64, VQ3_64

// The codec of `f`, or null when no family lists it.
const Codec *findCodec(Format f);

// Little-endian field access. Blocks sit at any byte offset inside a tensor, so
// fields are copied out, never read through a cast pointer.
inline uint16_t loadU16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint32_t loadU32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline float loadF32(const uint8_t *p) {
  float v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline float loadFp16(const uint8_t *p) { return fp16ToFp32(loadU16(p)); }
inline void storeU16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, sizeof v); }
inline void storeU32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, sizeof v); }
inline void storeF32(uint8_t *p, float v) { std::memcpy(p, &v, sizeof v); }
inline void storeFp16(uint8_t *p, float v) { storeU16(p, fp32ToFp16(v)); }

// The largest magnitude among x[0..n).
inline float absmax(const float *x, int64_t n) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  return amax;
}

// The element of largest magnitude, with its sign (the first one on ties): the
// symmetric quantizers map it onto their extreme code.
inline float signedAbsmax(const float *x, int64_t n) {
  float amax = 0, max = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  return max;
}

// ggml's nearestInt: round half to even through the float adder, valid for
// |x| < 2^22 (docs/formats/README.md, "Conventions").
inline int nearestInt(float x) {
  float v = x + 12582912.f;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<int>(bits & 0x7fffff) - 0x400000;
}

} // namespace kf::quant
