// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/quant_sim.h"

#include <cmath>
#include <limits>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::isBf16;

TEST(CeilLog2, FromExponentAndMantissaBits) {
  EXPECT_EQ(ceilLog2(1.0f), 0);
  EXPECT_EQ(ceilLog2(std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(ceilLog2(0.75f), 0);
  EXPECT_EQ(ceilLog2(0.5f), -1);
  EXPECT_EQ(ceilLog2(448.0f), 9); // 1.75·2^8
  EXPECT_EQ(ceilLog2(0x1p-126f), -126);
  EXPECT_EQ(ceilLog2(0x3p-126f), -124); // 1.5·2^-125
  EXPECT_EQ(ceilLog2(std::numeric_limits<float>::max()), 128);
}

TEST(Fp8BlockScale, PowerOfTwoRoundedUp) {
  // amax = 448·2^k: fl32(1/448) = fl32(1/7)/64, so 448·fl32(1/448) =
  // 7·fl32(1/7) = 1 + 4.5e-8, which rounds to exactly 1 in fp32. The scale is
  // 2^k and the largest value takes the largest code 448, not 224.
  for (int k = -12; k <= 12; ++k) {
    float amax = std::ldexp(448.0f, k);
    EXPECT_EQ(fp8BlockScale(amax), std::ldexp(1.0f, k)) << k;
    // One ulp above, the scale doubles.
    EXPECT_EQ(fp8BlockScale(std::nextafter(amax, INFINITY)),
              std::ldexp(1.0f, k + 1))
        << k;
  }
  EXPECT_EQ(fp8BlockScale(300.0f), 1.0f);
  EXPECT_EQ(fp8BlockScale(1.0f), 0x1p-8f); // 1/448 ≈ 2^-8.8
  // The floor 1e-4: 1e-4/448 ≈ 2.23e-7 lies in (2^-23, 2^-22].
  EXPECT_EQ(fp8BlockScale(0.0f), 0x1p-22f);
  EXPECT_EQ(fp8BlockScale(1e-9f), 0x1p-22f);
}

TEST(Fp4BlockScale, PowerOfTwoRoundedUp) {
  // fl32(1/6)·6 = 1 + 3e-8 rounds to 1: amax 6·2^k gives scale 2^k.
  for (int k = -12; k <= 12; ++k) {
    float amax = std::ldexp(6.0f, k);
    EXPECT_EQ(fp4BlockScale(amax), std::ldexp(1.0f, k)) << k;
    EXPECT_EQ(fp4BlockScale(std::nextafter(amax, INFINITY)),
              std::ldexp(1.0f, k + 1))
        << k;
  }
  EXPECT_EQ(fp4BlockScale(3.0f), 0.5f);
  EXPECT_EQ(fp4BlockScale(12.0f), 2.0f);
  // The floor 6·2^-126 gives 2^-126.
  EXPECT_EQ(fp4BlockScale(0.0f), 0x1p-126f);
}

TEST(RoundE4m3, NormalsAndTies) {
  EXPECT_EQ(roundE4m3(1.0f), 1.0f);
  EXPECT_EQ(roundE4m3(1.125f), 1.125f);
  EXPECT_EQ(roundE4m3(448.0f), 448.0f);
  EXPECT_EQ(roundE4m3(-448.0f), -448.0f);
  EXPECT_EQ(roundE4m3(0x1p-6f), 0x1p-6f); // smallest normal
  EXPECT_EQ(roundE4m3(1.1f), 1.125f);
  // Ties go to the even mantissa.
  EXPECT_EQ(roundE4m3(1.0625f), 1.0f);   // between 1 (m 0) and 1.125 (m 1)
  EXPECT_EQ(roundE4m3(1.1875f), 1.25f);  // between 1.125 (m 1), 1.25 (m 2)
  EXPECT_EQ(roundE4m3(-1.0625f), -1.0f); // symmetric
  EXPECT_EQ(roundE4m3(400.0f), 384.0f);  // between 384 (m 4) and 416 (m 5)
  EXPECT_EQ(roundE4m3(432.0f), 448.0f);  // between 416 (m 5) and 448 (m 6)
  EXPECT_EQ(roundE4m3(0.3f), 0.3125f);   // step 2^-5 in [0.25, 0.5)
}

TEST(RoundE4m3, Subnormals) {
  // Below 2^-6 the step is 2^-9.
  EXPECT_EQ(roundE4m3(0x1p-9f), 0x1p-9f);
  EXPECT_EQ(roundE4m3(0x7p-9f), 0x7p-9f);
  EXPECT_EQ(roundE4m3(0x1p-10f), 0.0f);            // tie: to 0
  EXPECT_EQ(roundE4m3(0x3p-10f), 0x2p-9f);         // tie: to 2·2^-9
  EXPECT_EQ(roundE4m3(0x1.8p-10f), 0x1p-9f);       // above the tie
  EXPECT_EQ(roundE4m3(0xfp-10f), 0x1p-6f);         // tie: into the normals
  EXPECT_EQ(roundE4m3(-0x5p-10f), -0x2p-9f);       // tie, negative
  EXPECT_TRUE(std::signbit(roundE4m3(-0x1p-12f))); // −0 keeps its sign
  EXPECT_EQ(roundE4m3(std::numeric_limits<float>::denorm_min()), 0.0f);
}

TEST(RoundE4m3, Saturates) {
  EXPECT_EQ(roundE4m3(449.0f), 448.0f);
  EXPECT_EQ(roundE4m3(480.0f), 448.0f); // without the clamp: 480
  EXPECT_EQ(roundE4m3(1e6f), 448.0f);
  EXPECT_EQ(roundE4m3(-1e30f), -448.0f);
}

TEST(RoundE2m1, SpecTies) {
  // §2: 0.25→0, 0.75→1, 1.25→1, 1.75→2, 2.5→2, 3.5→4, 5→4.
  const float in[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float out[] = {0.0f, 1.0f, 1.0f, 2.0f, 2.0f, 4.0f, 4.0f};
  for (size_t i = 0; i < std::size(in); ++i) {
    EXPECT_EQ(roundE2m1(in[i]), out[i]) << in[i];
    EXPECT_EQ(roundE2m1(-in[i]), -out[i]) << -in[i];
  }
}

TEST(RoundE2m1, GridAndSaturation) {
  for (float v : {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f}) {
    EXPECT_EQ(roundE2m1(v), v);
    EXPECT_EQ(roundE2m1(-v), -v);
  }
  EXPECT_EQ(roundE2m1(0.26f), 0.5f);
  EXPECT_EQ(roundE2m1(0.24f), 0.0f);
  EXPECT_EQ(roundE2m1(2.6f), 3.0f);
  EXPECT_EQ(roundE2m1(5.5f), 6.0f);
  EXPECT_EQ(roundE2m1(7.0f), 6.0f); // without the clamp: 8
  EXPECT_EQ(roundE2m1(100.0f), 6.0f);
  EXPECT_EQ(roundE2m1(-100.0f), -6.0f);
}

TEST(Fp8Sim, TwoBlocksWithTheirOwnScales) {
  // Block 0: amax 448, scale 1, so each value is just rounded to e4m3.
  // Block 1: amax 1, scale 2^-8: x/s = 256·x, e.g. 0.1 → 25.6 → 26 (step 2
  // in [16, 32)) → 26·2^-8 = 0.1015625; 1 → 256 exactly.
  std::vector<float> x = {448.0f, 1.0625f, 0x3p-10f, -0.3f,
                          1.0f,   0.1f,    -0.5f,    0x1p-20f};
  fp8Sim(x, 4);
  const std::vector<float> expected = {448.0f, 1.0f,       0x1p-8f, -0.3125f,
                                       1.0f,   0.1015625f, -0.5f,   0.0f};
  EXPECT_EQ(x, expected);
  for (float v : x)
    EXPECT_TRUE(isBf16(v));
}

TEST(Fp8Sim, ScaleRightAtAPowerOfTwo) {
  // amax = 224 = 448·2^-1: scale 2^-1, so 224 takes the top code 448 and the
  // subnormal step is 2^-9·2^-1 = 2^-10, which keeps 2^-10.
  std::vector<float> at = {224.0f, 0x1p-10f};
  fp8Sim(at, 2);
  EXPECT_EQ(at[0], 224.0f);
  EXPECT_EQ(at[1], 0x1p-10f);
  // One fp32 ulp more (224 + 2^-16): the scale doubles to 1; 224 + 2^-16
  // rounds to 224 (step 16), and 2^-10 is now a tie between 0 and 2^-9: 0.
  std::vector<float> above = {std::nextafter(224.0f, INFINITY), 0x1p-10f};
  fp8Sim(above, 2);
  EXPECT_EQ(above[0], 224.0f);
  EXPECT_EQ(above[1], 0.0f);
}

TEST(Fp8Sim, TinyBlockUsesTheFloor) {
  // amax below 1e-4: the scale is 2^-22 and the values keep 4 bits.
  std::vector<float> x = {1e-5f, -3e-6f};
  fp8Sim(x, 2);
  // 1e-5·2^22 = 41.94 → 40 (step 4 in [32, 64));
  // 3e-6·2^22 = 12.58 → 13 (step 1 in [8, 16)).
  EXPECT_EQ(x[0], 40.0f * 0x1p-22f);
  EXPECT_EQ(x[1], -13.0f * 0x1p-22f);
}

TEST(Fp4Sim, SpecTiesAtScaleOne) {
  // One block of 32 with amax 6 (scale 1): the values are rounded on the e2m1
  // grid, with the spec's ties.
  std::vector<float> x(32, 0.0f);
  const float in[] = {6.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float out[] = {6.0f, 0.0f, 1.0f, 1.0f, 2.0f, 2.0f, 4.0f, 4.0f};
  for (size_t i = 0; i < std::size(in); ++i) {
    x[i] = in[i];
    x[16 + i] = -in[i];
  }
  fp4Sim(x, 32);
  for (size_t i = 0; i < std::size(in); ++i) {
    EXPECT_EQ(x[i], out[i]) << in[i];
    EXPECT_EQ(x[16 + i], -out[i]) << -in[i];
  }
}

TEST(Fp4Sim, BlocksOf32) {
  // Block 0: amax 12, scale 2: 5 → 2.5 → 2 → 4; 7 → 3.5 → 4 → 8; 1 → 0.5 → 1.
  // Block 1: amax 0.75 = 6·2^-3, scale 2^-3: 0.3 → 2.4 → 2 → 0.25;
  //          0.1 → 0.8 → 1 → 0.125.
  std::vector<float> x(64, 0.0f);
  x[0] = 12.0f;
  x[1] = 5.0f;
  x[2] = -7.0f;
  x[3] = 1.0f;
  x[32] = 0.75f;
  x[33] = 0.3f;
  x[34] = -0.1f;
  fp4Sim(x, 32);
  EXPECT_EQ(x[0], 12.0f);
  EXPECT_EQ(x[1], 4.0f);
  EXPECT_EQ(x[2], -8.0f);
  EXPECT_EQ(x[3], 1.0f);
  EXPECT_EQ(x[32], 0.75f);
  EXPECT_EQ(x[33], 0.25f);
  EXPECT_EQ(x[34], -0.125f);
  for (float v : x)
    EXPECT_TRUE(isBf16(v));
}

TEST(Fp4Sim, SubnormalScale) {
  // amax at the floor 6·2^-126: scale 2^-126, and the smallest code 0.5 gives
  // 2^-127, an fp32 (and bf16) subnormal, exactly.
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f * 0x1p-126f;
  x[1] = 0x1p-127f;
  fp4Sim(x, 32);
  EXPECT_EQ(x[0], 6.0f * 0x1p-126f);
  EXPECT_EQ(x[1], 0x1p-127f);
}

TEST(QuantSimDeathTest, RejectsPartialBlocks) {
  std::vector<float> x(33);
  EXPECT_DEATH(fp4Sim(x, 32), "multiple of the block");
}

} // namespace
} // namespace kf::deepseek_v4::reference
