// Timed cases through text and back, bit for bit, and the text that does
// not parse named by its line.
#include "case_text.h"

#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;

CaseResult sample() {
  CaseResult r;
  r.kernel = "onednn@avx2";
  r.format = "u8s8s32";
  r.implementation = "brg:avx2\tx"; // a tab becomes a space
  r.m = 3;
  r.k = 4096;
  r.n = 2048;
  r.threads = 2;
  r.cold = true;
  r.weightBytes = r.floorBytes = 8388608;
  r.copies = 61;
  r.otherCpus = 0.1 + 0.2;
  r.rounds = {Timing{{1.0 / 3, 2e-5, 7.25e-6}}, Timing{{1e-300}}};
  return r;
}

TEST(CaseText, RoundTripsEveryMeasuredFigure) {
  CaseResult hot = sample();
  hot.kernel = "reference";
  hot.cold = false;
  hot.implementation.clear();
  std::vector<CaseResult> in = {sample(), hot};
  absl::StatusOr<std::vector<CaseResult>> out = decodeCases(encodeCases(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const CaseResult &a = in[i], &b = (*out)[i];
    EXPECT_EQ(b.kernel, a.kernel);
    EXPECT_EQ(b.format, a.format);
    EXPECT_EQ(b.m, a.m);
    EXPECT_EQ(b.k, a.k);
    EXPECT_EQ(b.n, a.n);
    EXPECT_EQ(b.threads, a.threads);
    EXPECT_EQ(b.cold, a.cold);
    EXPECT_EQ(b.weightBytes, a.weightBytes);
    EXPECT_EQ(b.floorBytes, a.floorBytes);
    EXPECT_EQ(b.copies, a.copies);
    EXPECT_EQ(b.otherCpus, a.otherCpus); // exactly: 17 digits
    ASSERT_EQ(b.rounds.size(), a.rounds.size());
    for (size_t j = 0; j < a.rounds.size(); ++j)
      EXPECT_EQ(b.rounds[j].seconds, a.rounds[j].seconds);
  }
  EXPECT_EQ((*out)[0].implementation, "brg:avx2 x");
  EXPECT_EQ((*out)[1].implementation, "");
}

TEST(CaseText, NamesTheLineThatDoesNotParse) {
  std::string text = encodeCases(std::vector<CaseResult>{sample()});
  for (auto [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"round\t1\n", "line 1: a round before any case"},
           {"case\tx\n", "line 1: expected 13 fields, found 2"},
           {text + "round\tsoon\n", "line 4: a time does not parse"},
           {text + "lap\t1\n", "line 4: expected 'case' or 'round'"},
       }) {
    absl::StatusOr<std::vector<CaseResult>> out = decodeCases(bad);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_THAT(std::string(out.status().message()), HasSubstr(message));
  }
}

} // namespace
} // namespace kf::bench
