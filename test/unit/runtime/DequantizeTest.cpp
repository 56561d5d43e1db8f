#include "kf/runtime/quant.h"

#include <cstring>
#include <vector>

#include "kf/runtime/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kf {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> q8_0Block(uint16_t d, const int8_t (&qs)[32]) {
  std::vector<uint8_t> b(34);
  std::memcpy(b.data(), &d, 2);
  std::memcpy(b.data() + 2, qs, 32);
  return b;
}

TEST(Dequantize, Q8_0KnownAnswer) {
  int8_t qs[32];
  for (int j = 0; j < 32; ++j)
    qs[j] = static_cast<int8_t>(j * 8 - 128); // -128 .. 120
  std::vector<uint8_t> block = q8_0Block(0x3800 /* 0.5 */, qs);
  std::vector<float> y(32);
  ASSERT_TRUE(dequantize(Format::Q8_0, block, y).ok());
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], 0.5f * (j * 8 - 128)) << j;
}

TEST(Dequantize, Q8_0SubnormalScaleAndMultipleBlocks) {
  int8_t qs[32] = {};
  qs[0] = 127;
  qs[31] = -127;
  std::vector<uint8_t> data = q8_0Block(0x0001 /* 2^-24 */, qs);
  std::vector<uint8_t> second = q8_0Block(0xbc00 /* -1 */, qs);
  data.insert(data.end(), second.begin(), second.end());
  std::vector<float> y(64);
  ASSERT_TRUE(dequantize(Format::Q8_0, data, y).ok());
  EXPECT_EQ(y[0], std::ldexp(127.0f, -24));
  EXPECT_EQ(y[31], std::ldexp(-127.0f, -24));
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[32], -127.0f);
  EXPECT_EQ(y[63], 127.0f);
}

TEST(Dequantize, PlainFormats) {
  const float values[3] = {1.5f, -0.0f, 65504.0f};
  std::vector<uint8_t> f32(12), f16(6), bf16(6);
  std::memcpy(f32.data(), values, 12);
  for (int i = 0; i < 3; ++i) {
    uint16_t h = fp32ToFp16(values[i]), b = fp32ToBf16(values[i]);
    std::memcpy(f16.data() + 2 * i, &h, 2);
    std::memcpy(bf16.data() + 2 * i, &b, 2);
  }
  std::vector<float> y(3);
  ASSERT_TRUE(dequantize(Format::F32, f32, y).ok());
  EXPECT_EQ(std::memcmp(y.data(), values, 12), 0);
  ASSERT_TRUE(dequantize(Format::F16, f16, y).ok());
  EXPECT_EQ(std::memcmp(y.data(), values, 12), 0);
  ASSERT_TRUE(dequantize(Format::BF16, bf16, y).ok());
  EXPECT_EQ(y[0], 1.5f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 65536.0f); // 65504 rounds up in bf16's 8-bit mantissa
}

TEST(Dequantize, RejectsBadSizes) {
  std::vector<uint8_t> block(34);
  std::vector<float> y(33);
  absl::Status s = dequantize(Format::Q8_0, block, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("not a whole number of blocks of 32"));

  y.resize(32);
  s = dequantize(Format::Q8_0, std::span(block).first(33), y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("need 34 bytes, got 33"));

  EXPECT_TRUE(dequantize(Format::Q8_0, {}, {}).ok());
}

// Zero elements are a valid row of every format; no codec may touch the
// (null) buffers of an empty span (UBSan checks the sanitizer build).
TEST(Codecs, AcceptEmptyRows) {
  for (const FormatInfo &info : allFormats()) {
    if (hasDequantize(info.format)) {
      EXPECT_TRUE(dequantize(info.format, {}, {}).ok()) << info.name;
    }
    if (hasQuantize(info.format)) {
      EXPECT_TRUE(quantize(info.format, {}, {}).ok()) << info.name;
    }
    if (hasQuantizeActivation(info.format)) {
      EXPECT_TRUE(quantizeActivation(info.format, {}, {}).ok()) << info.name;
    }
    if (hasDot(info.format)) {
      absl::StatusOr<float> d = dot(info.format, {}, {});
      ASSERT_TRUE(d.ok()) << info.name << ": " << d.status();
      EXPECT_EQ(*d, 0.0f) << info.name;
    }
  }
}

} // namespace
} // namespace kf
