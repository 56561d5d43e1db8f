// kf-bench matmul's options: defaults, every option, and a one-line error
// with exit code 1 for each kind of bad input.
#include <algorithm>
#include <thread>

#include "RunTool.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::runWith;
using ::testing::StartsWith;

std::optional<std::string> parse(std::vector<std::string> args,
                                 MatmulOptions &o) {
  return parseMatmul(args, o);
}

TEST(KfBenchCli, Defaults) {
  MatmulOptions o;
  ASSERT_EQ(parse({"--format", "q8_0"}, o), std::nullopt);
  EXPECT_THAT(o.formats, ElementsAre(Format::Q8_0));
  EXPECT_THAT(o.m, ElementsAre(1, 2, 3, 4, 8, 16, 64, 512));
  EXPECT_EQ(o.k, 4096);
  EXPECT_EQ(o.n, 2048);
  EXPECT_THAT(o.threads,
              ElementsAre(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_TRUE(o.cold);
  EXPECT_FALSE(o.json);
  EXPECT_FALSE(o.reps.reps);
  EXPECT_EQ(o.reps.minSeconds, 0.5);
  EXPECT_FALSE(o.setBytes);
  EXPECT_FALSE(o.onednnIsa);
  EXPECT_TRUE(o.kernels.empty());
}

TEST(KfBenchCli, EveryOption) {
  MatmulOptions o;
  ASSERT_EQ(parse({"--format=q8_0,q4_k",
                   "--m",
                   "1,3",
                   "--k",
                   "512",
                   "--n=64",
                   "--threads",
                   "2,1",
                   "--hot",
                   "--reps",
                   "7",
                   "--json",
                   "--cold-mib",
                   "8",
                   "--seed",
                   "9",
                   "--onednn-isa",
                   "avx512_core_vnni",
                   "--rounds",
                   "5",
                   "--onednn-also",
                   "none"},
                  o),
            std::nullopt);
  EXPECT_THAT(o.formats, ElementsAre(Format::Q8_0, Format::Q4_K));
  EXPECT_THAT(o.m, ElementsAre(1, 3));
  EXPECT_EQ(o.k, 512);
  EXPECT_EQ(o.n, 64);
  EXPECT_THAT(o.threads, ElementsAre(2, 1));
  EXPECT_FALSE(o.cold);
  EXPECT_EQ(o.reps.reps, 7);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.setBytes, uint64_t{8} << 20);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.onednnIsa, "avx512_core_vnni");
  EXPECT_EQ(o.rounds, 5);
  EXPECT_EQ(o.onednnAlso, "none");

  ASSERT_EQ(parse({"--format", "q8_0", "--kernels", "kf-avx2,reference"}, o),
            std::nullopt);
  EXPECT_THAT(o.kernels, ElementsAre("kf-avx2", "reference"));

  ASSERT_EQ(parse({"--format", "q4_0", "--cold", "--min-time", "0.25"}, o),
            std::nullopt);
  EXPECT_TRUE(o.cold);
  EXPECT_FALSE(o.reps.reps);
  EXPECT_EQ(o.reps.minSeconds, 0.25);
}

struct BadLine {
  std::vector<std::string> args;
  std::string message;
};

class KfBenchBadOptions : public ::testing::TestWithParam<BadLine> {};

TEST_P(KfBenchBadOptions, OneLineErrorExitOne) {
  std::vector<std::string> args = {"matmul"};
  args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
  testing::Result r = runWith(args);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("kf-bench: "));
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
}

INSTANTIATE_TEST_SUITE_P(
    All, KfBenchBadOptions,
    ::testing::Values(
        BadLine{{}, "matmul needs --format"},
        BadLine{{"--format", "q9_0"}, "unknown format 'q9_0'"},
        BadLine{{"--format", ""}, "--format is empty"},
        BadLine{{"--format", "q8_0,q8_0"}, "--format lists q8_0 twice"},
        BadLine{{"--format", "q8_k"}, "format q8_k is not a weight format"},
        BadLine{{"--format", "i32"}, "format i32 is not a weight format"},
        BadLine{{"--format", "q8_0", "--k", "48"},
                "K = 48 is not a multiple of q8_0's block of 32 elements"},
        BadLine{{"--format", "q8_0,q4_k", "--k", "4160"},
                "K = 4160 is not a multiple of q4_k's block of 256"},
        BadLine{{"--format", "q8_0", "--k", "0"}, "K = 0 is out of range"},
        BadLine{{"--format", "q8_0", "--n", "-5"}, "N = -5 is out of range"},
        BadLine{{"--format", "q8_0", "--k", "4k"},
                "--k is '4k', expected a whole number"},
        BadLine{{"--format", "q8_0", "--m", ""}, "--m is empty"},
        BadLine{{"--format", "q8_0", "--m", ",,"}, "--m is empty"},
        BadLine{{"--format", "q8_0", "--m", "1,x"},
                "--m has 'x', expected whole numbers separated by commas"},
        BadLine{{"--format", "q8_0", "--m", "1,1"}, "--m lists 1 twice"},
        BadLine{{"--format", "q8_0", "--m", "0"}, "M = 0 is out of range"},
        BadLine{{"--format", "q8_0", "--threads", "0"},
                "--threads 0 is out of range"},
        BadLine{{"--format", "q8_0", "--cold", "--hot"},
                "--cold and --hot exclude each other"},
        BadLine{{"--format", "q8_0", "--reps", "2", "--min-time", "1"},
                "--reps and --min-time exclude each other"},
        BadLine{{"--format", "q8_0", "--reps", "0"},
                "--reps 0 is out of range"},
        BadLine{{"--format", "q8_0", "--rounds", "0"},
                "--rounds 0 is out of range: expected 1 to 1000"},
        BadLine{{"--format", "q8_0", "--rounds", "three"},
                "--rounds is 'three', expected a whole number"},
        BadLine{{"--format", "q8_0", "--min-time", "-1"},
                "--min-time is out of range"},
        BadLine{{"--format", "q8_0", "--min-time", "soon"},
                "--min-time is 'soon', expected a number of seconds"},
        BadLine{{"--format", "q8_0", "--cold-mib", "0"},
                "--cold-mib 0 is out of range"},
        BadLine{{"--format", "q8_0", "--onednn-isa", "amx"},
                "unknown oneDNN ISA 'amx': expected all, sse41, avx, avx2, "
                "avx2_vnni, avx512_core, avx512_core_vnni, avx512_core_bf16, "
                "avx512_core_amx"},
        BadLine{{"--format", "q8_0", "--onednn-also", "vnni"},
                "unknown oneDNN ISA 'vnni': expected none, all, sse41, "},
        BadLine{{"--format", "q8_0", "--kernels", ","}, "--kernels is empty"},
        BadLine{{"--format", "q8_0", "--kernels", "kf-sse9"},
                "unknown kernel 'kf-sse9': expected reference"},
        BadLine{{"--format", "q8_0", "--json=yes"},
                "option '--json' takes no value"},
        BadLine{{"--format", "q8_0", "--k"}, "option '--k' needs a value"},
        BadLine{{"--format", "q8_0", "--fast"}, "unknown option '--fast'"},
        BadLine{{"--format", "q8_0", "extra"}, "unexpected argument 'extra'"}));

TEST(KfBenchCli, UnknownCommandAndHelp) {
  testing::Result r = runWith({"matrix"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "kf-bench: unknown command 'matrix' (kf-bench --help for "
                   "usage)\n");
  r = runWith({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: kf-bench matmul"));
  EXPECT_EQ(runWith({}).code, 1);
}

} // namespace
} // namespace kf::bench
