// ggml's IQ4_NL and IQ4_XS: 4-bit codes into 16 non-linear levels
// (docs/formats/README.md: their block layouts and "Activation pairing").
// Decoders and dot products follow ggml's scalar code expression for
// expression, so they round exactly as ggml does; the quantizers are our own
// reference quantizers (no importance matrix); docs/formats/quality.md has
// their quality and speed.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "quant/codec.h"
#include "quant/grids.h"
#include "quant/iq_grid_search.h"

namespace kf::quant {
namespace {

using namespace iq;
using grids::kvalues_iq4nl;

// --- IQ4_NL: fp16 d, qs[16] as Q4_0 (low nibble j, high nibble j + 16);
// y = d * kvalues_iq4nl[nibble].

constexpr int QK4_NL = 32;
constexpr int kIq4nlBytes = 18;

void dequantizeIQ4_NL(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK4_NL; ++b, src += kIq4nlBytes, dst += QK4_NL) {
    float d = loadFp16(src);
    for (int j = 0; j < QK4_NL / 2; ++j) {
      dst[j] = d * kvalues_iq4nl[src[2 + j] & 15];
      dst[j + 16] = d * kvalues_iq4nl[src[2 + j] >> 4];
    }
  }
}

float dotIQ4_NL(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK4_NL; ++b, w += kIq4nlBytes, a += kQ8_0Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
    float d = loadFp16(a) * loadFp16(w);
    int sumi1 = 0, sumi2 = 0;
    for (int j = 0; j < QK4_NL / 2; ++j) {
      sumi1 += q8[j] * kvalues_iq4nl[w[2 + j] & 15];
      sumi2 += q8[j + 16] * kvalues_iq4nl[w[2 + j] >> 4];
    }
    sumf += d * (sumi1 + sumi2);
  }
  return sumf;
}

// --- IQ4_XS: fp16 d, u16 scalesH, scales_l[4], qs[128]. Group g (32
// weights) has the 6-bit scale ls = nibble g%2 of scales_l[g/2] | bits
// 2g..2g+1 of scalesH << 4, and y = d * (ls - 32) * kvalues_iq4nl[nibble],
// nibbles as IQ4_NL in qs[16g..16g+15].

constexpr int kIq4xsBytes = 136;
constexpr int kIq4xsScalesLOffset = 4;
constexpr int kIq4xsQsOffset = 8;

int iq4xsScale(const uint8_t *block, int g) {
  uint16_t scalesH = loadU16(block + 2);
  int low = block[kIq4xsScalesLOffset + g / 2] >> 4 * (g % 2) & 15;
  return low | (scalesH >> 2 * g & 3) << 4;
}

void dequantizeIQ4_XS(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq4xsBytes) {
    float d = loadFp16(src);
    for (int g = 0; g < 8; ++g, dst += 32) {
      float dl = d * (iq4xsScale(src, g) - 32);
      const uint8_t *qs = src + kIq4xsQsOffset + 16 * g;
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * kvalues_iq4nl[qs[j] & 15];
        dst[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
      }
    }
  }
}

// One float scale per 32 weights, accumulated per group as ggml does.
float dotIQ4_XS(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq4xsBytes, a += kQ8_KBytes) {
    float d4d8 = loadFp16(w) * loadF32(a);
    const int8_t *q8 = q8kQs(a);
    for (int g = 0; g < 8; ++g, q8 += 32) {
      const uint8_t *qs = w + kIq4xsQsOffset + 16 * g;
      float dl = d4d8 * (iq4xsScale(w, g) - 32);
      int sumi1 = 0, sumi2 = 0;
      for (int j = 0; j < 16; ++j) {
        sumi1 += q8[j] * kvalues_iq4nl[qs[j] & 15];
        sumi2 += q8[j + 16] * kvalues_iq4nl[qs[j] >> 4];
      }
      sumf += dl * (sumi1 + sumi2);
    }
  }
  return sumf;
}

// --- IQ4: the 16 non-linear levels of kvalues_iq4nl -------------------------

// The level index nearest to v, in level units: the number of midpoints
// between consecutive levels at or below v (ties go up). Counting, unlike a
// binary search, has no branch to mispredict.
int nearestIq4Level(float v) {
  static constexpr std::array<float, 15> kMidpoints = [] {
    std::array<float, 15> m{};
    for (int i = 0; i < 15; ++i)
      m[i] = (kvalues_iq4nl[i] + kvalues_iq4nl[i + 1]) / 2.0f;
    return m;
  }();
  int level = 0;
  for (float m : kMidpoints)
    level += v >= m;
  return level;
}

// The squared error of 32 weights at the fixed scale dl, each on its nearest
// level.
float iq4Error(const float *x, float dl) {
  float err = 0;
  for (int j = 0; j < 32; ++j) {
    float q = dl != 0 ? dl * kvalues_iq4nl[nearestIq4Level(x[j] / dl)] : 0;
    err += (x[j] - q) * (x[j] - q);
  }
  return err;
}

// The least-squares scale of 32 weights: for each trial scale, every weight
// takes its nearest level, and the scale that fits those levels best,
// d = sum x k / sum k^2, leaves the error |x|^2 - (sum x k)^2 / sum k^2. The
// trials map the weight of largest magnitude to -127 f or to 113 f, f from
// 0.7 to 1.3 in 16 geometric steps: either end of the asymmetric level set,
// clipped or not. Returns the best of those d (signed).
float iq4BestScale(const float *x) {
  float extreme = signedAbsmax(x, 32);
  if (extreme == 0)
    return 0;
  static const std::array<float, 16> kTrials = [] {
    std::array<float, 16> f;
    for (int i = 0; i < 16; ++i)
      f[i] = 0.7f * std::pow(1.3f / 0.7f, i / 15.0f);
    return f;
  }();
  float bestD = 0, bestFit = -1;
  for (float end : {-127.0f, 113.0f})
    for (float f : kTrials) {
      float inverse = end * f / extreme;
      float sumXk = 0, sumKk = 0;
      for (int j = 0; j < 32; ++j) {
        float k = kvalues_iq4nl[nearestIq4Level(x[j] * inverse)];
        sumXk += x[j] * k;
        sumKk += k * k;
      }
      float fit = sumXk * sumXk / sumKk;
      if (fit > bestFit) {
        bestFit = fit;
        bestD = sumXk / sumKk;
      }
    }
  return bestD;
}

// Writes the nibbles of 32 weights at scale dl: low nibble j, high j + 16.
void storeIq4Nibbles(const float *x, float dl, uint8_t *qs) {
  for (int j = 0; j < 16; ++j) {
    int lo = dl != 0 ? nearestIq4Level(x[j] / dl) : 0;
    int hi = dl != 0 ? nearestIq4Level(x[j + 16] / dl) : 0;
    qs[j] = static_cast<uint8_t>(lo | hi << 4);
  }
}

// IQ4_NL: the least-squares scale of iq4BestScale, rounded to fp16, and each
// weight on its nearest level at that scale. SQNR: 22.7 dB on Gaussian data,
// 20.1 dB on Student-t (nu = 3).
void quantizeIQ4_NL(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK4_NL; ++b, src += QK4_NL, dst += kIq4nlBytes) {
    float d = fp16Round(iq4BestScale(src));
    storeFp16(dst, d);
    storeIq4Nibbles(src, d, dst + 2);
  }
}

// IQ4_XS: each group of 32 gets its least-squares scale as IQ4_NL; d puts the
// group scale of largest magnitude on the code -32 (the longer end of the
// 6-bit range -32..31), and each group takes, of its rounded code and the two
// next to it, the one of least error. Then each weight goes on its nearest
// level. SQNR: 22.6 dB on Gaussian data, 20.0 dB on Student-t (nu = 3).
void quantizeIQ4_XS(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq4xsBytes) {
    std::fill(dst, dst + kIq4xsBytes, 0);
    std::array<float, 8> groupScale;
    float largest = 0;
    for (int g = 0; g < 8; ++g) {
      groupScale[g] = iq4BestScale(src + 32 * g);
      if (std::fabs(groupScale[g]) > std::fabs(largest))
        largest = groupScale[g];
    }
    float d = fp16Round(largest / -32);
    storeFp16(dst, d);
    uint16_t scalesH = 0;
    for (int g = 0; g < 8; ++g) {
      const float *x = src + 32 * g;
      int code = 0;
      if (d != 0) {
        int rounded = std::clamp(nearestInt(groupScale[g] / d), -32, 31);
        float bestErr = std::numeric_limits<float>::infinity();
        for (int c = std::max(rounded - 1, -32); c <= std::min(rounded + 1, 31);
             ++c) {
          float err = iq4Error(x, d * c);
          if (err < bestErr) {
            bestErr = err;
            code = c;
          }
        }
      }
      int ls = code + 32;
      dst[kIq4xsScalesLOffset + g / 2] |=
          static_cast<uint8_t>((ls & 15) << 4 * (g % 2));
      scalesH |= static_cast<uint16_t>((ls >> 4) << 2 * g);
      storeIq4Nibbles(x, d * code, dst + kIq4xsQsOffset + 16 * g);
    }
    storeU16(dst + 2, scalesH);
  }
}

constexpr CodecEntry kCodecs[] = {
    {Format::IQ4_NL, {dequantizeIQ4_NL, quantizeIQ4_NL, nullptr, dotIQ4_NL}},
    {Format::IQ4_XS, {dequantizeIQ4_XS, quantizeIQ4_XS, nullptr, dotIQ4_XS}},
};

} // namespace

std::span<const CodecEntry> iq4Codecs() { return kCodecs; }

} // namespace kf::quant
