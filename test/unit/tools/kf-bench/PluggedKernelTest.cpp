// Kernels that are not the reference, plugged into a whole run: packed
// weight and activation layouts, row groups that the thread split respects
// (N not a multiple of them), and the errors a wrong kernel gets.
#include <algorithm>
#include <sstream>

#include "kf/runtime/quant.h"
#include "matmul.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;

// Reads weights and activations stored in reverse row order, in groups of
// four weight rows: a stand-in for a compiled kernel's interleaved layouts.
MatmulKernel reversedKernel() {
  MatmulKernel kernel;
  kernel.name = "reversed";
  kernel.supports = [](Format f) { return f == Format::Q8_0; };
  kernel.rowGroup = 4;
  auto reverse = [](std::span<const uint8_t> rows, int64_t count) {
    const size_t bytes = rows.size() / count;
    std::vector<uint8_t> out(rows.size());
    for (int64_t r = 0; r < count; ++r)
      std::copy_n(rows.data() + r * bytes, bytes,
                  out.data() + (count - 1 - r) * bytes);
    return out;
  };
  kernel.packWeights = [reverse](Format, int64_t n, int64_t,
                                 std::span<const uint8_t> rows)
      -> absl::StatusOr<std::vector<uint8_t>> { return reverse(rows, n); };
  kernel.packActivations =
      [reverse](
          Format f, int64_t m, int64_t k,
          std::span<const float> rows) -> absl::StatusOr<std::vector<uint8_t>> {
    const uint64_t bytes = *rowBytes(formatInfo(f).dotFormat, k);
    std::vector<uint8_t> q(bytes * m);
    for (int64_t i = 0; i < m; ++i) {
      absl::Status s =
          quantizeActivation(formatInfo(f).dotFormat, rows.subspan(i * k, k),
                             {q.data() + i * bytes, bytes});
      if (!s.ok())
        return s;
    }
    return reverse(q, m);
  };
  kernel.run = [](const MatmulArgs &a, int64_t begin,
                  int64_t end) -> absl::Status {
    if (begin % 4 != 0 || (end % 4 != 0 && end != a.n))
      return absl::InternalError(
          absl::StrCat("rows [", begin, ", ", end, ") split a group"));
    const uint64_t wb = *rowBytes(a.format, a.k),
                   ab = *rowBytes(formatInfo(a.format).dotFormat, a.k);
    for (int64_t j = begin; j < end; ++j)
      for (int64_t i = 0; i < a.m; ++i) {
        absl::StatusOr<float> d =
            dot(a.format, {a.weights + (a.n - 1 - j) * wb, wb},
                {a.activations + (a.m - 1 - i) * ab, ab});
        if (!d.ok())
          return d.status();
        a.out[i * a.n + j] = *d;
      }
    return absl::OkStatus();
  };
  return kernel;
}

MatmulOptions tiny() {
  MatmulOptions o;
  o.formats = {Format::Q8_0, Format::Q4_0};
  o.m = {1, 3};
  o.k = 64;
  o.n = 10; // two whole groups of 4 and a group of 2
  o.threads = {1, 3};
  o.reps.reps = 1;
  o.json = true;
  o.setBytes = 1 << 20;
  // oneDNN once per case, as on a CPU without AMX: where it has AMX, a
  // second oneDNN limited to VNNI would add its rows, and only the first
  // run in a process may fork the child that times it.
  o.onednnAlso = "none";
  return o;
}

int count(const std::string &text, const std::string &what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(PluggedKernel, PackedLayoutsAndRowGroups) {
  std::ostringstream out;
  const MatmulKernel kernels[] = {referenceKernel(), reversedKernel()};
  absl::Status s = runMatmul(tiny(), kernels, out);
  ASSERT_TRUE(s.ok()) << s;
  // oneDNN's 8, the reference on 2 formats x 2 M x 2 thread counts, and
  // the reversed kernel on Q8_0 alone.
  EXPECT_EQ(count(out.str(), "\n"), 8 + 8 + 4);
  EXPECT_EQ(count(out.str(), "\"kernel\":\"reversed\""), 4);
  // What the kernel reads: its packing, the runtime's size here.
  EXPECT_EQ(count(out.str(), "\"kernel\":\"reversed\",\"format\":\"q8_0\""), 4);
  EXPECT_EQ(count(out.str(), "\"weight_bytes\":680,"), 4 + 4);
}

TEST(PluggedKernel, WrongOutputsStopTheRun) {
  MatmulKernel zero = reversedKernel();
  zero.name = "zero";
  zero.run = [](const MatmulArgs &a, int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j)
      for (int64_t i = 0; i < a.m; ++i)
        a.out[i * a.n + j] = 0;
    return absl::OkStatus();
  };
  std::ostringstream out;
  absl::Status s = runMatmul(tiny(), {&zero, 1}, out);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("zero on q8_0, M = 1: kernel output (activation row "
                        "0, weight row 0) is 0, the reference dot product"));
}

TEST(PluggedKernel, ErrorsNameTheKernel) {
  MatmulKernel split = reversedKernel();
  split.rowGroup = 1; // the thread split no longer respects its groups
  MatmulOptions o = tiny();
  o.threads = {3};
  std::ostringstream out;
  EXPECT_THAT(std::string(runMatmul(o, {&split, 1}, out).message()),
              HasSubstr("reversed on q8_0, M = 1: rows [0, 3) split a group"));

  MatmulKernel unpackable = reversedKernel();
  unpackable.packWeights =
      [](Format, int64_t, int64_t,
         std::span<const uint8_t>) -> absl::StatusOr<std::vector<uint8_t>> {
    return absl::InvalidArgumentError("no layout for this N");
  };
  EXPECT_EQ(std::string(runMatmul(tiny(), {&unpackable, 1}, out).message()),
            "reversed on q8_0: no layout for this N");
}

} // namespace
} // namespace kf::bench
