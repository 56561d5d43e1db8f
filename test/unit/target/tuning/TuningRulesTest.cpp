// The tuning rules' reader, and the defaults file it reads: every rule of
// target/tuning/defaults.tuning means something, and the decisions it makes
// are the ones the compiler has always made.
#include "kf/Tuning/TuningRules.h"

#include "kf/Tiling/ColumnTiles.h"
#include "kf/runtime/format.h"
#include "kf/runtime/packed_layout.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <map>

namespace kf::tuning {
namespace {

TEST(TuningRules, ReadsSelectorsSettingsAndComments) {
  ParsedRules parsed = parseRules("# a comment\n"
                                  "\n"
                                  "format=q8_0  n=2048 -> l1_k=1024 # why\n"
                                  "-> max_cols=4\n");
  ASSERT_FALSE(parsed.error) << parsed.error->message;
  ASSERT_EQ(parsed.rules.size(), 2u);
  const Rule &first = parsed.rules[0];
  EXPECT_EQ(first.line, 3u);
  ASSERT_EQ(first.selectors.size(), 2u);
  EXPECT_EQ(first.selectors[1].key, "n");
  EXPECT_EQ(first.selectors[1].value, "2048");
  EXPECT_EQ(first.selectors[1].keyColumn, 14u);
  EXPECT_EQ(first.selectors[1].valueColumn, 16u);
  ASSERT_EQ(first.settings.size(), 1u);
  EXPECT_EQ(first.settings[0].key, "l1_k");
  EXPECT_TRUE(parsed.rules[1].selectors.empty());
}

TEST(TuningRules, NamesTheLineAndColumnOfASyntaxError) {
  struct Case {
    const char *text;
    unsigned line, column;
    const char *message;
  };
  for (const Case &c : {
           Case{"format=q8_0\n", 1, 1, "expected a rule '<selectors> ->"},
           Case{"\nm=4 ->\n", 2, 5, "expected overrides after '->'"},
           Case{"m=4 -> rows\n", 1, 8, "expected key=value, got 'rows'"},
           Case{"m=4 -> a=b=c\n", 1, 8, "expected key=value, got 'a=b=c'"},
           Case{"m=4 m=5 -> rows=16\n", 1, 5, "'m' is given twice"},
       }) {
    ParsedRules parsed = parseRules(c.text);
    ASSERT_TRUE(parsed.error) << c.text;
    EXPECT_TRUE(parsed.rules.empty());
    EXPECT_EQ(parsed.error->line, c.line) << c.text;
    EXPECT_EQ(parsed.error->column, c.column) << c.text;
    EXPECT_NE(parsed.error->message.find(c.message), std::string::npos)
        << parsed.error->message;
  }
  // The same key may select and set.
  EXPECT_FALSE(parseRules("isa=avx2 -> isa=scalar\n").error);
}

// Every rule of the defaults selects on facts the compiler gives and sets
// what it reads, with values it can take.
TEST(TuningDefaults, EveryRuleMeansSomething) {
  ASSERT_FALSE(getDefaultRules().empty());
  for (const Rule &rule : getDefaultRules()) {
    SCOPED_TRACE("defaults.tuning:" + std::to_string(rule.line));
    for (const Word &w : rule.selectors) {
      if (w.key == "format")
        EXPECT_TRUE(formatFromName(w.value).has_value()) << w.value;
      else if (w.key == "coding")
        EXPECT_TRUE(weightCodingNamed(w.value).has_value()) << w.value;
      else if (w.key == "width")
        EXPECT_TRUE(llvm::is_contained(tiling::columnTileWidths(8),
                                       std::stoll(w.value)))
            << w.value;
      else
        ADD_FAILURE() << "unknown selector " << w.key;
    }
    for (const Word &w : rule.settings) {
      int64_t n = -1;
      const bool number = !llvm::StringRef(w.value).getAsInteger(10, n);
      if (w.key == "max_cols")
        EXPECT_TRUE(number && tiling::isMaxColumnTileChoice(n)) << w.value;
      else if (w.key == "decode_once_from")
        EXPECT_TRUE((number && n >= 1) || w.value == "none") << w.value;
      else if (w.key == "prefetch_l2" || w.key == "prefetch_l1")
        EXPECT_TRUE(number && n >= 0 && n % 64 == 0) << w.value;
      else if (w.key == "prefetch_order")
        EXPECT_TRUE(w.value == "keep" || w.value == "free") << w.value;
      else
        ADD_FAILURE() << "unknown setting " << w.key;
    }
  }
}

std::vector<Fact> facts(std::string format, std::optional<int> width = {},
                        std::optional<std::string> coding = {}) {
  std::vector<Fact> f = {{"format", format}};
  if (width)
    f.push_back({"width", std::to_string(*width)});
  if (coding)
    f.push_back({"coding", *coding});
  return f;
}

// The decisions the defaults make, written out: the figures measured in
// docs/benchmarks.md (decode once) and docs/codegen-measurements.md
// (prefetch).
TEST(TuningDefaults, DecideAsMeasured) {
  EXPECT_EQ(getDefaultNumber("max_cols"), 8);

  const std::map<std::string, std::optional<int64_t>> decodeOnce = {
      {"iq2_xxs", 1},       {"iq1_s", 1},           {"iq1_m", 1},
      {"q5_k", 1},          {"q6_k", 24},           {"fractal64", 48},
      {"q4_k", 64},         {"vq3_64", 64},         {"q4_0", 128},
      {"mxfp4", 128},       {"q8_0", std::nullopt}, {"bf16", std::nullopt},
      {"f32", std::nullopt}};
  for (const auto &[format, from] : decodeOnce)
    EXPECT_EQ(getDefaultNumber("decode_once_from",
                               facts(format, std::nullopt, "file")),
              from)
        << format;
  // Ternary codes decode as cheaply as nibbles: never once.
  EXPECT_EQ(
      getDefault("decode_once_from", facts("iq1_s", std::nullopt, "ternary")),
      "none");
  EXPECT_EQ(getDefaultNumber("decode_once_from",
                             facts("iq1_s", std::nullopt, "ternary")),
            std::nullopt);

  struct Prefetch {
    int64_t l2, l1;
    llvm::StringRef order;
  };
  auto prefetch = [](std::string format, int width) {
    std::vector<Fact> f = facts(format, width);
    return Prefetch{*getDefaultNumber("prefetch_l2", f),
                    *getDefaultNumber("prefetch_l1", f),
                    *getDefault("prefetch_order", f)};
  };
  for (const char *format : {"q8_0", "q4_0", "q4_k", "fractal64", "iq2_xxs"}) {
    Prefetch one = prefetch(format, 1);
    EXPECT_EQ(one.l2, 4096) << format;
    EXPECT_EQ(one.l1, 1024) << format;
    EXPECT_EQ(one.order, std::string(format) == "fractal64" ? "free" : "keep")
        << format;
  }
  for (int width : {2, 3, 4, 8}) {
    for (const char *far : {"q8_0", "q5_k", "q6_k"}) {
      Prefetch p = prefetch(far, width);
      EXPECT_EQ(p.l2, 4096) << far << " " << width;
      EXPECT_EQ(p.l1, 1024) << far << " " << width;
    }
    EXPECT_EQ(prefetch("q4_0", width).l2, 0);
    EXPECT_EQ(prefetch("q4_0", width).l1, 1536);
    for (const char *near : {"q4_k", "mxfp4", "fractal64", "iq1_m"}) {
      Prefetch p = prefetch(near, width);
      EXPECT_EQ(p.l2, 0) << near;
      EXPECT_EQ(p.l1, 2048) << near;
      EXPECT_EQ(p.order, "keep") << near;
    }
  }
}

} // namespace
} // namespace kf::tuning
