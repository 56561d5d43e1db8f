// ggml's 32-element formats: Q4_0, Q4_1, Q5_0, Q8_0 (weights) and Q8_1
// (activations). docs/formats/README.md, "Q8_0, Q4_0, Q4_1, Q5_0 and Q8_1".
#include <algorithm>
#include <cmath>

#include "quant/activation_blocks.h"
#include "quant/codec.h"

namespace kf::quant {
namespace {

constexpr int QK = 32;

// --- Q8_0: fp16 d, int8 qs[32]
// ------------------------------------------------

void dequantizeQ8_0(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ8_0Bytes, dst += QK) {
    float d = loadFp16(src);
    for (int j = 0; j < QK; ++j)
      dst[j] = d * static_cast<int8_t>(src[kQ8_0QsOffset + j]);
  }
}

// Weights: d = amax/127, q = roundf(x/d) (half away from zero).
void quantizeQ8_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ8_0Bytes) {
    float d = absmax(src, QK) / 127.f;
    float id = d != 0 ? 1.f / d : 0.f;
    storeFp16(dst, d);
    for (int j = 0; j < QK; ++j)
      dst[kQ8_0QsOffset + j] =
          static_cast<uint8_t>(static_cast<int8_t>(std::roundf(src[j] * id)));
  }
}

// Activations, as the x86 backend: q = round-half-even(x * (127/amax)).
void quantizeActivationQ8_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ8_0Bytes) {
    float amax = absmax(src, QK);
    float id = amax != 0 ? 127.f / amax : 0.f;
    storeFp16(dst, amax / 127.f);
    for (int j = 0; j < QK; ++j)
      dst[kQ8_0QsOffset + j] = static_cast<uint8_t>(
          static_cast<int8_t>(std::nearbyintf(src[j] * id)));
  }
}

float dotQ8_0(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kQ8_0Bytes, a += kQ8_0Bytes) {
    int sumi = 0;
    for (int j = 0; j < QK; ++j)
      sumi += static_cast<int8_t>(w[kQ8_0QsOffset + j]) *
              static_cast<int8_t>(a[kQ8_0QsOffset + j]);
    sum += sumi * (loadFp16(w) * loadFp16(a)); // ggml: the scale product first
  }
  return sum;
}

// --- Q8_1 (activations): fp16 d, fp16 s = d * sum(q), int8 qs[32] -----------

void dequantizeQ8_1(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ8_1Bytes, dst += QK) {
    float d = loadFp16(src);
    for (int j = 0; j < QK; ++j)
      dst[j] = d * static_cast<int8_t>(src[kQ8_1QsOffset + j]);
  }
}

void quantizeActivationQ8_1(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ8_1Bytes) {
    float amax = absmax(src, QK);
    float d = amax / 127.f;
    float id = amax != 0 ? 127.f / amax : 0.f;
    int sum = 0;
    for (int j = 0; j < QK; ++j) {
      int q = static_cast<int>(std::nearbyintf(src[j] * id));
      dst[kQ8_1QsOffset + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
      sum += q;
    }
    storeFp16(dst, d);
    storeFp16(dst + kQ8_1SumOffset, static_cast<float>(sum) * d);
  }
}

// --- Q4_0: fp16 d, qs[16]: low nibble element j, high nibble j+16; y = d(q-8)
// --

constexpr int kQ4_0Bytes = 18;

void dequantizeQ4_0(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ4_0Bytes, dst += QK) {
    float d = loadFp16(src);
    for (int j = 0; j < QK / 2; ++j) {
      dst[j] = d * ((src[2 + j] & 15) - 8);
      dst[j + 16] = d * ((src[2 + j] >> 4) - 8);
    }
  }
}

// d = max / -8 for the signed extreme, which lands on code 0.
void quantizeQ4_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ4_0Bytes) {
    float d = signedAbsmax(src, QK) / -8.f;
    float id = d != 0 ? 1.f / d : 0.f;
    storeFp16(dst, d);
    for (int j = 0; j < QK / 2; ++j) {
      int q0 = std::min(
          15, static_cast<int>(static_cast<int8_t>(src[j] * id + 8.5f)));
      int q1 = std::min(
          15, static_cast<int>(static_cast<int8_t>(src[j + 16] * id + 8.5f)));
      dst[2 + j] = static_cast<uint8_t>(q0 | q1 << 4);
    }
  }
}

float dotQ4_0(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kQ4_0Bytes, a += kQ8_0Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
    int sumi = 0;
    for (int j = 0; j < QK / 2; ++j)
      sumi +=
          ((w[2 + j] & 15) - 8) * q8[j] + ((w[2 + j] >> 4) - 8) * q8[j + 16];
    sum += sumi * loadFp16(w) * loadFp16(a);
  }
  return sum;
}

// --- Q4_1: fp16 d, fp16 m, qs[16]; y = d*q + m
// ----------------------------------

constexpr int kQ4_1Bytes = 20;

void dequantizeQ4_1(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ4_1Bytes, dst += QK) {
    float d = loadFp16(src), m = loadFp16(src + 2);
    for (int j = 0; j < QK / 2; ++j) {
      dst[j] = (src[4 + j] & 15) * d + m;
      dst[j + 16] = (src[4 + j] >> 4) * d + m;
    }
  }
}

// The header Q4_1 and Q5_1 share: d = (max - min)/steps and m = min, as
// fp16 at dst. Returns min and 1/d (0 for a constant block) for the codes.
struct MinScale {
  float min, id;
};
MinScale storeMinScale(const float *src, uint8_t *dst, float steps) {
  float min = src[0], max = src[0];
  for (int j = 1; j < QK; ++j) {
    min = std::min(min, src[j]);
    max = std::max(max, src[j]);
  }
  float d = (max - min) / steps;
  storeFp16(dst, d);
  storeFp16(dst + 2, min);
  return {min, d != 0 ? 1.f / d : 0.f};
}

// d = (max - min)/15, m = min, q = trunc((x - min)/d + 0.5).
void quantizeQ4_1(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ4_1Bytes) {
    auto [min, id] = storeMinScale(src, dst, 15.f);
    for (int j = 0; j < QK / 2; ++j) {
      int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(
                                (src[j] - min) * id + 0.5f)));
      int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(
                                (src[j + 16] - min) * id + 0.5f)));
      dst[4 + j] = static_cast<uint8_t>(q0 | q1 << 4);
    }
  }
}

// Against Q8_1: d_w*d_a*sum(q_w*q_a) + m_w*s_a.
float dotQ4_1(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kQ4_1Bytes, a += kQ8_1Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_1QsOffset);
    int sumi = 0;
    for (int j = 0; j < QK / 2; ++j)
      sumi += (w[4 + j] & 15) * q8[j] + (w[4 + j] >> 4) * q8[j + 16];
    sum += (loadFp16(w) * loadFp16(a)) * sumi +
           loadFp16(w + 2) * loadFp16(a + kQ8_1SumOffset);
  }
  return sum;
}

// --- Q5_0: fp16 d, u32 qh (5th bits), qs[16]; y = d(q-16)
// ----------------------

constexpr int kQ5_0Bytes = 22;

int q5_0Code(const uint8_t *block, int j) {
  uint32_t qh = loadU32(block + 2);
  int low = j < 16 ? block[6 + j] & 15 : block[6 + j - 16] >> 4;
  return low | static_cast<int>((qh >> j) & 1) << 4;
}

void dequantizeQ5_0(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ5_0Bytes, dst += QK) {
    float d = loadFp16(src);
    for (int j = 0; j < QK; ++j)
      dst[j] = d * (q5_0Code(src, j) - 16);
  }
}

// Stores a block's 32 five-bit codes, code(j) for element j, as Q5_0 and
// Q5_1 hold them: the u32 of fifth bits at `qh`, the 16 nibble pairs after.
template <typename Code> void storeQ5Codes(uint8_t *qh, Code code) {
  uint32_t bits = 0;
  for (int j = 0; j < QK / 2; ++j) {
    int q0 = code(j), q1 = code(j + 16);
    qh[4 + j] = static_cast<uint8_t>((q0 & 15) | (q1 & 15) << 4);
    bits |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
    bits |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
  }
  storeU32(qh, bits);
}

void quantizeQ5_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ5_0Bytes) {
    float d = signedAbsmax(src, QK) / -16.f;
    float id = d != 0 ? 1.f / d : 0.f;
    storeFp16(dst, d);
    storeQ5Codes(dst + 2, [&](int j) {
      return std::min(
          31, static_cast<int>(static_cast<int8_t>(src[j] * id + 16.5f)));
    });
  }
}

float dotQ5_0(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kQ5_0Bytes, a += kQ8_0Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
    int sumi = 0;
    for (int j = 0; j < QK; ++j)
      sumi += (q5_0Code(w, j) - 16) * q8[j];
    sum += sumi * (loadFp16(w) * loadFp16(a)); // ggml: the scale product first
  }
  return sum;
}

// --- Q5_1: fp16 d, fp16 m, u32 qh (5th bits), qs[16]; y = d*q + m
// ---------------

constexpr int kQ5_1Bytes = 24;

// The code of element j: Q5_0's, with the fields 2 bytes further on.
int q5_1Code(const uint8_t *block, int j) { return q5_0Code(block + 2, j); }

void dequantizeQ5_1(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kQ5_1Bytes, dst += QK) {
    float d = loadFp16(src), m = loadFp16(src + 2);
    for (int j = 0; j < QK; ++j)
      dst[j] = q5_1Code(src, j) * d + m;
  }
}

// d = (max - min)/31, m = min, q = (uint8_t)((x - min)/d + 0.5): ggml's
// cast, which the range keeps within 0..31.
void quantizeQ5_1(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kQ5_1Bytes) {
    auto [min, id] = storeMinScale(src, dst, 31.f);
    storeQ5Codes(dst + 4, [&](int j) {
      return static_cast<int>(static_cast<uint8_t>((src[j] - min) * id + 0.5f));
    });
  }
}

// Against Q8_1, as Q4_1: d_w*d_a*sum(q_w*q_a) + m_w*s_a.
float dotQ5_1(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kQ5_1Bytes, a += kQ8_1Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_1QsOffset);
    int sumi = 0;
    for (int j = 0; j < QK; ++j)
      sumi += q5_1Code(w, j) * q8[j];
    sum += (loadFp16(w) * loadFp16(a)) * sumi +
           loadFp16(w + 2) * loadFp16(a + kQ8_1SumOffset);
  }
  return sum;
}

constexpr CodecEntry kCodecs[] = {
    {Format::Q4_0, {dequantizeQ4_0, quantizeQ4_0, nullptr, dotQ4_0}},
    {Format::Q4_1, {dequantizeQ4_1, quantizeQ4_1, nullptr, dotQ4_1}},
    {Format::Q5_0, {dequantizeQ5_0, quantizeQ5_0, nullptr, dotQ5_0}},
    {Format::Q5_1, {dequantizeQ5_1, quantizeQ5_1, nullptr, dotQ5_1}},
    {Format::Q8_0,
     {dequantizeQ8_0, quantizeQ8_0, quantizeActivationQ8_0, dotQ8_0}},
    {Format::Q8_1, {dequantizeQ8_1, nullptr, quantizeActivationQ8_1, nullptr}},
};

} // namespace

std::span<const CodecEntry> legacyCodecs() { return kCodecs; }

} // namespace kf::quant
