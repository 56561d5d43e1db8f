// FRACTAL64 and VQ3_64 (docs/formats/): known answers from hand-built blocks
// following the written layouts, quantizer quality, dot products.
#include <chrono>
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
using testing::studentT;

TEST(Fractal64, KnownAnswer) {
  uint8_t block[30] = {};
  uint16_t d = fp32ToFp16(0.5f);
  std::memcpy(block, &d, 2);
  // Sub-scale codes u_k = k + 8 * (k & 1): s = 4 + u = 4, 13, 6, 15, 8, 17,
  // 10, 19.
  uint32_t scales = 0;
  for (int k = 0; k < 8; ++k)
    scales |= static_cast<uint32_t>(k + 8 * (k & 1)) << (4 * k);
  std::memcpy(block + 2, &scales, 4);
  // Weight i gets index i % 8: low bits at byte i % 16, bits 2(i / 16); high
  // bit i.
  uint64_t high = 0;
  for (int i = 0; i < 64; ++i) {
    int idx = i % 8;
    block[6 + i % 16] |= static_cast<uint8_t>((idx & 3) << (2 * (i / 16)));
    high |= static_cast<uint64_t>(idx >> 2) << i;
  }
  std::memcpy(block + 22, &high, 8);
  const int levels[8] = {-14, -8, -4, -1, 1, 4, 8, 14};
  const int s[8] = {4, 13, 6, 15, 8, 17, 10, 19};
  std::vector<float> y = dequantized(Format::FRACTAL64, block, 64);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(y[i], 0.5f * s[i / 8] * levels[i % 8]) << i;
}

TEST(Fractal64, EveryIndexBitIsItsOwn) {
  // Flipping one stored index bit changes exactly one weight.
  std::vector<float> x = gaussian(64, 5);
  std::vector<uint8_t> q = quantized(Format::FRACTAL64, x);
  std::vector<float> base = dequantized(Format::FRACTAL64, q, 64);
  for (int bit = 6 * 8; bit < 30 * 8; ++bit) {
    std::vector<uint8_t> flipped = q;
    flipped[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    std::vector<float> y = dequantized(Format::FRACTAL64, flipped, 64);
    int changed = 0;
    for (int i = 0; i < 64; ++i)
      changed += y[i] != base[i];
    EXPECT_EQ(changed, 1) << "bit " << bit;
  }
}

// Builds a VQ3_64 block from its fields as docs/formats/vq3_64.md lays them
// out.
std::vector<uint8_t> vq3Block(float d, const int (&index)[22],
                              const int (&u)[8]) {
  std::vector<uint8_t> b(24, 0);
  uint16_t h = fp32ToFp16(d);
  std::memcpy(b.data(), &h, 2);
  uint32_t stream = 0;
  for (int k = 0; k < 8; ++k)
    stream |= static_cast<uint32_t>(u[k]) << (3 * k);
  for (int t = 0; t < 22; ++t) {
    uint8_t byte = static_cast<uint8_t>(index[t] & 63);
    if (t < 20)
      byte |= static_cast<uint8_t>((index[t] >> 6) << 7);
    byte |= static_cast<uint8_t>(((stream >> t) & 1) << 6);
    b[2 + t] = byte;
  }
  b[22] |= static_cast<uint8_t>(((stream >> 22) & 1) << 7);
  b[23] |= static_cast<uint8_t>(((stream >> 23) & 1) << 7);
  return b;
}

#include "quant/vq3_64_codebook.inc"

TEST(Vq3_64, KnownAnswer) {
  int index[22], u[8];
  for (int t = 0; t < 20; ++t)
    index[t] = (t * 7 + 3) % 128; // both signs, many entries
  index[20] = 5;
  index[21] = 32 + 17; // negative tail codeword
  for (int k = 0; k < 8; ++k)
    u[k] = 7 - k;
  std::vector<uint8_t> b = vq3Block(2.0f, index, u);
  std::vector<float> y = dequantized(Format::VQ3_64, b, 64);
  const float dg = 2.0f * 8.6373016238e-3f;
  auto expect = [&](int i, int c3) {
    int m = 2 + u[i / 8];
    EXPECT_EQ(y[i], dg * static_cast<float>(m * c3)) << "weight " << i;
  };
  for (int t = 0; t < 20; ++t) {
    int e = index[t] & 63, sign = index[t] & 64 ? -1 : 1;
    for (int c = 0; c < 3; ++c)
      expect(t + 22 * c, sign * kVq3Book3[e][c]);
  }
  for (int t = 20; t < 22; ++t) {
    int e = index[t] & 31, sign = index[t] & 32 ? -1 : 1;
    for (int c = 0; c < 2; ++c)
      expect(t + 22 * c, sign * kVq3Book2[e][c]);
  }
}

TEST(Vq3_64, CodebooksAreAntipodalHalves) {
  // The stored halves are oriented (first non-zero component positive) and
  // distinct, so +-entry covers 128 (64) distinct codewords.
  for (int e = 0; e < 64; ++e) {
    int first = kVq3Book3[e][0] != 0 ? kVq3Book3[e][0] : kVq3Book3[e][1];
    EXPECT_GT(first, 0) << e;
    for (int f = 0; f < e; ++f)
      EXPECT_FALSE(kVq3Book3[e][0] == kVq3Book3[f][0] &&
                   kVq3Book3[e][1] == kVq3Book3[f][1] &&
                   kVq3Book3[e][2] == kVq3Book3[f][2])
          << e << " " << f;
  }
}

TEST(PrivateFormats, RoundTripQuality) {
  struct Case {
    Format f;
    double gaussDb, studentDb;
  };
  // Floors a little below the measured SQNR (docs/formats/quality.md).
  const Case cases[] = {{Format::FRACTAL64, 17.3, 16.9},
                        {Format::VQ3_64, 13.2, 13.4}};
  std::vector<float> g = gaussian(16384, 21), t = studentT(16384, 22);
  for (const Case &c : cases) {
    EXPECT_GT(sqnrDb(g, dequantized(c.f, quantized(c.f, g), g.size())),
              c.gaussDb)
        << formatInfo(c.f).name;
    EXPECT_GT(sqnrDb(t, dequantized(c.f, quantized(c.f, t), t.size())),
              c.studentDb)
        << formatInfo(c.f).name;
  }
}

TEST(PrivateFormats, ZeroAndConstantBlocks) {
  for (Format f : {Format::FRACTAL64, Format::VQ3_64}) {
    std::vector<float> zeros(64, 0.0f);
    std::vector<float> y = dequantized(f, quantized(f, zeros), 64);
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return v == 0; }))
        << formatInfo(f).name;
    std::vector<float> c(128, 0.75f);
    y = dequantized(f, quantized(f, c), 128);
    EXPECT_GT(sqnrDb(c, y), 10.0) << formatInfo(f).name;
  }
}

TEST(PrivateFormats, DotMatchesDecodedRows) {
  for (Format f : {Format::FRACTAL64, Format::VQ3_64}) {
    for (int64_t n : {64, 128, 4096}) {
      std::vector<float> x = gaussian(n, 300 + n),
                         w = gaussian(n, 400 + n, 0.02f);
      std::vector<uint8_t> wq = quantized(f, w),
                           aq = activation(Format::Q8_0, x);
      absl::StatusOr<float> got = dot(f, wq, aq);
      ASSERT_TRUE(got.ok()) << got.status();
      // Two Q8_0 blocks per weight block: the bound counts activation blocks.
      auto check = exactDot(dequantized(f, wq, n),
                            dequantized(Format::Q8_0, aq, n), n / 32);
      EXPECT_NEAR(*got, check.exact, check.tolerance)
          << formatInfo(f).name << " n=" << n;
    }
  }
}

} // namespace
} // namespace kf
