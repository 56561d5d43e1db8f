#include "kf/runtime/format.h"

#include <limits>
#include <set>

#include "gtest/gtest.h"

namespace kf {
namespace {

// The geometry of docs/formats/README.md's format table, row by row.
TEST(FormatTable, MatchesGgmlGeometry) {
  struct Expected {
    Format f;
    const char *name;
    uint32_t ggml, elems, bytes;
  };
  const Expected expected[] = {
      {Format::F32, "f32", 0, 1, 4},
      {Format::F16, "f16", 1, 1, 2},
      {Format::Q4_0, "q4_0", 2, 32, 18},
      {Format::Q4_1, "q4_1", 3, 32, 20},
      {Format::Q5_0, "q5_0", 6, 32, 22},
      {Format::Q5_1, "q5_1", 7, 32, 24},
      {Format::Q8_0, "q8_0", 8, 32, 34},
      {Format::Q8_1, "q8_1", 9, 32, 36},
      {Format::Q2_K, "q2_k", 10, 256, 84},
      {Format::Q3_K, "q3_k", 11, 256, 110},
      {Format::Q4_K, "q4_k", 12, 256, 144},
      {Format::Q5_K, "q5_k", 13, 256, 176},
      {Format::Q6_K, "q6_k", 14, 256, 210},
      {Format::Q8_K, "q8_k", 15, 256, 292},
      {Format::IQ2_XXS, "iq2_xxs", 16, 256, 66},
      {Format::IQ2_XS, "iq2_xs", 17, 256, 74},
      {Format::IQ1_S, "iq1_s", 19, 256, 50},
      {Format::IQ4_NL, "iq4_nl", 20, 32, 18},
      {Format::IQ4_XS, "iq4_xs", 23, 256, 136},
      {Format::I32, "i32", 26, 1, 4},
      {Format::IQ1_M, "iq1_m", 29, 256, 56},
      {Format::BF16, "bf16", 30, 1, 2},
      {Format::MXFP4, "mxfp4", 39, 32, 17},
      {Format::FRACTAL64, "fractal64", 4096, 64, 30},
      {Format::VQ3_64, "vq3_64", 4097, 64, 24},
  };
  EXPECT_EQ(std::size(expected), allFormats().size());
  for (const Expected &e : expected) {
    const FormatInfo &info = formatInfo(e.f);
    EXPECT_EQ(info.name, e.name);
    EXPECT_EQ(info.ggmlType, e.ggml) << e.name;
    EXPECT_EQ(info.blockElems, e.elems) << e.name;
    EXPECT_EQ(info.blockBytes, e.bytes) << e.name;
  }
  EXPECT_DOUBLE_EQ(formatInfo(Format::Q8_0).bitsPerWeight(), 8.5);
  EXPECT_DOUBLE_EQ(formatInfo(Format::IQ1_S).bitsPerWeight(), 1.5625);
  EXPECT_DOUBLE_EQ(formatInfo(Format::FRACTAL64).bitsPerWeight(), 3.75);
  EXPECT_DOUBLE_EQ(formatInfo(Format::VQ3_64).bitsPerWeight(), 3.0);
  // The vec_dot_type pairings of the format table (and ours for the private
  // formats).
  EXPECT_EQ(formatInfo(Format::Q4_1).dotFormat, Format::Q8_1);
  EXPECT_EQ(formatInfo(Format::IQ4_NL).dotFormat, Format::Q8_0);
  EXPECT_EQ(formatInfo(Format::IQ1_M).dotFormat, Format::Q8_K);
  EXPECT_EQ(formatInfo(Format::MXFP4).dotFormat, Format::Q8_0);
  EXPECT_EQ(formatInfo(Format::BF16).dotFormat, Format::BF16);
  EXPECT_EQ(formatInfo(Format::Q8_K).role, FormatRole::Activation);
  EXPECT_EQ(formatInfo(Format::Q8_1).role, FormatRole::Activation);
  EXPECT_TRUE(formatInfo(Format::VQ3_64).isPrivate());
  EXPECT_FALSE(formatInfo(Format::MXFP4).isPrivate());
}

TEST(FormatTable, RowsAreUniqueAndOrdered) {
  std::set<std::string_view> names;
  uint32_t previous = 0;
  bool first = true;
  for (const FormatInfo &info : allFormats()) {
    EXPECT_TRUE(names.insert(info.name).second)
        << "duplicate name " << info.name;
    if (!first) {
      EXPECT_LT(previous, info.ggmlType)
          << info.name << " is out of ggml_type order";
    }
    previous = info.ggmlType;
    first = false;
    EXPECT_EQ(static_cast<uint32_t>(info.format), info.ggmlType);
    EXPECT_GT(info.blockElems, 0u);
    EXPECT_GT(info.blockBytes, 0u);
    bool pairingKnown = false;
    for (const FormatInfo &other : allFormats())
      pairingKnown |= other.format == info.dotFormat;
    EXPECT_TRUE(pairingKnown)
        << info.name << " pairs with a format not in the table";
  }
}

TEST(FormatTable, Lookups) {
  EXPECT_EQ(formatFromName("q8_0"), Format::Q8_0);
  EXPECT_EQ(formatFromName("Q8_0"), std::nullopt);
  EXPECT_EQ(formatFromName(""), std::nullopt);
  EXPECT_EQ(formatFromGgmlType(30), Format::BF16);
  EXPECT_EQ(formatFromGgmlType(4), std::nullopt); // removed Q4_2
  EXPECT_EQ(formatFromGgmlType(0xffffffffu), std::nullopt);
}

TEST(FormatTable, RowBytes) {
  EXPECT_EQ(rowBytes(Format::Q8_0, 4096), 128u * 34u);
  EXPECT_EQ(rowBytes(Format::Q8_0, 0), 0u);
  EXPECT_EQ(rowBytes(Format::Q8_0, 33), std::nullopt);
  EXPECT_EQ(rowBytes(Format::Q8_0, -32), std::nullopt);
  EXPECT_EQ(rowBytes(Format::F32, 7), 28u);
  EXPECT_EQ(rowBytes(Format::F32, std::numeric_limits<int64_t>::max()),
            std::nullopt);
}

} // namespace
} // namespace kf
