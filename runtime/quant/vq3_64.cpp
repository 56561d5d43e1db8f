// VQ3_64: 64 weights in 24 bytes (3.00 bpw): fp16 d, twenty 3-D codewords of a
// 128-entry antipodal codebook, two 2-D tail codewords of a 64-entry one, and
// eight 3-bit sub-scales. Layout and every choice behind it:
// docs/formats/vq3_64.md.
#include <algorithm>
#include <cmath>

#include "quant/activation_blocks.h"
#include "quant/codec.h"
#include "quant/private_formats.h"
#include "quant/vq3_64_tables.h"

namespace kf::quant {
namespace {

constexpr int QK = 64;
constexpr int kBytes = 24;
constexpr int kCodewords = 22; // 20 from book3, then 2 from book2
constexpr int kBook3Codewords = 20;
constexpr int kStride = 22; // codeword t covers weights t, t + 22, t + 44

// Byte 2 + t, t < 20: bits 0..5 and 7 = book3 index (bit 7 is index bit 6, the
// sign); t = 20, 21: bits 0..5 = book2 index (bit 5 the sign). Bit 6 of every
// byte, then bit 7 of bytes 20 and 21, form the 24-bit stream of sub-scales.
int codewordIndex(const uint8_t *block, int t) {
  uint8_t byte = block[2 + t];
  return t < kBook3Codewords ? (byte & 63) | (byte >> 7) << 6 : byte & 63;
}

uint32_t scaleStream(const uint8_t *block) {
  uint32_t s = 0;
  for (int t = 0; t < kCodewords; ++t)
    s |= static_cast<uint32_t>((block[2 + t] >> 6) & 1) << t;
  s |= static_cast<uint32_t>(block[2 + 20] >> 7) << 22;
  s |= static_cast<uint32_t>(block[2 + 21] >> 7) << 23;
  return s;
}

// Component c of codeword `index` of book3 (t < 20) or book2.
int component(int t, int index, int c) {
  if (t < kBook3Codewords)
    return index & 64 ? -kVq3Book3[index & 63][c] : kVq3Book3[index & 63][c];
  return index & 32 ? -kVq3Book2[index & 31][c] : kVq3Book2[index & 31][c];
}

int components(int t) { return t < kBook3Codewords ? 3 : 2; }

// The 64 integer weights m_{i/8} * C (|.| <= 9 * 127) of a block.
void integerWeights(const uint8_t *block, int *out) {
  uint32_t stream = scaleStream(block);
  for (int t = 0; t < kCodewords; ++t) {
    int index = codewordIndex(block, t);
    for (int c = 0; c < components(t); ++c) {
      int i = t + kStride * c;
      int m = kVq3MinSubScale + static_cast<int>((stream >> (3 * (i / 8))) & 7);
      out[i] = m * component(t, index, c);
    }
  }
}

float blockScale(const uint8_t *block) {
  return loadFp16(block) * kVq3BlockScaleFactor;
}

void dequantizeVQ3_64(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kBytes, dst += QK) {
    int w[QK];
    integerWeights(src, w);
    float dg = blockScale(src);
    for (int i = 0; i < QK; ++i)
      dst[i] = dg * static_cast<float>(w[i]);
  }
}

// The best codeword for slot t given the block scale dG and sub-scales m:
// for entry C and per-component steps a_c = dG * m_c, the squared error of sign
// s is |x|^2 - 2 s sum(x_c a_c C_c) + sum(a_c^2 C_c^2), so the sign is that of
// the cross term and only the stored half books are searched.
struct Choice {
  int index;
  float error;
};

Choice bestCodeword(const float *x, int t, float dg, const int *m) {
  int dims = components(t), entries = t < kBook3Codewords ? 64 : 32;
  float xa[3], a2[3], normX = 0;
  for (int c = 0; c < dims; ++c) {
    int i = t + kStride * c;
    float a = dg * static_cast<float>(m[i / 8]);
    xa[c] = x[i] * a;
    a2[c] = a * a;
    normX += x[i] * x[i];
  }
  int best = 0;
  float bestScore = -INFINITY;
  bool negative = false;
  for (int e = 0; e < entries; ++e) {
    float cross = 0, norm = 0;
    for (int c = 0; c < dims; ++c) {
      float v = static_cast<float>(component(t, e, c));
      cross += xa[c] * v;
      norm += a2[c] * v * v;
    }
    float score = 2 * std::fabs(cross) - norm;
    if (score > bestScore) {
      bestScore = score;
      best = e;
      negative = cross < 0;
    }
  }
  int signBit = t < kBook3Codewords ? 64 : 32;
  return {best | (negative ? signBit : 0), std::max(0.f, normX - bestScore)};
}

// An encoding in progress: fp16 d, sub-scales and the chosen codewords.
struct Encoding {
  uint16_t d = 0;
  int m[8] = {};
  Choice choice[kCodewords] = {};

  float error() const {
    float e = 0;
    for (const Choice &c : choice)
      e += c.error;
    return e;
  }

  void chooseAll(const float *x) {
    float dg = fp16ToFp32(d) * kVq3BlockScaleFactor;
    for (int t = 0; t < kCodewords; ++t)
      choice[t] = bestCodeword(x, t, dg, m);
  }

  // Re-chooses the codewords with a component in sub-block k (weights
  // 8k..8k+7 sit in slots (8k..8k+7) mod 22).
  void chooseSubBlock(const float *x, int k) {
    float dg = fp16ToFp32(d) * kVq3BlockScaleFactor;
    for (int i = 8 * k; i < 8 * k + 8; ++i)
      choice[i % kStride] = bestCodeword(x, i % kStride, dg, m);
  }

  void write(uint8_t *out) const {
    storeU16(out, d);
    uint32_t stream = 0;
    for (int k = 0; k < 8; ++k)
      stream |= static_cast<uint32_t>(m[k] - kVq3MinSubScale) << (3 * k);
    for (int t = 0; t < kCodewords; ++t) {
      int index = choice[t].index;
      uint8_t byte = static_cast<uint8_t>(index & 63);
      if (t < kBook3Codewords)
        byte |= static_cast<uint8_t>((index >> 6) << 7);
      byte |= static_cast<uint8_t>(((stream >> t) & 1) << 6);
      out[2 + t] = byte;
    }
    out[2 + 20] |= static_cast<uint8_t>(((stream >> 22) & 1) << 7);
    out[2 + 21] |= static_cast<uint8_t>(((stream >> 23) & 1) << 7);
  }
};

// Reference quantizer. The book is trained on unit-variance data, so a
// sub-block of RMS r wants dG * m = r / kVq3UnitsPerSigma. d comes from the
// largest sub-block at m = 9, the others round to their m in [2, 9]; a few
// block scales around that estimate are tried, each followed by a
// least-squares refit of d given the chosen codewords. Then coordinate descent
// moves single sub-scales by one while that lowers the error: codewords
// straddle sub-blocks, so the RMS estimate of each m is only a start.
void quantizeVQ3_64(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kBytes) {
    float rms[8], rmsMax = 0;
    for (int k = 0; k < 8; ++k) {
      float s = 0;
      for (int i = 8 * k; i < 8 * k + 8; ++i)
        s += src[i] * src[i];
      rms[k] = std::sqrt(s / 8);
      rmsMax = std::max(rmsMax, rms[k]);
    }
    Encoding best;
    std::fill(best.m, best.m + 8, kVq3MinSubScale);
    best.chooseAll(src);
    float bestErr = rmsMax == 0 ? 0 : INFINITY;
    for (float factor : {0.85f, 1.0f}) {
      if (rmsMax == 0)
        break;
      float dg = factor * rmsMax / (kVq3UnitsPerSigma * kVq3MaxSubScale);
      Encoding e;
      for (int k = 0; k < 8; ++k)
        e.m[k] = std::clamp(
            static_cast<int>(std::lround(rms[k] / (kVq3UnitsPerSigma * dg))),
            kVq3MinSubScale, kVq3MaxSubScale);
      e.d = fp32ToFp16(dg / kVq3BlockScaleFactor);
      for (int refit = 0; refit < 2; ++refit) {
        e.chooseAll(src);
        if (e.error() < bestErr) {
          bestErr = e.error();
          best = e;
        }
        uint8_t block[kBytes] = {};
        e.write(block);
        int w[QK];
        integerWeights(block, w);
        float num = 0, den = 0;
        for (int i = 0; i < QK; ++i) {
          num += src[i] * static_cast<float>(w[i]);
          den += static_cast<float>(w[i]) * static_cast<float>(w[i]);
        }
        if (!(num > 0) || den == 0)
          break;
        e.d = fp32ToFp16(num / den / kVq3BlockScaleFactor);
      }
    }
    for (int pass = 0; pass < 2 && rmsMax > 0; ++pass) {
      bool improved = false;
      for (int k = 0; k < 8; ++k)
        for (int step : {-1, 1}) {
          Encoding e = best;
          e.m[k] += step;
          if (e.m[k] < kVq3MinSubScale || e.m[k] > kVq3MaxSubScale)
            continue;
          e.chooseSubBlock(src, k);
          if (e.error() < bestErr) {
            bestErr = e.error();
            best = e;
            improved = true;
          }
        }
      if (!improved)
        break;
    }
    std::memset(dst, 0, kBytes);
    best.write(dst);
  }
}

// Against two Q8_0 blocks per weight block: an exact integer sum of
// m * C * q8 per 32 weights, then dG * d_a in float.
float dotVQ3_64(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kBytes) {
    int iw[QK];
    integerWeights(w, iw);
    float dg = blockScale(w);
    for (int h = 0; h < 2; ++h, a += kQ8_0Bytes) {
      const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
      int sumi = 0;
      for (int i = 0; i < 32; ++i)
        sumi += iw[32 * h + i] * q8[i];
      sum += sumi * dg * loadFp16(a);
    }
  }
  return sum;
}

} // namespace

const Codec kVq3_64Codec = {dequantizeVQ3_64, quantizeVQ3_64, nullptr,
                            dotVQ3_64};

} // namespace kf::quant
