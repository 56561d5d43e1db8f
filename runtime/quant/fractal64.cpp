// FRACTAL64: 64 weights in 30 bytes (3.75 bpw) as fp16 d x eight 4-bit
// sub-scales x 3-bit non-uniform levels. Layout and every choice behind it:
// docs/formats/fractal64.md.
#include <algorithm>
#include <cmath>

#include "quant/activation_blocks.h"
#include "quant/codec.h"
#include "quant/private_formats.h"

namespace kf::quant {
namespace {

constexpr int QK = 64;
constexpr int kBytes = 30;
constexpr int kScalesOffset =
    2; // u32: nibble k = sub-scale code of weights 8k..8k+7
constexpr int kLowOffset =
    6; // 16 B: weight i's low 2 bits at byte i%16, bits 2(i/16)
constexpr int kHighOffset = 22; // u64: weight i's high bit at bit i

// Level of each 3-bit index, in ascending order; symmetric, with no zero.
constexpr int kLevels[8] = {-14, -8, -4, -1, 1, 4, 8, 14};
constexpr int kMinSubScale = 4, kMaxSubScale = 19; // s = 4 + u for a 4-bit u

int subScale(const uint8_t *block, int k) {
  return kMinSubScale +
         static_cast<int>((loadU32(block + kScalesOffset) >> (4 * k)) & 15);
}

int levelIndex(const uint8_t *block, int i) {
  int low = (block[kLowOffset + i % 16] >> (2 * (i / 16))) & 3;
  uint64_t high;
  std::memcpy(&high, block + kHighOffset, sizeof high);
  return low | static_cast<int>((high >> i) & 1) << 2;
}

// The integer weight s_k * L[idx], |.| <= 19 * 14 = 266: y = d * it.
int integerWeight(const uint8_t *block, int i) {
  return subScale(block, i / 8) * kLevels[levelIndex(block, i)];
}

void dequantizeFractal64(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kBytes, dst += QK) {
    float d = loadFp16(src);
    for (int i = 0; i < QK; ++i)
      dst[i] = d * static_cast<float>(integerWeight(src, i));
  }
}

// The index of the level nearest to v (the lower one on a tie).
int nearestLevel(float v) {
  int best = 0;
  for (int j = 1; j < 8; ++j)
    if (std::fabs(v - kLevels[j]) < std::fabs(v - kLevels[best]))
      best = j;
  return best;
}

// Squared error of x against scale * L[nearest] for the given scale.
float fitError(const float *x, int n, float scale) {
  float err = 0;
  for (int i = 0; i < n; ++i) {
    float e =
        x[i] - scale * kLevels[nearestLevel(scale != 0 ? x[i] / scale : 0)];
    err += e * e;
  }
  return err;
}

// The least-squares scale of one 8-weight sub-block: from a few starting
// points, alternate nearest-level assignment and the closed-form scale
// sum(x L) / sum(L^2); keep the best.
float bestSubBlockScale(const float *x) {
  float amax = absmax(x, 8);
  if (amax == 0)
    return 0;
  float best = amax / 14, bestErr = fitError(x, 8, best);
  for (float top : {14.f, 11.f, 8.f, 6.f}) {
    float scale = amax / top;
    for (int iter = 0; iter < 4; ++iter) {
      float num = 0, den = 0;
      for (int i = 0; i < 8; ++i) {
        int l = kLevels[nearestLevel(x[i] / scale)];
        num += x[i] * l;
        den += static_cast<float>(l * l);
      }
      if (num <= 0)
        break;
      scale = num / den;
    }
    float err = fitError(x, 8, scale);
    if (err < bestErr) {
      bestErr = err;
      best = scale;
    }
  }
  return best;
}

// Encodes one block given the block scale d (already representable in fp16)
// and the ideal sub-block scales; returns the squared error.
float encodeBlock(const float *x, const float *sigma, float d, uint8_t *out) {
  std::memset(out, 0, kBytes);
  storeFp16(out, d);
  uint32_t scales = 0;
  uint64_t high = 0;
  float err = 0;
  for (int k = 0; k < 8; ++k) {
    int s = d > 0 ? std::clamp(static_cast<int>(std::lround(sigma[k] / d)),
                               kMinSubScale, kMaxSubScale)
                  : kMinSubScale;
    scales |= static_cast<uint32_t>(s - kMinSubScale) << (4 * k);
    float step = d * static_cast<float>(s);
    for (int i = 8 * k; i < 8 * k + 8; ++i) {
      int idx = nearestLevel(step > 0 ? x[i] / step : 0);
      out[kLowOffset + i % 16] |=
          static_cast<uint8_t>((idx & 3) << (2 * (i / 16)));
      high |= static_cast<uint64_t>(idx >> 2) << i;
      float e = x[i] - d * static_cast<float>(s * kLevels[idx]);
      err += e * e;
    }
  }
  storeU32(out + kScalesOffset, scales);
  std::memcpy(out + kHighOffset, &high, sizeof high);
  return err;
}

// Reference quantizer: least-squares scale per sub-block, d from the largest
// (so its code is 19), then a refit of d over the whole block given the
// chosen codes, keeping whichever encoding has the smaller error.
void quantizeFractal64(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kBytes) {
    float sigma[8], sigmaMax = 0;
    for (int k = 0; k < 8; ++k) {
      sigma[k] = bestSubBlockScale(src + 8 * k);
      sigmaMax = std::max(sigmaMax, sigma[k]);
    }
    float d = fp16ToFp32(fp32ToFp16(sigmaMax / kMaxSubScale));
    float err = encodeBlock(src, sigma, d, dst);
    for (int iter = 0; iter < 2 && d > 0; ++iter) {
      float num = 0, den = 0;
      for (int i = 0; i < QK; ++i) {
        float w = static_cast<float>(integerWeight(dst, i));
        num += src[i] * w;
        den += w * w;
      }
      float refit = den > 0 ? fp16ToFp32(fp32ToFp16(num / den)) : 0;
      if (!(refit > 0) || refit == d)
        break;
      uint8_t candidate[kBytes];
      float candidateErr = encodeBlock(src, sigma, refit, candidate);
      if (candidateErr >= err)
        break;
      std::memcpy(dst, candidate, kBytes);
      err = candidateErr;
      d = refit;
    }
  }
}

// Against two Q8_0 blocks per weight block: an exact integer sum of
// s_k * L * q8 per 32 weights, then d_w * d_a in float.
float dotFractal64(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kBytes) {
    float d = loadFp16(w);
    for (int h = 0; h < 2; ++h, a += kQ8_0Bytes) {
      const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
      int sumi = 0;
      for (int i = 0; i < 32; ++i)
        sumi += integerWeight(w, 32 * h + i) * q8[i];
      sum += sumi * d * loadFp16(a);
    }
  }
  return sum;
}

} // namespace

const Codec kFractal64Codec = {dequantizeFractal64, quantizeFractal64, nullptr,
                               dotFractal64};

} // namespace kf::quant
