// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/rope.h"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::bf16RoundingBound;
using test::isBf16;
using test::kU32;

std::vector<float> frequencies(const RopeConfig &config) {
  std::vector<float> f(config.ropeDim / 2);
  ropeFrequencies(config, f);
  return f;
}

// A rope slice of bf16 values: x[2i] = 1 − i/64, x[2i+1] = −1/2 + i/128.
std::vector<float> sampleSlice() {
  std::vector<float> x(64);
  for (int i = 0; i < 32; ++i) {
    x[2 * i] = 1.0f - i / 64.0f;
    x[2 * i + 1] = -0.5f + i / 128.0f;
  }
  return x;
}

TEST(Yarn, CorrectionRangeOfTheCompressedLayers) {
  // §2: cd(n) = 64·ln(65536/(2πn)) / (2·ln 160000); raw 15.45 and 24.71.
  EXPECT_NEAR(yarnCorrectionDim(kCompressedRope, 32), 15.4533, 1e-4);
  EXPECT_NEAR(yarnCorrectionDim(kCompressedRope, 1), 24.7084, 1e-4);
  YarnRange range = yarnCorrectionRange(kCompressedRope);
  EXPECT_EQ(range.lo, 15);
  EXPECT_EQ(range.hi, 25);
}

TEST(Yarn, CorrectionRangeRoundsOutwardAndClamps) {
  // Base 20000, original length 8192: cd(32) = 11.98 and cd(1) = 23.18, so
  // lo = floor = 11 (not 12) and hi = ceil = 24 (not 23).
  RopeConfig config = kCompressedRope;
  config.base = 20000;
  config.originalLen = 8192;
  EXPECT_NEAR(yarnCorrectionDim(config, 32), 11.979, 1e-3);
  EXPECT_NEAR(yarnCorrectionDim(config, 1), 23.177, 1e-3);
  EXPECT_EQ(yarnCorrectionRange(config).lo, 11);
  EXPECT_EQ(yarnCorrectionRange(config).hi, 24);
  // A short original length puts cd(32) below 0 (lo clamps to 0); a huge one
  // puts cd(1) above rope_dim − 1 (hi clamps to 63).
  config.originalLen = 64;
  EXPECT_LT(yarnCorrectionDim(config, 32), 0);
  EXPECT_EQ(yarnCorrectionRange(config).lo, 0);
  config.originalLen = 0x1p40;
  EXPECT_GT(yarnCorrectionDim(config, 1), 63);
  EXPECT_EQ(yarnCorrectionRange(config).hi, 63);
}

TEST(RopeFrequencies, SwaLayersHaveNoYarn) {
  std::vector<float> f = frequencies(kSwaRope);
  ASSERT_EQ(f.size(), 32u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[16], 0.01f); // 10000^(−1/2), rounded to fp32 once
  for (int i = 0; i < 32; ++i) {
    double expected = std::pow(10000.0, -i / 32.0);
    // One rounding of the fp64 power to fp32.
    EXPECT_NEAR(f[i], expected, kU32 * expected) << i;
  }
}

TEST(RopeFrequencies, YarnRampBlendsBetweenLoAndHi) {
  std::vector<float> f = frequencies(kCompressedRope);
  for (int i = 0; i < 32; ++i) {
    double base = std::pow(160000.0, -i / 32.0);
    if (i <= 15) {
      // r_i = 0: the frequency is kept (f·1 + (f/16)·0 is exact).
      EXPECT_NEAR(f[i], base, kU32 * base) << i;
    } else if (i >= 25) {
      // r_i = 1: divided by 16 (exact for the fp32 f_i).
      EXPECT_NEAR(f[i], base / 16, kU32 * base / 16) << i;
      EXPECT_EQ(f[i] * 16, static_cast<float>(base)) << i;
    } else {
      double r = (i - 15) / 10.0;
      double expected = base * (1 - r) + base / 16 * r;
      // fp32 roundings of f, r, 1 − r, the two products and the sum, each
      // at most 2^-24 of f: 6 units; 8 leaves margin for their interplay.
      EXPECT_NEAR(f[i], expected, 8 * kU32 * base) << i;
    }
  }
  // Midway (i = 20, r = 1/2) the blend is f·17/32.
  EXPECT_NEAR(f[20], std::pow(160000.0, -20 / 32.0) * 17 / 32,
              8 * kU32 * std::pow(160000.0, -20 / 32.0));
}

// The rotation of §2 worked in fp64 from a given fp32 angle per pair.
std::vector<double> rotated(const std::vector<float> &x,
                            const std::vector<double> &angles) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < angles.size(); ++i) {
    double a = x[2 * i], b = x[2 * i + 1];
    y[2 * i] = a * std::cos(angles[i]) - b * std::sin(angles[i]);
    y[2 * i + 1] = a * std::sin(angles[i]) + b * std::cos(angles[i]);
  }
  return y;
}

// |out − exact| for one component: the bf16 rounding of the result, plus the
// fp32 work before it (cos and sin held in fp32, two products and a sum:
// at most 3·2^-24 of the pair's magnitude, bounded by 2^-22).
double ropeTolerance(double exact, double pairNorm) {
  return bf16RoundingBound(exact) + 4 * kU32 * pairNorm;
}

// y = rope(x) at `pos` against x rotated exactly by the angles §2's precision
// note prescribes: fl32(fl32(pos) · f_i).
void expectFp32AngleRotation(const std::vector<float> &x,
                             const std::vector<float> &y, int64_t pos,
                             const std::vector<float> &freqs) {
  std::vector<double> angles(32);
  for (int i = 0; i < 32; ++i)
    angles[i] = static_cast<float>(pos) * freqs[i];
  std::vector<double> expected = rotated(x, angles);
  for (int k = 0; k < 64; ++k) {
    double norm = std::hypot(x[k & ~1], x[k | 1]);
    EXPECT_NEAR(y[k], expected[k], ropeTolerance(expected[k], norm))
        << "pos " << pos << " dim " << k;
  }
}

TEST(Rope, YarnAtPositions0_1_127_65535) {
  std::vector<float> freqs = frequencies(kCompressedRope);
  const std::vector<float> x = sampleSlice();
  for (int64_t pos : {0, 1, 127, 65535}) {
    std::vector<float> y = x;
    rope(y, pos, freqs);
    expectFp32AngleRotation(x, y, pos, freqs);
    for (int k = 0; k < 64; ++k)
      EXPECT_TRUE(isBf16(y[k])) << "pos " << pos << " dim " << k;
    if (pos == 0) { // angle 0: the identity on bf16 inputs
      EXPECT_EQ(y, x);
    }
  }
}

TEST(Rope, AnglesAreFormedInFp32) {
  // At the largest position, 1048575, the fp32 angle fl32(pos·f_i) is up to
  // half an ulp of 2^20·f_i (2^-4 rad for f_0 = 1) away from the fp64 one,
  // which moves the outputs far beyond bf16 rounding. The output must follow
  // the fp32 angle (Rope.AnyPosition) and so be far from the fp64 one in
  // a good number of components: this tells the two apart.
  std::vector<float> freqs = frequencies(kCompressedRope);
  const std::vector<float> x = sampleSlice();
  const int64_t pos = 1048575;
  std::vector<float> y = x;
  rope(y, pos, freqs);
  std::vector<double> fp64Angles(32);
  for (int i = 0; i < 32; ++i)
    fp64Angles[i] = static_cast<double>(pos) * freqs[i];
  std::vector<double> fp64 = rotated(x, fp64Angles);
  int distinguishable = 0;
  for (int k = 0; k < 64; ++k) {
    double norm = std::hypot(x[k & ~1], x[k | 1]);
    if (std::fabs(y[k] - fp64[k]) > ropeTolerance(fp64[k], norm))
      ++distinguishable;
  }
  EXPECT_GE(distinguishable, 8); // 11 of the 64 here
}

TEST(Rope, AnyPosition) {
  // The largest position of the model (max_position_embeddings − 1) and one
  // past 2^24, where fl32(pos) itself rounds (to 16777216).
  for (const RopeConfig &config : {kSwaRope, kCompressedRope}) {
    std::vector<float> freqs = frequencies(config);
    const std::vector<float> x = sampleSlice();
    for (int64_t pos : {int64_t{1048575}, int64_t{16777217}}) {
      std::vector<float> y = x;
      rope(y, pos, freqs);
      expectFp32AngleRotation(x, y, pos, freqs);
    }
  }
}

TEST(Rope, InterleavedPairsQuarterTurn) {
  // The pairs are (x[2i], x[2i+1]), not (x[i], x[i + n/2]): with f_0 = π/2,
  // f_1 = 0 and position 1, pair 0 turns by a quarter, (a, b) → (−b, a), and
  // pair 1 stays. cos(fl32(π/2)) ≈ −4.4e-8, within bf16 rounding of 0.
  std::vector<float> freqs = {static_cast<float>(std::numbers::pi / 2), 0.0f};
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  rope(x, 1, freqs);
  EXPECT_EQ(x[0], -2.0f);
  EXPECT_EQ(x[1], 1.0f);
  EXPECT_EQ(x[2], 3.0f);
  EXPECT_EQ(x[3], 4.0f);
}

TEST(InverseRope, UndoesRope) {
  // rope rounds each output to bf16: an error of at most (2^-8 + 2^-22)·|pair|
  // per component, so (2^-8 + 2^-22)·√2·|pair| for the pair; the inverse
  // rotation keeps that length and adds its own rounding, at most
  // (2^-8 + 2^-22)·|pair|·(1 + 2^-7). So |back − x| ≤ 2.5·2^-8·|pair|.
  for (const RopeConfig &config : {kSwaRope, kCompressedRope}) {
    std::vector<float> freqs = frequencies(config);
    const std::vector<float> x = sampleSlice();
    for (int64_t pos : {0, 1, 127, 4096, 65535, 1048575}) {
      std::vector<float> y = x;
      rope(y, pos, freqs);
      inverseRope(y, pos, freqs);
      for (int k = 0; k < 64; ++k) {
        double norm = std::hypot(x[k & ~1], x[k | 1]);
        EXPECT_NEAR(y[k], x[k], 2.5 * 0x1p-8 * norm)
            << "pos " << pos << " dim " << k;
      }
    }
  }
}

TEST(InverseRope, RotatesTheOtherWay) {
  // exp(−j·π/2)·(1 + 2j) = 2 − j.
  std::vector<float> freqs = {static_cast<float>(std::numbers::pi / 2)};
  std::vector<float> x = {1.0f, 2.0f};
  inverseRope(x, 1, freqs);
  EXPECT_EQ(x[0], 2.0f);
  EXPECT_EQ(x[1], -1.0f);
}

} // namespace
} // namespace kf::deepseek_v4::reference
