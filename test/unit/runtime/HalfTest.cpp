#include "kf/runtime/half.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"

namespace kf {
namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float fromBits(uint32_t u) { return std::bit_cast<float>(u); }
bool isNan16(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

TEST(Half, KnownValues) {
  EXPECT_EQ(fp16ToFp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16ToFp32(0xc000), -2.0f);
  EXPECT_EQ(fp16ToFp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16ToFp32(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(fp16ToFp32(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16ToFp32(0x0400), std::ldexp(1.0f, -14)); // smallest normal
  EXPECT_EQ(bits(fp16ToFp32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16ToFp32(0x7c00), INFINITY);
  EXPECT_TRUE(std::isnan(fp16ToFp32(0x7e00)));

  EXPECT_EQ(fp32ToFp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32ToFp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32ToFp16(65519.99f), 0x7bff);
  EXPECT_EQ(fp32ToFp16(65520.0f), 0x7c00); // tie with an odd mantissa: to inf
  EXPECT_EQ(fp32ToFp16(-1e9f), 0xfc00);
  EXPECT_EQ(fp32ToFp16(std::ldexp(1.0f, -25)), 0x0000); // tie: to even (zero)
  EXPECT_EQ(fp32ToFp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(fp32ToFp16(std::ldexp(3.0f, -25)),
            0x0002); // 1.5 ulp: tie, to even
  EXPECT_EQ(fp32ToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie, to even
  EXPECT_EQ(fp32ToFp16(1.0f + std::ldexp(3.0f, -11)), 0x3c02); // tie, to even
  EXPECT_EQ(fp32ToFp16(std::ldexp(1023.5f, -24)),
            0x0400); // carries into the normals
  EXPECT_EQ(fp32ToFp16(fromBits(0x7fc00000)), 0x7e00);
  EXPECT_EQ(fp32ToFp16(fromBits(0xff800001)),
            0xfe00); // signalling NaN made quiet
}

TEST(Half, DecodeThenEncodeIsIdentity) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    uint16_t back = fp32ToFp16(fp16ToFp32(static_cast<uint16_t>(h)));
    if (isNan16(static_cast<uint16_t>(h)))
      EXPECT_TRUE(isNan16(back)) << std::hex << h;
    else
      ASSERT_EQ(back, h) << std::hex << h;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 conversions are an independent IEEE implementation.
TEST(Half, AgreesWithCompilerFloat16) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    uint16_t u = static_cast<uint16_t>(h);
    if (isNan16(u))
      continue;
    _Float16 x;
    std::memcpy(&x, &u, 2);
    ASSERT_EQ(bits(fp16ToFp32(u)), bits(static_cast<float>(x)))
        << std::hex << h;
  }
  auto check = [](float f) {
    if (std::isnan(f))
      return;
    _Float16 x = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &x, 2);
    ASSERT_EQ(fp32ToFp16(f), expected) << std::hexfloat << f;
  };
  // Every rounding boundary: the midpoint between consecutive halves and its
  // neighbours, for both signs.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float lo = fp16ToFp32(static_cast<uint16_t>(h));
    float hi =
        h + 1 == 0x7c00 ? 65536.0f : fp16ToFp32(static_cast<uint16_t>(h + 1));
    float mid = lo + (hi - lo) / 2; // exact in fp32
    for (float f :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), lo}) {
      check(f);
      check(-f);
    }
  }
  // A sweep over the whole fp32 range.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093)
    check(fromBits(static_cast<uint32_t>(u)));
}
#endif

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(bf16ToFp32(0x3f80), 1.0f);
  EXPECT_EQ(bits(bf16ToFp32(0xc049)), 0xc0490000u);
  EXPECT_EQ(fp32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32ToBf16(fromBits(0x3f808000)), 0x3f80); // tie, even: down
  EXPECT_EQ(fp32ToBf16(fromBits(0x3f818000)), 0x3f82); // tie, odd: up
  EXPECT_EQ(fp32ToBf16(fromBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(fp32ToBf16(fromBits(0x3f807fff)), 0x3f80);
  EXPECT_EQ(fp32ToBf16(fromBits(0x7f7fffff)), 0x7f80); // rounds to inf
  EXPECT_EQ(fp32ToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(fp32ToBf16(fromBits(0x7f800001)), 0x7fc0); // NaN forced quiet
  EXPECT_EQ(fp32ToBf16(fromBits(0xffc00000)), 0xffc0);
  EXPECT_EQ(fp32ToBf16(fromBits(0x00008000)), 0x0000); // subnormal tie, even
}

TEST(BFloat16, DecodeThenEncodeIsIdentity) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t u = static_cast<uint16_t>(b);
    bool nan = (u & 0x7f80) == 0x7f80 && (u & 0x7f) != 0;
    uint16_t back = fp32ToBf16(bf16ToFp32(u));
    if (nan)
      EXPECT_EQ(back, u | 64) << std::hex << b;
    else
      ASSERT_EQ(back, u) << std::hex << b;
  }
}

} // namespace
} // namespace kf
