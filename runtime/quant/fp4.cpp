// MXFP4 (OCP microscaling FP4): an E8M0 exponent per 32 E2M1 codes.
// docs/formats/README.md, "MXFP4".
#include <algorithm>
#include <cmath>
#include <limits>

#include "kf/runtime/packed_layout.h"
#include "quant/activation_blocks.h"
#include "quant/codec.h"

namespace kf::quant {
namespace {

constexpr int QK = 32;
constexpr int kBlockBytes = 17;

// E2M1 values doubled, so that they are integers; the scale halves them back.
// One table with the packed layout's, which the compiled kernels look up.
constexpr const int8_t (&kValues)[16] = kMxfp4Values;

// 2^(e-128): the E8M0 scale 2^(e-127) with the doubling of kValues folded in.
// Exact for every e (e = 0 and 1 give fp32 subnormals).
float halfScale(uint8_t e) {
  return std::ldexp(1.0f, static_cast<int>(e) - 128);
}

void dequantizeMxfp4(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kBlockBytes, dst += QK) {
    float d = halfScale(src[0]);
    for (int j = 0; j < QK / 2; ++j) {
      dst[j] = kValues[src[1 + j] & 15] * d;
      dst[j + 16] = kValues[src[1 + j] >> 4] * d;
    }
  }
}

// The code whose value is nearest to x (the lower code on ties).
uint8_t nearestCode(float x, float d) {
  uint8_t best = 0;
  float bestErr = std::numeric_limits<float>::infinity();
  for (uint8_t c = 0; c < 16; ++c) {
    float err = std::fabs(kValues[c] * d - x);
    if (err < bestErr) {
      bestErr = err;
      best = c;
    }
  }
  return best;
}

// e = floor(log2(amax)) - 2 + 127, as ggml's reference quantizer, clamped to
// the E8M0 range (ggml's byte cast wraps for amax below 2^-125).
void quantizeMxfp4(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kBlockBytes) {
    float amax = absmax(src, QK);
    int e =
        amax > 0 ? static_cast<int>(std::floor(std::log2(amax))) - 2 + 127 : 0;
    e = std::clamp(e, 0, 254);
    dst[0] = static_cast<uint8_t>(e);
    float d = halfScale(dst[0]);
    for (int j = 0; j < QK / 2; ++j)
      dst[1 + j] = static_cast<uint8_t>(nearestCode(src[j], d) |
                                        nearestCode(src[j + 16], d) << 4);
  }
}

float dotMxfp4(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kBlockBytes, a += kQ8_0Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
    int sumi = 0;
    for (int j = 0; j < QK / 2; ++j)
      sumi +=
          kValues[w[1 + j] & 15] * q8[j] + kValues[w[1 + j] >> 4] * q8[j + 16];
    sum += loadFp16(a) * halfScale(w[0]) * sumi;
  }
  return sum;
}

constexpr CodecEntry kCodecs[] = {
    {Format::MXFP4, {dequantizeMxfp4, quantizeMxfp4, nullptr, dotMxfp4}},
};

} // namespace

std::span<const CodecEntry> fp4Codecs() { return kCodecs; }

} // namespace kf::quant
