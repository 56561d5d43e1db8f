// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/primitives.h"

#include <cmath>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::bf16RoundingBound;
using test::isBf16;
using test::kU32;

TEST(RoundBf16, NearestEven) {
  EXPECT_EQ(roundBf16(1.0f), 1.0f);
  EXPECT_EQ(roundBf16(1.0f + 0x1p-8f), 1.0f);                   // tie, to even
  EXPECT_EQ(roundBf16(1.0f + 0x3p-8f), 1.0f + 0x1p-6f);         // tie, to even
  EXPECT_EQ(roundBf16(1.0f + 0x1p-8f + 0x1p-20f), 1 + 0x1p-7f); // above tie
  EXPECT_EQ(roundBf16(-3.0f), -3.0f);

  std::vector<float> v = {1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 0.1f};
  roundBf16(v);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 1.0f + 0x1p-6f);
  EXPECT_TRUE(isBf16(v[2]));
}

TEST(InverseRms, MatchesFormula) {
  // mean(x²) = (9 + 16) / 2 = 12.5; r = 1/sqrt(12.5 + 1e-6). The sum is exact,
  // mean + eps and the rsqrt each round once in fp32: within 2 units of 2^-24.
  std::vector<float> x = {3, -4};
  double expected = 1 / std::sqrt(12.5 + 1e-6);
  EXPECT_NEAR(inverseRms(x, kNormEps), expected, 2 * kU32 * expected);
}

TEST(RmsNorm, HandComputed) {
  // §2: y = w ⊙ x / sqrt(mean(x²) + 1e-6); mean(x²) = 30/4 = 7.5.
  std::vector<float> x = {1, -2, 3, -4};
  std::vector<float> w = {1, 0.5f, 2, -1.25f};
  std::vector<float> y(4);
  rmsNorm(x, w, kNormEps, y);
  double r = 1 / std::sqrt(7.5 + 1e-6);
  for (size_t i = 0; i < 4; ++i) {
    double expected = w[i] * x[i] * r;
    // fp32 maths (r, x·r, ·w: at most 4 roundings of 2^-24 relative), then
    // one bf16 rounding.
    EXPECT_NEAR(y[i], expected,
                bf16RoundingBound(expected) + 4 * kU32 * std::fabs(expected))
        << i;
    EXPECT_TRUE(isBf16(y[i])) << i;
  }
}

TEST(RmsNorm, EpsMattersForSmallInputs) {
  // x = 2^-10 everywhere: mean(x²) = 2^-20 ≈ 9.5e-7, comparable to eps, so
  // y = 2^-10 / sqrt(2^-20 + 1e-6) ≈ 0.699 rather than 1.
  std::vector<float> x(4, 0x1p-10f);
  std::vector<float> w(4, 1.0f);
  std::vector<float> y(4);
  rmsNorm(x, w, kNormEps, y);
  double expected = 0x1p-10 / std::sqrt(0x1p-20 + 1e-6);
  for (float v : y)
    EXPECT_NEAR(v, expected, bf16RoundingBound(expected) + 4 * kU32 * expected);
}

TEST(RmsNorm, OutputMayAliasInput) {
  std::vector<float> x = {2, 2, 2, 2};
  std::vector<float> w = {1, 1, 1, 1};
  rmsNorm(x, w, kNormEps, x);
  // 2/sqrt(4 + 1e-6) = 0.99999988 rounds to bf16 1.
  for (float v : x)
    EXPECT_EQ(v, 1.0f);
}

TEST(RmsScaleBf16, RoundsEveryStepToBf16) {
  // §4.2/§8, worked by hand for x = (1, 1, 5):
  //   squares 1, 1, 25 (exact); mean 9; bf16(9 + 1e-6) = 9;
  //   rsqrt: bf16(1/3) = 0.333984375 (1/3 = 1.0101010|1...b × 2^-2 rounds up);
  //   products: bf16(0.333984375) and bf16(5 · 0.333984375 = 1.669921875),
  //   which is 213.75 steps of 2^-7, so 214 · 2^-7 = 1.671875.
  // In fp32 arithmetic the last would be bf16(5/3) = 1.6640625.
  std::vector<float> x = {1, 1, 5};
  rmsScale(x, kNormEps);
  EXPECT_EQ(x[0], 0.333984375f);
  EXPECT_EQ(x[1], 0.333984375f);
  EXPECT_EQ(x[2], 1.671875f);
}

TEST(RmsScaleBf16, RoundsTheSquares) {
  // x = (17, 34): the squares 289 and 1156 are not bf16 values and round (ties
  // to even) to 288 and 1152; their mean 720 is exact, and bf16(720 + 1e-6)
  // is 720. rsqrt(720) = 0.0372678 → bf16 153·2^-12 = 0.037353515625.
  //   17 · 0.037353515625 = 0.635009765625 → bf16 0.63671875
  //   34 · 0.037353515625 = 1.27001953125  → bf16 1.2734375
  // With unrounded squares the mean would be bf16(722.5) = 724 and the
  // results 0.6328125 and 1.265625.
  std::vector<float> x = {17, 34};
  rmsScale(x, kNormEps);
  EXPECT_EQ(x[0], 0.63671875f);
  EXPECT_EQ(x[1], 1.2734375f);
}

TEST(RmsScaleBf16, RoundsTheMeanBeforeAddingEps) {
  // 256 values: one 2, two 0 and 253 ones. mean(x²) = 257/256 = 1 + 2^-8, a
  // tie between bf16 1 and 1 + 2^-7 that rounds to 1; bf16(1 + 1e-6) = 1, so
  // r = 1 and x is unchanged. Adding eps to the unrounded mean would push it
  // past the tie, to 1 + 2^-7, and scale x by bf16(0.99612) = 0.99609375.
  std::vector<float> x(256, 1.0f);
  x[0] = 2;
  x[1] = 0;
  x[2] = 0;
  const std::vector<float> original = x;
  rmsScale(x, kNormEps);
  EXPECT_EQ(x, original);
}

TEST(RmsScaleBf16, RoundsMeanPlusEps) {
  // x = 144·2^-12 = 0.03515625: x² = 81·2^-16 is a bf16 value, and so is the
  // mean. mean + 1e-6 lies 0.13 of a bf16 step above it, so
  // bf16(mean + eps) = mean, r = bf16(1/x = 28.444) = 28.5 and
  // x·r = 1.001953125 → bf16 1. Kept in fp32, mean + eps would give
  // r = bf16(28.4329) = 28.375 and x·r → 0.99609375.
  std::vector<float> x = {0.03515625f};
  rmsScale(x, kNormEps);
  EXPECT_EQ(x[0], 1.0f);
}

TEST(PrimitivesDeathTest, RejectsMismatchedShapes) {
  std::vector<float> x = {1, 2, 3};
  std::vector<float> w = {1, 2};
  std::vector<float> y(3);
  EXPECT_DEATH(rmsNorm(x, w, kNormEps, y), "rms_norm");
}

} // namespace
} // namespace kf::deepseek_v4::reference
