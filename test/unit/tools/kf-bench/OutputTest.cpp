// Whole kf-bench matmul runs on tiny shapes: the table's lines, and JSON
// objects that a strict parser reads back with every field.
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>
#include <variant>

#include "RunTool.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;
using testing::runWith;

// A JSON value of a flat object: a string, a number, a boolean or null.
using Value = std::variant<std::string, double, bool, std::nullptr_t>;
using Object = std::map<std::string, Value>;

// Parses one flat JSON object (RFC 8259, without nested arrays or objects,
// which kf-bench does not write); nullopt on any deviation.
class Parser {
public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<Object> object() {
    Object o;
    if (!eat('{'))
      return std::nullopt;
    if (eat('}'))
      return end(o);
    do {
      std::optional<std::string> key = string();
      if (!key || !eat(':'))
        return std::nullopt;
      std::optional<Value> v = value();
      if (!v || o.contains(*key))
        return std::nullopt;
      o[*key] = *v;
    } while (eat(','));
    if (!eat('}'))
      return std::nullopt;
    return end(o);
  }

private:
  std::optional<Object> end(Object &o) {
    space();
    return i_ == s_.size() ? std::optional<Object>(o) : std::nullopt;
  }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    space();
    if (s_.substr(i_, w.size()) != w)
      return false;
    i_ += w.size();
    return true;
  }
  std::optional<std::string> string() {
    if (!eat('"'))
      return std::nullopt;
    std::string r;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20)
        return std::nullopt;
      if (c == '\\') {
        if (i_ >= s_.size() ||
            std::string_view("\"\\/").find(s_[i_]) == std::string_view::npos)
          return std::nullopt; // kf-bench escapes nothing else it writes
        c = s_[i_++];
      }
      r += c;
    }
    if (i_ >= s_.size())
      return std::nullopt;
    ++i_;
    return r;
  }
  std::optional<Value> value() {
    space();
    if (i_ < s_.size() && s_[i_] == '"') {
      std::optional<std::string> str = string();
      return str ? std::optional<Value>(*str) : std::nullopt;
    }
    if (word("true"))
      return Value(true);
    if (word("false"))
      return Value(false);
    if (word("null"))
      return Value(nullptr);
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    size_t start = i_;
    auto digits = [&] {
      size_t from = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        ++i_;
      return i_ > from;
    };
    if (i_ < s_.size() && s_[i_] == '-')
      ++i_;
    if (i_ < s_.size() && s_[i_] == '0')
      ++i_;
    else if (!digits())
      return std::nullopt;
    if (i_ < s_.size() && s_[i_] == '.' && (++i_, !digits()))
      return std::nullopt;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
        ++i_;
      if (!digits())
        return std::nullopt;
    }
    return Value(std::strtod(std::string(s_.substr(start, i_ - start)).c_str(),
                             nullptr));
  }

  std::string_view s_;
  size_t i_ = 0;
};

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    r.push_back(line);
  return r;
}

// Every field of a case object; oneDNN's add "implementation".
constexpr const char *kFields[] = {"kernel",
                                   "format",
                                   "m",
                                   "k",
                                   "n",
                                   "threads",
                                   "mode",
                                   "reps",
                                   "rounds",
                                   "time_s",
                                   "time_spread",
                                   "time_min_s",
                                   "gflops",
                                   "weight_bytes",
                                   "weight_copies",
                                   "weight_gbps",
                                   "dram_gbps",
                                   "dram_max_gbps",
                                   "probe_failure",
                                   "other_cpus",
                                   "roofline_floor_s",
                                   "roofline_pct",
                                   "onednn_int8_gops",
                                   "onednn_f32_gflops",
                                   "vs_onednn_int8",
                                   "vs_onednn_f32",
                                   "set_bytes",
                                   "l3_bytes",
                                   "onednn_version",
                                   "onednn_isa"};

const std::vector<std::string> kTiny = {
    "matmul", "--format", "q8_0,q4_k", "--m", "1,3", "--k", "256", "--n", "16",
    "--reps", "1", "--threads", "1,2", "--cold-mib", "1",
    // Not oneDNN again where the CPU has AMX: the same rows on every CPU.
    "--onednn-also", "none"};

TEST(KfBenchOutput, JsonObjectPerCaseWithEveryField) {
  std::vector<std::string> args = kTiny;
  args.push_back("--json");
  testing::Result r = runWith(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> objects = lines(r.out);
  // oneDNN's two types and the reference on two formats, each at 2 Ms on 2
  // thread counts.
  ASSERT_EQ(objects.size(), 16u) << r.out;
  std::map<std::string, int> perKernel;
  for (const std::string &line : objects) {
    std::optional<Object> o = Parser(line).object();
    ASSERT_TRUE(o) << line;
    for (const char *field : kFields)
      EXPECT_TRUE(o->contains(field)) << field << " in " << line;
    const std::string &kernel = std::get<std::string>(o->at("kernel"));
    ++perKernel[kernel];
    EXPECT_EQ(std::get<double>(o->at("k")), 256);
    EXPECT_EQ(std::get<double>(o->at("n")), 16);
    EXPECT_EQ(std::get<double>(o->at("reps")), 1);
    EXPECT_EQ(std::get<double>(o->at("rounds")), 3);
    EXPECT_GE(std::get<double>(o->at("dram_max_gbps")),
              std::get<double>(o->at("dram_gbps")));
    EXPECT_EQ(std::get<std::string>(o->at("mode")), "cold");
    EXPECT_GT(std::get<double>(o->at("time_s")), 0);
    EXPECT_GT(std::get<double>(o->at("dram_gbps")), 0);
    EXPECT_EQ(std::get<double>(o->at("set_bytes")), 1 << 20);
    if (kernel == "reference") {
      // The ratios to oneDNN measured in the same run.
      EXPECT_GT(std::get<double>(o->at("vs_onednn_int8")), 0);
      EXPECT_GT(std::get<double>(o->at("vs_onednn_f32")), 0);
      double bytes = std::get<std::string>(o->at("format")) == "q8_0"
                         ? 16 * 8 * 34
                         : 16 * 144;
      EXPECT_EQ(std::get<double>(o->at("weight_bytes")), bytes);
    } else {
      EXPECT_EQ(kernel, "onednn");
      EXPECT_TRUE(o->contains("implementation"));
      EXPECT_TRUE(
          std::holds_alternative<std::nullptr_t>(o->at("vs_onednn_int8")));
    }
  }
  EXPECT_EQ(perKernel["onednn"], 8);
  EXPECT_EQ(perKernel["reference"], 8);
}

TEST(KfBenchOutput, TableWithHeaderAndARowPerCase) {
  std::vector<std::string> args = kTiny;
  args.push_back("--hot");
  testing::Result r = runWith(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hot: one weight matrix"));
  EXPECT_THAT(r.out, HasSubstr("3 rounds over all cases"));
  EXPECT_THAT(r.out, HasSubstr("the median of 4 probes"));
  EXPECT_THAT(r.out, HasSubstr("8 streams + prefetchnta 1 KiB"));
  EXPECT_THAT(r.out, HasSubstr("no case read cold weights faster"));
  EXPECT_THAT(r.out, HasSubstr("DRAM read, 1 thread: "));
  EXPECT_THAT(r.out, HasSubstr("DRAM read, 2 threads: "));
  EXPECT_THAT(r.out, HasSubstr("roofline floor, q8_0: 0.00 MB of weights"));
  EXPECT_THAT(r.out, HasSubstr("roofline floor, q4_k: 0.00 MB of weights"));
  int reference = 0, onednn = 0;
  for (const std::string &line : lines(r.out)) {
    reference += line.starts_with("q8_0      reference") ||
                 line.starts_with("q4_k      reference");
    onednn += line.starts_with("u8s8s32   onednn") ||
              line.starts_with("f32       onednn");
  }
  EXPECT_EQ(reference, 8);
  EXPECT_EQ(onednn, 8);
}

TEST(KfBenchOutput, OneDnnLimitedInAChildBesideTheBest) {
  std::vector<std::string> args = kTiny;
  args.back() = "avx2";
  args.push_back("--json");
  testing::Result r = runWith(args);
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> kernels;
  for (const std::string &line : lines(r.out)) {
    std::optional<Object> o = Parser(line).object();
    ASSERT_TRUE(o) << line;
    kernels.push_back(std::get<std::string>(o->at("kernel")));
    if (kernels.back() != "onednn@avx2")
      continue;
    // Timed in the child, limited there and nowhere else; its ratios are
    // to the best oneDNN's.
    EXPECT_EQ(std::get<std::string>(o->at("onednn_isa")), "avx2");
    EXPECT_EQ(std::get<double>(o->at("rounds")), 3);
    EXPECT_GT(std::get<double>(o->at("time_s")), 0);
    EXPECT_GT(std::get<double>(o->at("vs_onednn_int8")), 0);
    EXPECT_TRUE(o->contains("implementation"));
  }
  // After the best oneDNN's 8 rows, before the reference's 8.
  ASSERT_EQ(kernels.size(), 24u) << r.out;
  for (size_t i = 0; i < kernels.size(); ++i)
    EXPECT_EQ(kernels[i], i < 8    ? "onednn"
                          : i < 16 ? "onednn@avx2"
                                   : "reference")
        << i;
}

// The table names the limited oneDNN, its column as wide as its name. Its own
// test, as a process runs the child only before its first oneDNN call.
TEST(KfBenchOutput, TableNamesTheLimitedOneDnn) {
  std::vector<std::string> args = kTiny;
  args.back() = "avx2";
  testing::Result r = runWith(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("oneDNN limited to avx2 (--onednn-also)"));
  EXPECT_THAT(r.out, HasSubstr("\nu8s8s32   onednn@avx2     1   1 "));

  // In a process that has run oneDNN, a child would inherit its limit.
  r = runWith(args);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "kf-bench: --onednn-also needs a process that has not run "
                   "oneDNN yet\n");
}

} // namespace
} // namespace kf::bench
