// Q8_K, the activation format of the K-quants and IQ formats: fp32 d, 256 int8
// quants and 16 sums of 16 (docs/formats/README.md, "Q8_K").
#include <algorithm>
#include <cmath>

#include "quant/activation_blocks.h"
#include "quant/codec.h"

namespace kf::quant {
namespace {

constexpr int QK = 256;

void dequantizeQ8_K(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ8_KBytes, dst += QK) {
    float d = loadF32(src);
    for (int j = 0; j < QK; ++j)
      dst[j] = d * static_cast<int8_t>(src[kQ8_KQsOffset + j]);
  }
}

// The signed extreme maps to exactly -127 (iscale = -127/max), so every quant
// lies in [-127, 127]; rounding is nearestInt (half to even).
void quantizeActivationQ8_K(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ8_KBytes) {
    float max = signedAbsmax(src, QK);
    int8_t *qs = reinterpret_cast<int8_t *>(dst + kQ8_KQsOffset);
    if (max == 0) {
      storeF32(dst, 0.f);
      std::memset(dst + kQ8_KQsOffset, 0, kQ8_KBytes - kQ8_KQsOffset);
      continue;
    }
    float iscale = -127.f / max;
    for (int j = 0; j < QK; ++j)
      qs[j] = static_cast<int8_t>(std::min(127, nearestInt(iscale * src[j])));
    for (int k = 0; k < QK / 16; ++k) {
      int sum = 0;
      for (int j = 0; j < 16; ++j)
        sum += qs[16 * k + j];
      storeU16(dst + kQ8_KBsumsOffset + 2 * k,
               static_cast<uint16_t>(static_cast<int16_t>(sum)));
    }
    storeF32(dst, 1.f / iscale);
  }
}

constexpr CodecEntry kCodecs[] = {
    {Format::Q8_K, {dequantizeQ8_K, nullptr, quantizeActivationQ8_K, nullptr}},
};

} // namespace

std::span<const CodecEntry> q8kCodecs() { return kCodecs; }

} // namespace kf::quant
