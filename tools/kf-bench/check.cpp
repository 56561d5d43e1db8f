#include "check.h"

#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "kf/runtime/thread_pool.h"

namespace kf::bench {

double reorderedTolerance(int64_t k, double magnitude) {
  const double nu = static_cast<double>(k + 2) * std::ldexp(1.0, -24);
  return 2 * nu / (1 - nu) * magnitude;
}

absl::Status checkOutput(const MatmulArgs &args, Agreement agreement,
                         int threads, int64_t rowGroup, uint64_t seed) {
  const Format wf = args.format, af = formatInfo(wf).dotFormat;
  std::optional<uint64_t> wBytes = rowBytes(wf, args.k),
                          aBytes = rowBytes(af, args.k);
  if (!wBytes || !aBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("K = ", args.k, " is not a whole number of ",
                     toAbsl(formatInfo(wf).name), " blocks"));
  std::mt19937_64 rng(seed);
  std::set<int64_t> rows = {0, args.n - 1};
  for (int t = 0; t < threads; ++t) {
    RowBlock b = rowBlock(args.n, t, threads, rowGroup);
    if (b.begin < b.end)
      rows.insert({b.begin, b.end - 1});
  }
  std::uniform_int_distribution<int64_t> anyRow(0, args.n - 1),
      anyColumn(0, args.m - 1);
  for (int r = 0; r < 32; ++r)
    rows.insert(anyRow(rng));

  std::vector<float> wDecoded, aDecoded;
  if (agreement == Agreement::Reordered) {
    wDecoded.resize(args.k);
    aDecoded.resize(args.k);
  }
  for (int64_t j : rows) {
    std::span<const uint8_t> w(args.weights + j * *wBytes, *wBytes);
    std::set<int64_t> columns;
    if (args.m <= 16) {
      for (int64_t i = 0; i < args.m; ++i)
        columns.insert(i);
    } else {
      columns = {0, args.m - 1};
      for (int c = 0; c < 8; ++c)
        columns.insert(anyColumn(rng));
    }
    if (agreement == Agreement::Reordered)
      KF_RETURN_IF_ERROR(dequantize(wf, w, wDecoded));
    for (int64_t i : columns) {
      std::span<const uint8_t> a(args.activations + i * *aBytes, *aBytes);
      KF_ASSIGN_OR_RETURN(float want, dot(wf, w, a));
      float got = args.out[i * args.n + j];
      std::string where = absl::StrCat("kernel output (activation row ", i,
                                       ", weight row ", j, ") is ");
      if (agreement == Agreement::Exact) {
        if (std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(want))
          return absl::InternalError(absl::StrFormat(
              "%s%.9g, the reference dot product %.9g", where, got, want));
        continue;
      }
      KF_RETURN_IF_ERROR(dequantize(af, a, aDecoded));
      double magnitude = 0;
      for (int64_t x = 0; x < args.k; ++x)
        magnitude += std::fabs(double(wDecoded[x]) * aDecoded[x]);
      double bound = reorderedTolerance(args.k, magnitude);
      if (!(std::fabs(double(got) - want) <= bound))
        return absl::InternalError(absl::StrFormat(
            "%s%.9g, the reference dot product %.9g: off by more than the "
            "reordering bound %.3g",
            where, got, want, bound));
    }
  }
  return absl::OkStatus();
}

} // namespace kf::bench
