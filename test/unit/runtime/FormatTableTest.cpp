#include "kf/runtime/format.h"

#include <limits>
#include <set>

#include "gtest/gtest.h"

namespace kf {
namespace {

// The geometry of spec/quant_formats.md §1, row by row.
TEST(FormatTable, MatchesGgmlGeometry) {
  struct Expected {
    Format f;
    const char *name;
    uint32_t ggml, elems, bytes;
  };
  const Expected expected[] = {
      {Format::F32, "f32", 0, 1, 4},
      {Format::F16, "f16", 1, 1, 2},
      {Format::Q8_0, "q8_0", 8, 32, 34},
      {Format::BF16, "bf16", 30, 1, 2},
  };
  for (const Expected &e : expected) {
    const FormatInfo &info = format_info(e.f);
    EXPECT_EQ(info.name, e.name);
    EXPECT_EQ(info.ggml_type, e.ggml) << e.name;
    EXPECT_EQ(info.block_elems, e.elems) << e.name;
    EXPECT_EQ(info.block_bytes, e.bytes) << e.name;
  }
  EXPECT_DOUBLE_EQ(format_info(Format::Q8_0).bits_per_weight(), 8.5);
}

TEST(FormatTable, RowsAreUniqueAndOrdered) {
  std::set<std::string_view> names;
  uint32_t previous = 0;
  bool first = true;
  for (const FormatInfo &info : all_formats()) {
    EXPECT_TRUE(names.insert(info.name).second)
        << "duplicate name " << info.name;
    if (!first) {
      EXPECT_LT(previous, info.ggml_type)
          << info.name << " is out of ggml_type order";
    }
    previous = info.ggml_type;
    first = false;
    EXPECT_EQ(static_cast<uint32_t>(info.format), info.ggml_type);
    EXPECT_GT(info.block_elems, 0u);
    EXPECT_GT(info.block_bytes, 0u);
    bool pairing_known = false;
    for (const FormatInfo &other : all_formats())
      pairing_known |= other.format == info.dot_format;
    EXPECT_TRUE(pairing_known)
        << info.name << " pairs with a format not in the table";
  }
}

TEST(FormatTable, Lookups) {
  EXPECT_EQ(format_from_name("q8_0"), Format::Q8_0);
  EXPECT_EQ(format_from_name("Q8_0"), std::nullopt);
  EXPECT_EQ(format_from_name(""), std::nullopt);
  EXPECT_EQ(format_from_ggml_type(30), Format::BF16);
  EXPECT_EQ(format_from_ggml_type(4), std::nullopt); // removed Q4_2
  EXPECT_EQ(format_from_ggml_type(0xffffffffu), std::nullopt);
}

TEST(FormatTable, RowBytes) {
  EXPECT_EQ(row_bytes(Format::Q8_0, 4096), 128u * 34u);
  EXPECT_EQ(row_bytes(Format::Q8_0, 0), 0u);
  EXPECT_EQ(row_bytes(Format::Q8_0, 33), std::nullopt);
  EXPECT_EQ(row_bytes(Format::Q8_0, -32), std::nullopt);
  EXPECT_EQ(row_bytes(Format::F32, 7), 28u);
  EXPECT_EQ(row_bytes(Format::F32, std::numeric_limits<int64_t>::max()),
            std::nullopt);
}

} // namespace
} // namespace kf
