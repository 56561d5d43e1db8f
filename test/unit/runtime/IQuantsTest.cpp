// IQ2_XXS, IQ2_XS, IQ1_S, IQ1_M, IQ4_NL and IQ4_XS: the compiled-in grids,
// known answers from hand-built blocks, the reference quantizers and the
// reference dot products.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>

#include "QuantTestUtil.h"
#include "kf/runtime/half.h"
#include "quant/grids.h"

namespace kf {
namespace {

using testing::activation;
using testing::dequantized;
using testing::exactDot;
using testing::gaussian;
using testing::quantized;
using testing::sqnrDb;
using testing::studentT;

namespace grids = quant::grids;

constexpr Format kIQFormats[] = {Format::IQ2_XXS, Format::IQ2_XS,
                                 Format::IQ1_S,   Format::IQ1_M,
                                 Format::IQ4_NL,  Format::IQ4_XS};

void putU16(std::vector<uint8_t> &b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}
void putU32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[at + i] = static_cast<uint8_t>(v >> 8 * i);
}
uint16_t getU16(const uint8_t *p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}
uint32_t getU32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0] | p[1] << 8 | p[2] << 16) |
         static_cast<uint32_t>(p[3]) << 24;
}

// Byte j of a grid row, as the magnitude (IQ2) or signed value (IQ1).
int magnitude(uint64_t row, int j) {
  return static_cast<uint8_t>(row >> 8 * j);
}
int ternary(uint64_t row, int j) { return static_cast<int8_t>(row >> 8 * j); }

// A 7-bit sign index's 8-bit mask: bit 7 makes the number of minus signs even.
int signMask(int index) {
  return index | (std::popcount(unsigned(index)) & 1) << 7;
}

// --- The grids ---------------------------------------------------------------

TEST(IQuantGrids, SizesAndSpecProperties) {
  EXPECT_EQ(std::size(grids::iq2xxs_grid), 256u);
  EXPECT_EQ(std::size(grids::iq2xs_grid), 512u);
  EXPECT_EQ(std::size(grids::iq1s_grid), 2048u);
  EXPECT_EQ(std::size(grids::ksigns_iq2xs), 128u);
  EXPECT_EQ(std::size(grids::kvalues_iq4nl), 16u);

  for (std::span<const uint64_t> grid :
       {std::span<const uint64_t>(grids::iq2xxs_grid),
        std::span<const uint64_t>(grids::iq2xs_grid)}) {
    for (uint64_t row : grid)
      for (int j = 0; j < 8; ++j) {
        int m = magnitude(row, j);
        EXPECT_TRUE(m == 8 || m == 25 || m == 43) << std::hex << row;
      }
    std::vector<uint64_t> sorted(grid.begin(), grid.end());
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
        << "rows repeat";
  }

  // The distribution of non-zeros over the iq1s_grid rows
  // (docs/formats/README.md, "Lookup grids").
  const std::map<int, int> kNonZeros = {{0, 1},   {1, 16},  {2, 112},
                                        {3, 410}, {4, 150}, {5, 992},
                                        {6, 114}, {7, 3},   {8, 250}};
  std::map<int, int> nonZeros;
  for (uint64_t row : grids::iq1s_grid) {
    int count = 0;
    for (int j = 0; j < 8; ++j) {
      int v = ternary(row, j);
      EXPECT_TRUE(v >= -1 && v <= 1) << std::hex << row;
      count += v != 0;
    }
    ++nonZeros[count];
  }
  EXPECT_EQ(nonZeros, kNonZeros);
  std::vector<uint64_t> sorted(std::begin(grids::iq1s_grid),
                               std::end(grids::iq1s_grid));
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());

  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(grids::ksigns_iq2xs[i], signMask(i)) << i;

  const int8_t kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                              1,    13,   25,  38,  53,  69,  89,  113};
  EXPECT_TRUE(std::equal(std::begin(kLevels), std::end(kLevels),
                         std::begin(grids::kvalues_iq4nl)));
}

// Rows read from the data files (runtime/quant/grids/), by index. The indices
// set every bit of an index field in one row and clear it in another.
const std::map<int, uint64_t> kIq2xxsRows = {{0, 0x0808080808080808},
                                             {1, 0x080808080808082b},
                                             {0x55, 0x0819081919192b2b},
                                             {0xaa, 0x19082b19192b0819},
                                             {0xff, 0x2b2b2b1908081908}};
const std::map<int, uint64_t> kIq2xsRows = {{0x001, 0x080808080808082b},
                                            {0x0aa, 0x0819082b08190808},
                                            {0x100, 0x190808080808192b},
                                            {0x155, 0x1919080819190808},
                                            {0x1ff, 0x2b2b2b2b2b2b2b2b}};
const std::map<int, uint64_t> kIq1sRows = {
    {0x000, 0xffffffffffffffff}, {0x123, 0xff0000ff01000100},
    {0x2aa, 0x00ffff01ff000001}, {0x400, 0x0000000000ff0100},
    {0x555, 0x00010001010100ff}, {0x7ff, 0x0101010101010101}};

TEST(IQuantGrids, RowsReadFromTheData) {
  for (auto [i, row] : kIq2xxsRows)
    EXPECT_EQ(grids::iq2xxs_grid[i], row) << i;
  for (auto [i, row] : kIq2xsRows)
    EXPECT_EQ(grids::iq2xs_grid[i], row) << i;
  for (auto [i, row] : kIq1sRows)
    EXPECT_EQ(grids::iq1s_grid[i], row) << i;
}

// The index of `rows` for group g, 8 weights l: every row in every position.
template <typename Rows> int pick(const Rows &rows, int g, int l) {
  auto it = rows.begin();
  std::advance(it, (g + 3 * l) % rows.size());
  return it->first;
}

// Appends a copy of the 256-weight `block` with its scale doubled by
// `doubleScale`, and checks that the second block decodes to twice the first:
// the decoder steps by the format's block size.
template <typename DoubleScale>
void expectSecondBlockDoubles(Format f, std::vector<uint8_t> block,
                              DoubleScale doubleScale) {
  std::vector<uint8_t> second = block;
  doubleScale(second);
  block.insert(block.end(), second.begin(), second.end());
  std::vector<float> y = dequantized(f, block, 512);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(y[256 + i], 2 * y[i]) << formatInfo(f).name << " " << i;
}

// --- Known answers -----------------------------------------------------------

TEST(IQ2_XXS, KnownAnswer) {
  const float d = 0.5f;
  const int kScales[8] = {15, 0, 1, 2, 4, 8, 7, 10}; // each bit of 28..31
  std::vector<uint8_t> block(66);
  putU16(block, 0, fp32ToFp16(d));
  int index[8][4], signs[8][4];
  for (int g = 0; g < 8; ++g) {
    uint32_t aux = static_cast<uint32_t>(kScales[g]) << 28;
    for (int l = 0; l < 4; ++l) {
      index[g][l] = pick(kIq2xxsRows, g, l);
      signs[g][l] = (0x55 >> (g % 2)) ^ (13 * g + 29 * l) % 128;
      block[2 + 8 * g + l] = static_cast<uint8_t>(index[g][l]);
      aux |= static_cast<uint32_t>(signs[g][l]) << 7 * l;
    }
    putU32(block, 2 + 8 * g + 4, aux);
  }
  std::vector<float> y = dequantized(Format::IQ2_XXS, block, 256);
  for (int g = 0; g < 8; ++g)
    for (int l = 0; l < 4; ++l)
      for (int j = 0; j < 8; ++j) {
        int sign = signMask(signs[g][l]) >> j & 1 ? -1 : 1;
        float want = d * (0.5f + kScales[g]) * 0.25f *
                     magnitude(kIq2xxsRows.at(index[g][l]), j) * sign;
        EXPECT_EQ(y[32 * g + 8 * l + j], want) << g << " " << l << " " << j;
      }
  expectSecondBlockDoubles(Format::IQ2_XXS, block,
                           [&](auto &b) { putU16(b, 0, fp32ToFp16(2 * d)); });
}

TEST(IQ2_XS, KnownAnswer) {
  const float d = 0.75f;
  // Low nibble: weights 0..15 of a group, high nibble: 16..31.
  const int kScales[8][2] = {{1, 2}, {4, 8}, {15, 0}, {0, 15},
                             {8, 4}, {2, 1}, {5, 10}, {10, 5}};
  std::vector<uint8_t> block(74);
  putU16(block, 0, fp32ToFp16(d));
  int index[8][4], signs[8][4];
  for (int g = 0; g < 8; ++g) {
    for (int l = 0; l < 4; ++l) {
      index[g][l] = pick(kIq2xsRows, g, l);
      signs[g][l] = (0x2a << (g % 2) & 127) ^ (11 * g + 37 * l) % 128;
      putU16(block, 2 + 2 * (4 * g + l),
             static_cast<uint16_t>(index[g][l] | signs[g][l] << 9));
    }
    block[66 + g] = static_cast<uint8_t>(kScales[g][0] | kScales[g][1] << 4);
  }
  std::vector<float> y = dequantized(Format::IQ2_XS, block, 256);
  for (int g = 0; g < 8; ++g)
    for (int l = 0; l < 4; ++l)
      for (int j = 0; j < 8; ++j) {
        int sign = signMask(signs[g][l]) >> j & 1 ? -1 : 1;
        float want = d * (0.5f + kScales[g][l / 2]) * 0.25f *
                     magnitude(kIq2xsRows.at(index[g][l]), j) * sign;
        EXPECT_EQ(y[32 * g + 8 * l + j], want) << g << " " << l << " " << j;
      }
  expectSecondBlockDoubles(Format::IQ2_XS, block,
                           [&](auto &b) { putU16(b, 0, fp32ToFp16(2 * d)); });
}

TEST(IQ1_S, KnownAnswer) {
  const float d = 0.25f;
  const int kScales[8] = {1, 2, 4, 7, 0, 3, 5, 6}; // each bit of 12..14
  std::vector<uint8_t> block(50);
  putU16(block, 0, fp32ToFp16(d));
  int index[8][4];
  for (int g = 0; g < 8; ++g) {
    bool negative = g % 3 == 1; // bit 15
    uint16_t qh = static_cast<uint16_t>(kScales[g] << 12 | negative << 15);
    for (int l = 0; l < 4; ++l) {
      index[g][l] = pick(kIq1sRows, g, l);
      block[2 + 4 * g + l] = static_cast<uint8_t>(index[g][l]);
      qh |= static_cast<uint16_t>((index[g][l] >> 8) << 3 * l);
    }
    putU16(block, 34 + 2 * g, qh);
  }
  std::vector<float> y = dequantized(Format::IQ1_S, block, 256);
  for (int g = 0; g < 8; ++g) {
    float delta = g % 3 == 1 ? -0.125f : 0.125f;
    for (int l = 0; l < 4; ++l)
      for (int j = 0; j < 8; ++j) {
        float want = d * (2 * kScales[g] + 1) *
                     (ternary(kIq1sRows.at(index[g][l]), j) + delta);
        EXPECT_EQ(y[32 * g + 8 * l + j], want) << g << " " << l << " " << j;
      }
  }
  expectSecondBlockDoubles(Format::IQ1_S, block,
                           [&](auto &b) { putU16(b, 0, fp32ToFp16(2 * d)); });
}

// The fp16 super-scale of IQ1_M: nibble k of its bits in the top nibble of the
// u16 k of the scales.
void putIQ1_MScale(std::vector<uint8_t> &block, uint16_t bits) {
  for (int k = 0; k < 4; ++k) {
    uint16_t sc = getU16(&block[48 + 2 * k]);
    sc = static_cast<uint16_t>((sc & 0x0fff) | (bits >> 4 * k & 15) << 12);
    putU16(block, 48 + 2 * k, sc);
  }
}

TEST(IQ1_M, KnownAnswer) {
  // Per group the 3-bit scales of weights 0..15 and 16..31.
  const int kScales[8][2] = {{1, 2}, {4, 7}, {2, 1}, {7, 4},
                             {0, 5}, {3, 6}, {5, 0}, {6, 3}};
  std::vector<uint8_t> block(56);
  int index[8][4];
  bool negative[8][4];
  for (int g = 0; g < 8; ++g) {
    for (int l = 0; l < 4; ++l) {
      index[g][l] = pick(kIq1sRows, g, l);
      negative[g][l] = (g + l) % 3 == 0;
      block[4 * g + l] = static_cast<uint8_t>(index[g][l]);
      int nibble = index[g][l] >> 8 | negative[g][l] << 3;
      block[32 + 2 * g + l / 2] |= static_cast<uint8_t>(nibble << 4 * (l % 2));
    }
    uint16_t sc = getU16(&block[48 + 2 * (g / 2)]);
    sc |= static_cast<uint16_t>((kScales[g][0] | kScales[g][1] << 3)
                                << 6 * (g % 2));
    putU16(block, 48 + 2 * (g / 2), sc);
  }
  // Two super-scales whose bits complement each other, each with four
  // different nibbles: a nibble or a bit in the wrong place changes a value.
  for (uint16_t bits : {uint16_t{0xac71}, uint16_t{0x538e}}) {
    putIQ1_MScale(block, bits);
    const float d = bits == 0xac71 ? -0x1.1c4p-4f // -2^-4 (1 + 113/1024)
                                   : 0x1.e38p+5f; // 2^5 (1 + 910/1024)
    std::vector<float> y = dequantized(Format::IQ1_M, block, 256);
    for (int g = 0; g < 8; ++g)
      for (int l = 0; l < 4; ++l)
        for (int j = 0; j < 8; ++j) {
          float delta = negative[g][l] ? -0.125f : 0.125f;
          float want = d * (2 * kScales[g][l / 2] + 1) *
                       (ternary(kIq1sRows.at(index[g][l]), j) + delta);
          EXPECT_EQ(y[32 * g + 8 * l + j], want)
              << std::hex << bits << std::dec << " " << g << " " << l << " "
              << j;
        }
    expectSecondBlockDoubles(Format::IQ1_M, block, [&](auto &b) {
      putIQ1_MScale(b, static_cast<uint16_t>(bits + 0x0400)); // exponent + 1
    });
  }
}

const int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                               1,    13,   25,  38,  53,  69,  89,  113};

TEST(IQ4_NL, KnownAnswer) {
  std::vector<uint8_t> data(2 * 18);
  const float d[2] = {0.5f, -1.5f};
  for (int b = 0; b < 2; ++b) {
    putU16(data, 18 * b, fp32ToFp16(d[b]));
    for (int j = 0; j < 16; ++j)
      data[18 * b + 2 + j] = static_cast<uint8_t>((j + b) % 16 | (15 - j) << 4);
  }
  std::vector<float> y = dequantized(Format::IQ4_NL, data, 64);
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(y[32 * b + j], d[b] * kIq4Levels[(j + b) % 16]) << b << j;
      EXPECT_EQ(y[32 * b + j + 16], d[b] * kIq4Levels[15 - j]) << b << j;
    }
}

TEST(IQ4_XS, KnownAnswer) {
  const float d = 0.25f;
  // Six bits: the low four in scales_l (nibble g%2 of byte g/2), the high two
  // in scalesH bits 2g, 2g+1.
  const int kScales[8] = {0, 63, 1, 62, 21, 42, 32, 31};
  std::vector<uint8_t> block(136);
  putU16(block, 0, fp32ToFp16(d));
  uint16_t scalesH = 0;
  for (int g = 0; g < 8; ++g) {
    block[4 + g / 2] |= static_cast<uint8_t>((kScales[g] & 15) << 4 * (g % 2));
    scalesH |= static_cast<uint16_t>((kScales[g] >> 4) << 2 * g);
    for (int j = 0; j < 16; ++j)
      block[8 + 16 * g + j] =
          static_cast<uint8_t>((j + g) % 16 | (15 - j + g) % 16 << 4);
  }
  putU16(block, 2, scalesH);
  std::vector<float> y = dequantized(Format::IQ4_XS, block, 256);
  for (int g = 0; g < 8; ++g)
    for (int j = 0; j < 16; ++j) {
      float dl = d * (kScales[g] - 32);
      EXPECT_EQ(y[32 * g + j], dl * kIq4Levels[(j + g) % 16]) << g << " " << j;
      EXPECT_EQ(y[32 * g + j + 16], dl * kIq4Levels[(15 - j + g) % 16])
          << g << " " << j;
    }
  expectSecondBlockDoubles(Format::IQ4_XS, block,
                           [&](auto &b) { putU16(b, 0, fp32ToFp16(2 * d)); });
}

// --- Quantizers --------------------------------------------------------------

// Round trips of 16384 weights (64 super-blocks): the SQNR each reference
// quantizer reaches, measured, then floored a little below the measurement.
// Weights of a real model's scale (sigma 0.02) must do as well as unit ones:
// the fp16 scales stay normal or keep enough subnormal precision.
TEST(IQuants, RoundTripError) {
  struct Case {
    Format f;
    double gaussianDb, studentTDb;
  };
  const Case cases[] = {
      {Format::IQ2_XXS, 9.5, 7.6},  {Format::IQ2_XS, 10.7, 9.1},
      {Format::IQ1_S, 6.8, 5.2},    {Format::IQ1_M, 7.5, 6.6},
      {Format::IQ4_NL, 22.5, 19.9}, {Format::IQ4_XS, 22.4, 19.8}};
  const size_t n = 16384;
  std::vector<float> g = gaussian(n, 21), small = gaussian(n, 22, 0.02f);
  std::vector<float> t = studentT(n, 23);
  for (const Case &c : cases) {
    const char *name = formatInfo(c.f).name.data();
    std::vector<float> y = dequantized(c.f, quantized(c.f, g), n);
    EXPECT_GT(sqnrDb(g, y), c.gaussianDb) << name;
    std::vector<float> ys = dequantized(c.f, quantized(c.f, small), n);
    EXPECT_GT(sqnrDb(small, ys), c.gaussianDb) << name << " sigma 0.02";
    std::vector<float> yt = dequantized(c.f, quantized(c.f, t), n);
    EXPECT_GT(sqnrDb(t, yt), c.studentTDb) << name;
    for (const std::vector<float> *v : {&y, &ys, &yt})
      EXPECT_TRUE(std::all_of(v->begin(), v->end(), [](float x) {
        return std::isfinite(x);
      })) << name;
  }
}

TEST(IQuants, AllZeroInputDecodesToZero) {
  std::vector<float> zeros(512, 0.0f);
  for (Format f : kIQFormats) {
    std::vector<float> y = dequantized(f, quantized(f, zeros), zeros.size());
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return v == 0; }))
        << formatInfo(f).name;
  }
}

// One zero 32-weight group among large ones: IQ4_XS gives it the scale code
// 0 rather than a neighbour whose level nearest zero (1) is not zero.
TEST(IQ4_XS, ZeroGroupInALoudBlockStaysZero) {
  std::vector<float> x = gaussian(256, 5);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
  std::vector<float> y =
      dequantized(Format::IQ4_XS, quantized(Format::IQ4_XS, x), 256);
  for (int i = 64; i < 96; ++i)
    EXPECT_EQ(y[i], 0.0f) << i;
}

// The squared error of 8 weights against `values`.
double error8(const float *x, const double *values) {
  double e = 0;
  for (int j = 0; j < 8; ++j)
    e += (x[j] - values[j]) * (x[j] - values[j]);
  return e;
}

// The least error of 8 weights at IQ2 scale db over every row of `grid` and
// every allowed sign pattern: brute force.
double bestIq2Error(std::span<const uint64_t> grid, float db, const float *x) {
  double best = INFINITY;
  for (uint64_t row : grid)
    for (int s = 0; s < 128; ++s) {
      double v[8];
      for (int j = 0; j < 8; ++j)
        v[j] = double(db) * magnitude(row, j) * (signMask(s) >> j & 1 ? -1 : 1);
      best = std::min(best, error8(x, v));
    }
  return best;
}

// The least error of 8 weights at IQ1 scale dl and shift delta over every
// row of iq1s_grid.
double bestIq1Error(float dl, float delta, const float *x) {
  double best = INFINITY;
  for (uint64_t row : grids::iq1s_grid) {
    double v[8];
    for (int j = 0; j < 8; ++j)
      v[j] = double(dl) * (ternary(row, j) + delta);
    best = std::min(best, error8(x, v));
  }
  return best;
}

// The grid quantizers are exact at the scales they choose: every 8 weights
// carry the best (row, signs) for their scale, and every IQ1 delta sign is the
// better one, checked against brute force. (The quantizer compares expanded
// quadratics in float, so near-ties may go either way: the bound allows 2^-16
// of the weights' energy.)
TEST(IQuants, GridQuantizersAreExactAtTheirScales) {
  std::vector<float> x = studentT(512, 31);
  auto energy8 = [&](int at) {
    double e = 0;
    for (int j = 0; j < 8; ++j)
      e += double(x[at + j]) * x[at + j];
    return e;
  };
  auto got8 = [&](const std::vector<float> &y, int at) {
    double e = 0;
    for (int j = 0; j < 8; ++j)
      e += (double(x[at + j]) - y[at + j]) * (double(x[at + j]) - y[at + j]);
    return e;
  };
  const double slack = std::ldexp(1.0, -16);

  std::vector<uint8_t> q = quantized(Format::IQ2_XXS, x);
  std::vector<float> y = dequantized(Format::IQ2_XXS, q, x.size());
  for (int b = 0; b < 2; ++b) {
    float d = fp16ToFp32(getU16(&q[66 * b]));
    for (int k = 0; k < 32; ++k) {
      int at = 256 * b + 8 * k;
      float db =
          d * (0.5f + (getU32(&q[66 * b + 2 + 8 * (k / 4) + 4]) >> 28)) * 0.25f;
      EXPECT_LE(got8(y, at), bestIq2Error(grids::iq2xxs_grid, db, &x[at]) +
                                 slack * energy8(at))
          << "iq2_xxs " << at;
    }
  }

  q = quantized(Format::IQ2_XS, x);
  y = dequantized(Format::IQ2_XS, q, x.size());
  for (int k = 0; k < 32; ++k) { // the first block: 512 rows x 128 signs each
    uint8_t scales = q[66 + k / 4];
    float db = fp16ToFp32(getU16(&q[0])) *
               (0.5f + (scales >> 4 * (k / 2 % 2) & 15)) * 0.25f;
    EXPECT_LE(got8(y, 8 * k), bestIq2Error(grids::iq2xs_grid, db, &x[8 * k]) +
                                  slack * energy8(8 * k))
        << "iq2_xs " << 8 * k;
  }

  q = quantized(Format::IQ1_S, x);
  y = dequantized(Format::IQ1_S, q, x.size());
  for (int b = 0; b < 2; ++b)
    for (int g = 0; g < 8; ++g) {
      uint16_t qh = getU16(&q[50 * b + 34 + 2 * g]);
      float dl = fp16ToFp32(getU16(&q[50 * b])) * (2 * (qh >> 12 & 7) + 1);
      double got = 0, best[2] = {0, 0}, energy = 0;
      for (int l = 0; l < 4; ++l) {
        int at = 256 * b + 32 * g + 8 * l;
        got += got8(y, at);
        best[0] += bestIq1Error(dl, 0.125f, &x[at]);
        best[1] += bestIq1Error(dl, -0.125f, &x[at]);
        energy += energy8(at);
      }
      EXPECT_LE(got, std::min(best[0], best[1]) + slack * energy)
          << "iq1_s " << b << " " << g;
    }

  q = quantized(Format::IQ1_M, x);
  y = dequantized(Format::IQ1_M, q, x.size());
  for (int b = 0; b < 2; ++b) {
    const uint8_t *block = &q[56 * b];
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i)
      sc[i] = getU16(block + 48 + 2 * i);
    float d = fp16ToFp32(
        static_cast<uint16_t>((sc[0] >> 12) | (sc[1] >> 8 & 0xf0) |
                              (sc[2] >> 4 & 0xf00) | (sc[3] & 0xf000)));
    for (int k = 0; k < 32; ++k) {
      int g = k / 4, l = k % 4, at = 256 * b + 8 * k;
      float dl = d * (2 * (sc[g / 2] >> (6 * (g % 2) + 3 * (l / 2)) & 7) + 1);
      double best = std::min(bestIq1Error(dl, 0.125f, &x[at]),
                             bestIq1Error(dl, -0.125f, &x[at]));
      EXPECT_LE(got8(y, at), best + slack * energy8(at)) << "iq1_m " << at;
    }
  }
}

// --- Dot products ------------------------------------------------------------

// The reference dot equals the exact dot of the decoded rows within the
// rounding bound of QuantTestUtil.h, (blocks + 4) * 2^-24 * sum |w_i a_i|.
// Counting the roundings shows that it holds for the IQ formats too:
// - IQ2_XXS, IQ2_XS: the integer block sum (up to ~4.3e7, so its conversion
//   to float rounds), the product of the two scales and the product of those
//   are 3 roundings per block, plus the running sum; the final * 0.125 is
//   exact.
// - IQ1_S, IQ1_M: sumi + 0.125 * sumiDelta is exact in float (both are below
//   2^20 in magnitude and the sum has 3 fractional bits, 23 bits in all), so
//   the delta term through the bsums adds no rounding: 2 per block plus the
//   running sum.
// - IQ4_NL: 2 per block plus the running sum.
// - IQ4_XS accumulates in float per 32-weight group (scale product, times
//   ls - 32, times the exact integer sum, running sum), so it is checked with
//   blocks = groups of 32.
// Decoding Q8_K activations (fp32 d times q) rounds once more, which the +4
// covers; the decoded weights and Q8_0 activations are exact.
TEST(IQuants, DotMatchesDecodedRows) {
  for (Format f : kIQFormats) {
    const FormatInfo &info = formatInfo(f);
    for (int64_t n : {256, 512, 4096}) {
      std::vector<float> x = gaussian(n, 300 + n), w = studentT(n, 400 + n);
      std::vector<uint8_t> wq = quantized(f, w);
      std::vector<uint8_t> aq = activation(info.dotFormat, x);
      absl::StatusOr<float> got = dot(f, wq, aq);
      ASSERT_TRUE(got.ok()) << got.status();
      int64_t blocks = f == Format::IQ4_XS ? n / 32 : n / info.blockElems;
      auto check = exactDot(dequantized(f, wq, n),
                            dequantized(info.dotFormat, aq, n), blocks);
      EXPECT_NEAR(*got, check.exact, check.tolerance)
          << info.name << " n=" << n;
    }
  }
}

// A hand-built row whose dot is known exactly: every IQ1_S weight d (g + delta)
// with grid row 0x7ff (all +1) against q8 = 1 everywhere is 256 d (1 + delta)
// per block; the delta half of it comes through the bsums alone.
TEST(IQ1_S, DotTakesTheDeltaFromTheBsums) {
  std::vector<uint8_t> w(50, 0xff);
  putU16(w, 0, fp32ToFp16(0.5f));
  for (int g = 0; g < 8; ++g) // scale 0 (2s+1 = 1), index high bits 7, delta +
    putU16(w, 34 + 2 * g, 0x0fff);
  std::vector<float> ones(256, 1.0f);
  std::vector<uint8_t> a = activation(Format::Q8_K, ones);
  absl::StatusOr<float> got = dot(Format::IQ1_S, w, a);
  ASSERT_TRUE(got.ok());
  float q8D;
  std::memcpy(&q8D, a.data(), 4); // -1/127: every q8 is -127
  EXPECT_EQ(*got, 0.5f * q8D * (256 * -127 + 0.125f * (8 * 32 * -127)));
  // Bsums that disagree with the q8 change only the delta term.
  for (int k = 0; k < 16; ++k)
    putU16(a, 260 + 2 * k, 0);
  got = dot(Format::IQ1_S, w, a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 0.5f * q8D * (256 * -127));
}

} // namespace
} // namespace kf
