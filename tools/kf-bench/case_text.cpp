#include "case_text.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kf/runtime/absl_compat.h"

namespace kf::bench {

// One line per case, its fields separated by tabs:
//   case <kernel> <format> <implementation> m k n threads cold weight_bytes
//        floor_bytes copies other_cpus
// then one line per round: round <seconds of each call>. Doubles are written
// with 17 significant digits, which read back to the same bits.
namespace {

constexpr size_t kCaseFields = 13;

bool parse(absl::string_view s, int64_t &v) { return absl::SimpleAtoi(s, &v); }
bool parse(absl::string_view s, uint64_t &v) { return absl::SimpleAtoi(s, &v); }
bool parse(absl::string_view s, int &v) { return absl::SimpleAtoi(s, &v); }
bool parse(absl::string_view s, double &v) { return absl::SimpleAtod(s, &v); }

// Names go between tabs and lines: keep both out of them.
std::string clean(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    if (c == '\t' || c == '\n')
      c = ' ';
  return out;
}

} // namespace

std::string encodeCases(std::span<const CaseResult> cases) {
  std::string text;
  for (const CaseResult &r : cases) {
    absl::StrAppend(&text,
                    absl::StrJoin({std::string("case"), clean(r.kernel),
                                   clean(r.format), clean(r.implementation)},
                                  "\t"));
    absl::StrAppendFormat(&text, "\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.17g\n",
                          r.m, r.k, r.n, r.threads, r.cold ? 1 : 0,
                          r.weightBytes, r.floorBytes, r.copies, r.otherCpus);
    for (const Timing &t : r.rounds) {
      text += "round";
      for (double s : t.seconds)
        absl::StrAppendFormat(&text, "\t%.17g", s);
      text += "\n";
    }
  }
  return text;
}

absl::StatusOr<std::vector<CaseResult>> decodeCases(std::string_view text) {
  std::vector<CaseResult> cases;
  int lineNumber = 0;
  for (absl::string_view line :
       absl::StrSplit(toAbsl(text), '\n', absl::SkipEmpty())) {
    ++lineNumber;
    std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
    auto bad = [&](std::string_view what) {
      return absl::DataLossError(
          absl::StrCat("timed cases, line ", lineNumber, ": ", toAbsl(what)));
    };
    if (f[0] == "case") {
      if (f.size() != kCaseFields)
        return bad(absl::StrCat("expected ", kCaseFields, " fields, found ",
                                f.size()));
      CaseResult r;
      r.kernel = std::string(f[1]);
      r.format = std::string(f[2]);
      r.implementation = std::string(f[3]);
      int cold = 0;
      if (!parse(f[4], r.m) || !parse(f[5], r.k) || !parse(f[6], r.n) ||
          !parse(f[7], r.threads) || !parse(f[8], cold) ||
          !parse(f[9], r.weightBytes) || !parse(f[10], r.floorBytes) ||
          !parse(f[11], r.copies) || !parse(f[12], r.otherCpus))
        return bad("a number does not parse");
      r.cold = cold != 0;
      cases.push_back(std::move(r));
    } else if (f[0] == "round") {
      if (cases.empty())
        return bad("a round before any case");
      Timing t;
      for (size_t i = 1; i < f.size(); ++i)
        if (!parse(f[i], t.seconds.emplace_back()))
          return bad("a time does not parse");
      cases.back().rounds.push_back(std::move(t));
    } else {
      return bad(
          absl::StrCat("expected 'case' or 'round', found '", f[0], "'"));
    }
  }
  return cases;
}

} // namespace kf::bench
