// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 and MXFP4: known answers from hand-built
// blocks, reference quantizers, activation quantizers and dot products.
#include <cstring>

#include "QuantTestUtil.h"
#include "kf/runtime/half.h"

namespace kf {
namespace {

using testing::activation;
using testing::dequantized;
using testing::exactDot;
using testing::gaussian;
using testing::quantized;
using testing::sqnrDb;

TEST(Q4_0, KnownAnswer) {
  uint8_t block[18];
  uint16_t d = fp32ToFp16(0.25f);
  std::memcpy(block, &d, 2);
  for (int j = 0; j < 16; ++j)
    block[2 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::vector<float> y = dequantized(Format::Q4_0, block, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.25f * (j - 8));
    EXPECT_EQ(y[j + 16], 0.25f * (7 - j));
  }
}

TEST(Q4_0, QuantizerPutsTheExtremeOnCodeZero) {
  std::vector<float> x(32, 0.0f);
  x[3] = -2.0f; // signed extreme
  x[7] = 1.0f;
  std::vector<uint8_t> q = quantized(Format::Q4_0, x);
  EXPECT_EQ(fp16ToFp32(q[0] | q[1] << 8), 0.25f); // d = -2 / -8
  EXPECT_EQ(q[2 + 3] & 15, 0);                    // -2 = 0.25 * (0 - 8)
  std::vector<float> y = dequantized(Format::Q4_0, q, 32);
  EXPECT_EQ(y[3], -2.0f);
  EXPECT_EQ(y[7], 1.0f);
  EXPECT_EQ(y[0], 0.0f);
}

TEST(Q4_1, KnownAnswer) {
  uint8_t block[20];
  uint16_t d = fp32ToFp16(0.5f), m = fp32ToFp16(-3.0f);
  std::memcpy(block, &d, 2);
  std::memcpy(block + 2, &m, 2);
  for (int j = 0; j < 16; ++j)
    block[4 + j] = static_cast<uint8_t>(j | j << 4);
  std::vector<float> y = dequantized(Format::Q4_1, block, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * j - 3.0f);
    EXPECT_EQ(y[j + 16], 0.5f * j - 3.0f);
  }
}

TEST(Q5_0, KnownAnswer) {
  uint8_t block[22] = {};
  uint16_t d = fp32ToFp16(2.0f);
  std::memcpy(block, &d, 2);
  uint32_t qh = 0x80000001u; // 5th bit of elements 0 and 31
  std::memcpy(block + 2, &qh, 4);
  block[6 + 0] = 0x3f;  // element 0: low 15 -> 31; element 16: 3
  block[6 + 15] = 0xe0; // element 15: 0; element 31: 14 | 16 = 30
  std::vector<float> y = dequantized(Format::Q5_0, block, 32);
  EXPECT_EQ(y[0], 2.0f * (31 - 16));
  EXPECT_EQ(y[16], 2.0f * (3 - 16));
  EXPECT_EQ(y[15], 2.0f * (0 - 16));
  EXPECT_EQ(y[31], 2.0f * (30 - 16));
  EXPECT_EQ(y[1], -32.0f);
}

TEST(Q5_1, KnownAnswer) {
  uint8_t block[24] = {};
  uint16_t d = fp32ToFp16(0.25f), m = fp32ToFp16(-4.0f);
  std::memcpy(block, &d, 2);
  std::memcpy(block + 2, &m, 2);
  uint32_t qh = 0x80010001u; // 5th bit of elements 0, 16 and 31
  std::memcpy(block + 4, &qh, 4);
  block[8 + 0] = 0x3f;  // element 0: low 15 -> 31; element 16: 3 | 16 = 19
  block[8 + 15] = 0xe0; // element 15: 0; element 31: 14 | 16 = 30
  block[8 + 7] = 0x59;  // element 7: 9; element 23: 5
  std::vector<float> y = dequantized(Format::Q5_1, block, 32);
  EXPECT_EQ(y[0], 0.25f * 31 - 4.0f);
  EXPECT_EQ(y[16], 0.25f * 19 - 4.0f);
  EXPECT_EQ(y[15], -4.0f);
  EXPECT_EQ(y[31], 0.25f * 30 - 4.0f);
  EXPECT_EQ(y[7], 0.25f * 9 - 4.0f);
  EXPECT_EQ(y[23], 0.25f * 5 - 4.0f);
  EXPECT_EQ(y[1], -4.0f);
}

// ggml's reference quantizer maps the block's minimum to code 0 and its
// maximum to code 31, and stores the minimum itself as m.
TEST(Q5_1, QuantizerSpansTheRange) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j)
    x[j] = -1.0f + 0.0625f * j; // -1 .. 0.9375: d = 1/16 exactly
  std::vector<uint8_t> q = quantized(Format::Q5_1, x);
  ASSERT_EQ(q.size(), 24u);
  EXPECT_EQ(fp16ToFp32(q[0] | q[1] << 8), 0.0625f);
  EXPECT_EQ(fp16ToFp32(q[2] | q[3] << 8), -1.0f);
  std::vector<float> y = dequantized(Format::Q5_1, q, 32);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], x[j]) << j;
}

TEST(MXFP4, KnownAnswer) {
  uint8_t block[17];
  block[0] = 127 + 2; // 2^(e-127) = 4, applied to the doubled values: x2
  for (int j = 0; j < 16; ++j)
    block[1 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const float e2m1[16] = {0,    .5,  1,  1.5,  2,  3,  4,  6,
                          -0.f, -.5, -1, -1.5, -2, -3, -4, -6};
  std::vector<float> y = dequantized(Format::MXFP4, block, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 4 * e2m1[j]) << j;
    EXPECT_EQ(y[j + 16], 4 * e2m1[15 - j]) << j;
  }
  block[0] = 0; // 2^-127 x 0.5: an fp32 subnormal
  y = dequantized(Format::MXFP4, block, 32);
  EXPECT_EQ(y[1], std::ldexp(1.0f, -128));
  EXPECT_EQ(y[7], 6 * std::ldexp(1.0f, -127));
}

TEST(Q8_0, ReferenceQuantizerRoundsHalfAwayFromZero) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f; // d = 1
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 3.5f;
  std::vector<uint8_t> q = quantized(Format::Q8_0, x);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 1]), 3);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 2]), -3);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 3]), 4);
}

TEST(Q8_0, ActivationQuantizerRoundsHalfToEven) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 3.5f;
  std::vector<uint8_t> q = activation(Format::Q8_0, x);
  EXPECT_EQ(fp16ToFp32(q[0] | q[1] << 8), 1.0f);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 0]), 127);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 1]), 2);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 2]), -2);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 3]), 4);
}

TEST(Q8_1, ActivationCarriesTheScaledSum) {
  std::vector<float> x = gaussian(64, 7);
  std::vector<uint8_t> q = activation(Format::Q8_1, x);
  for (int b = 0; b < 2; ++b) {
    const uint8_t *block = q.data() + 36 * b;
    int sum = 0;
    for (int j = 0; j < 32; ++j)
      sum += static_cast<int8_t>(block[4 + j]);
    float d = fp16ToFp32(block[0] | block[1] << 8);
    EXPECT_EQ(block[2] | block[3] << 8, fp32ToFp16(sum * d));
  }
}

TEST(Q8_K, SignedExtremeBecomesMinus127) {
  std::vector<float> x = gaussian(512, 3);
  x[300] = 9.0f; // the extreme of the second block, positive
  std::vector<uint8_t> q = activation(Format::Q8_K, x);
  const uint8_t *block = q.data() + 292;
  float d;
  std::memcpy(&d, block, 4);
  EXPECT_EQ(d, 1.0f / (-127.0f / 9.0f));
  EXPECT_EQ(static_cast<int8_t>(block[4 + 300 - 256]), -127);
  for (int k = 0; k < 16; ++k) {
    int sum = 0;
    for (int j = 0; j < 16; ++j)
      sum += static_cast<int8_t>(block[4 + 16 * k + j]);
    int16_t bsum;
    std::memcpy(&bsum, block + 260 + 2 * k, 2);
    EXPECT_EQ(bsum, sum) << k;
  }
  std::vector<float> zeros(256, 0.0f);
  std::vector<uint8_t> z = activation(Format::Q8_K, zeros);
  EXPECT_TRUE(
      std::all_of(z.begin(), z.end(), [](uint8_t v) { return v == 0; }));
}

// Round trip of Gaussian data: the SQNR each format reaches with its reference
// quantizer (measured, then floored a little below the measurement).
TEST(LegacyFormats, RoundTripError) {
  struct Case {
    Format f;
    double minSqnrDb;
  };
  const Case cases[] = {
      {Format::Q4_0, 17.0}, {Format::Q4_1, 18.0}, {Format::Q5_0, 23.0},
      {Format::Q5_1, 24.0}, {Format::Q8_0, 40.0}, {Format::MXFP4, 15.0},
      {Format::F16, 70.0},  {Format::BF16, 45.0}, {Format::F32, 1000.0}};
  std::vector<float> x = gaussian(4096, 11);
  for (const Case &c : cases) {
    std::vector<float> y = dequantized(c.f, quantized(c.f, x), x.size());
    EXPECT_GT(sqnrDb(x, y), c.minSqnrDb) << formatInfo(c.f).name;
  }
}

// The reference dot equals the exact dot of the decoded rows within the
// rounding bound of QuantTestUtil.h.
TEST(LegacyFormats, DotMatchesDecodedRows) {
  for (Format f :
       {Format::Q4_0, Format::Q4_1, Format::Q5_0, Format::Q5_1, Format::Q8_0,
        Format::MXFP4, Format::F16, Format::BF16, Format::F32}) {
    const FormatInfo &info = formatInfo(f);
    for (int64_t n : {32, 64, 1024}) {
      std::vector<float> x = gaussian(n, 100 + n),
                         w = gaussian(n, 200 + n, 0.02f);
      std::vector<uint8_t> wq = quantized(f, w);
      std::vector<uint8_t> aq = activation(info.dotFormat, x);
      absl::StatusOr<float> got = dot(f, wq, aq);
      ASSERT_TRUE(got.ok()) << got.status();
      auto check =
          exactDot(dequantized(f, wq, n), dequantized(info.dotFormat, aq, n),
                   n / info.blockElems);
      if (f == Format::Q4_1 || f == Format::Q5_1) {
        // Q8_1 carries d*sum(q) rounded to fp16 (half an ulp: 2^-11 relative),
        // and the min term m_w * s_a uses that rounded sum.
        const int64_t bytes = info.blockBytes;
        for (int64_t b = 0; b < n / 32; ++b) {
          float m = fp16ToFp32(wq[bytes * b + 2] | wq[bytes * b + 3] << 8);
          float s = fp16ToFp32(aq[36 * b + 2] | aq[36 * b + 3] << 8);
          check.tolerance += std::fabs(double(m) * s) * std::ldexp(1.0, -11);
        }
      }
      EXPECT_NEAR(*got, check.exact, check.tolerance)
          << info.name << " n=" << n;
    }
  }
}

TEST(Dot, RejectsMismatchedRows) {
  std::vector<uint8_t> w(34 * 2), a(34);
  absl::StatusOr<float> r = dot(Format::Q8_0, w, a);
  EXPECT_EQ(r.status().message(),
            "dot activations q8_0: 64 elements need 68 bytes, got 34");
  r = dot(Format::Q8_0, std::span(w).first(33), a);
  EXPECT_EQ(
      r.status().message(),
      "dot q8_0: 33 weight bytes is not a whole number of 34-byte blocks");
  r = dot(Format::Q8_K, a, a);
  EXPECT_EQ(r.status().message(), "dot: format q8_k has none");
}

} // namespace
} // namespace kf
