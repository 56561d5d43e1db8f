// The compiled kf.window_indices, kf.visible_entries and kf.indexer_topk
// against the interpreter's (the golden's windowPositions with the
// handler's ring slots or fresh rows, visibleCompressed, indexerSelect),
// run as a plan step by the runtime's executor on 1 and 2 threads and
// called directly on ranges of 3 tokens, the last first (so that a write
// past a range's rows would stay), per x86 ISA level, every result row
// filled with a sentinel first (an index left unwritten fails).
//
// window_indices: the tiny model's window 16 and the full model's 128, no
// ring, a ring of the window's slots and a ring that also holds a prefill
// chunk (window + 31 slots), and windows of 1, 5, 17 and 40 (vectors and a
// tail); prefills of consecutive positions from 0 (the window's start before
// position 0: -1s) and a later chunk, ring decodes at positions 0, window - 2
// .. window + 1, 2 · window - 1, a large one and 2^31 - 2, and a ring run of
// consecutive positions across a wrap of the ring. A fresh bank whose call
// starts past 0 (which the interpreter refuses once the window reaches before
// the call) gives -1 for the rows it does not hold (AttentionIndexKernels.h).
//
// visible_entries: the tiny model's capacity 32 at ratio 128 and the full
// model's 8192, and E = 1, 17, 37 at ratios 1..4 (tails); positions 0,
// every ratio boundary around a multiple of 16 entries, E · ratio - 1 (all
// visible) and random; positions past the capacity give 0 .. E - 1.
//
// indexer_topk: the tiny model's E = 1024, k = 8, ratio 4, E = 4096 with the
// full model's k = 512, and E = 1 (k = 1), E = 5 < k = 8, E = k = 37, E =
// 300 with k = 7 and 16, tokens seeing 0, 1, K - 1, K, K + 1, K + 15, K +
// 16, K + 17, E - 1, E and random counts of entries; and the full model's E
// = 262144, k = 512, ratio 4, tokens seeing all of them (Gaussian, few
// values, ascending), all but one, 513 and 100000. The scores: Gaussian, bf16
// values of a few magnitudes (ties everywhere, ties with the threshold),
// ascending (every entry enters: the worst case) and descending, all equal,
// -inf and +inf among them, -0 against +0, and NaNs past the visible ones
// (which the kernel never reads). A NaN among the visible scores, which the
// interpreter refuses, ranks as -inf: checked against the golden on the
// row with -inf in its place.
//
// Tolerance: none. The kernels compute indices with integer arithmetic and
// float comparisons only, so every index is compared exactly.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/AttentionIndexKernels.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/indexer.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(WindowIndicesKernelOnIsa);
KF_STEP_KERNEL_SUITE(VisibleEntriesKernelOnIsa);
KF_STEP_KERNEL_SUITE(IndexerTopKKernelOnIsa);

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t kSentinel = -7;

template <typename T>
StepOperand operandOf(std::vector<T> &values, int64_t perToken) {
  return {std::span(reinterpret_cast<uint8_t *>(values.data()),
                    values.size() * sizeof(T)),
          static_cast<int64_t>(sizeof(T)) * perToken};
}

// Runs `kernel` (one item per token) on `inputs` and a result of `columns`
// i32 per token: as a plan step on 1 and 2 threads, and called directly on
// ranges of 3 tokens; each time every index must equal `want`'s.
void expectIndices(kf_step_fn kernel, std::vector<StepOperand> inputs,
                   std::span<const int32_t> want, int64_t columns,
                   std::span<const int64_t> positions) {
  const int64_t tokens = static_cast<int64_t>(want.size()) / columns;
  for (int threads : {0, 1, 2}) {
    SCOPED_TRACE(threads == 0 ? std::string("direct calls of 3 tokens")
                              : std::to_string(threads) + " threads");
    std::vector<int32_t> got(want.size(), kSentinel);
    std::vector<StepOperand> operands = inputs;
    operands.push_back(operandOf(got, columns));
    if (threads == 0) {
      std::vector<void *> addresses;
      for (const StepOperand &operand : operands)
        addresses.push_back(operand.bytes.data());
      // The last range first: a row written past its end would be
      // overwritten by nothing.
      for (int64_t begin = (tokens - 1) / 3 * 3; begin >= 0; begin -= 3)
        kernel(addresses.data(), tokens, begin, std::min(begin + 3, tokens));
    } else {
      ASSERT_EQ(runRowStep(kernel, tokens, 1, operands, threads),
                absl::OkStatus());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      const int64_t t = static_cast<int64_t>(i) / columns;
      ASSERT_EQ(got[i], want[i])
          << "token " << t << " (position " << positions[t] << "), column "
          << static_cast<int64_t>(i) % columns;
    }
  }
}

StepOperand positionsOperand(std::vector<int64_t> &positions) {
  return operandOf(positions, 1);
}

//===----------------------------------------------------------------------===//
// kf.window_indices
//===----------------------------------------------------------------------===//

// The interpreter's execute(WindowIndicesOp); where it refuses a fresh
// bank's row before the call's first position, -1 (the kernel's contract).
std::vector<int32_t> expectedWindow(const WindowIndicesKernelSpec &spec,
                                    std::span<const int64_t> positions) {
  const int64_t window = spec.window;
  std::vector<int32_t> out(positions.size() * window);
  for (size_t t = 0; t < positions.size(); ++t) {
    std::span<int32_t> row(out.data() + t * window, window);
    reference::windowPositions(positions[t], row);
    for (int32_t &q : row) {
      if (q < 0)
        continue;
      if (spec.ring)
        q %= static_cast<int32_t>(spec.ring);
      else
        q = q < positions[0] ? -1 : q - static_cast<int32_t>(positions[0]);
    }
  }
  return out;
}

std::vector<int64_t> consecutive(int64_t first, int64_t count) {
  std::vector<int64_t> positions(count);
  std::iota(positions.begin(), positions.end(), first);
  return positions;
}

void checkWindow(const WindowIndicesKernelSpec &spec, kf_step_fn kernel) {
  const int64_t w = spec.window;
  std::vector<std::vector<int64_t>> calls;
  // A prefill from position 0, past the window's length.
  calls.push_back(consecutive(0, std::min<int64_t>(2 * w + 3, 300)));
  // A later chunk: without a ring, its first rows see before the call.
  calls.push_back(consecutive(3 * w + 1, 7));
  if (spec.ring) {
    for (int64_t p : {int64_t{0}, w - 2, w - 1, w, w + 1, 2 * w - 1,
                      int64_t{1000003}, int64_t{2147483646}})
      if (p >= 0)
        calls.push_back({p});
    // Consecutive decodes across a wrap of the ring.
    calls.push_back(consecutive(5 * spec.ring - 3, 9));
  }
  for (std::vector<int64_t> &positions : calls) {
    SCOPED_TRACE(testing::Message()
                 << positions.size() << " tokens from position "
                 << positions[0]);
    const std::vector<int32_t> want = expectedWindow(spec, positions);
    expectIndices(kernel, {positionsOperand(positions)}, want, w, positions);
    if (testing::Test::HasFatalFailure())
      return;
  }
}

TEST_P(WindowIndicesKernelOnIsa, EqualsInterpreter) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  std::vector<WindowIndicesKernelSpec> specs;
  for (int64_t window : {16, 128, 1, 5, 17, 40})
    for (int64_t ring : {int64_t{0}, window, window + 31})
      specs.push_back({window, ring});
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildWindowIndicesKernel,
                    checkWindow);
}

TEST(WindowIndicesKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyWindowIndicesKernel({0, 0})),
            "window_indices kernel [window = 0]: expected a window in [1, "
            "2147483647]");
  EXPECT_EQ(llvm::toString(verifyWindowIndicesKernel(
                {int64_t{1} << 31, int64_t{1} << 31})),
            "window_indices kernel [window = 2147483648, ring = 2147483648]: "
            "expected a window in [1, 2147483647]");
  EXPECT_EQ(llvm::toString(verifyWindowIndicesKernel({128, 64})),
            "window_indices kernel [window = 128, ring = 64]: expected a ring "
            "of the window's 128 slots to 2147483647");
  EXPECT_FALSE(static_cast<bool>(verifyWindowIndicesKernel({128, 128})));
  EXPECT_FALSE(static_cast<bool>(verifyWindowIndicesKernel({128, 639})));
  EXPECT_FALSE(static_cast<bool>(verifyWindowIndicesKernel({1, 0})));
}

TEST(WindowIndicesKernel, NamesEachVariantApart) {
  EXPECT_EQ((WindowIndicesKernelSpec{128, 0}.getSymbolName()),
            "kf_window_indices_w128");
  EXPECT_EQ((WindowIndicesKernelSpec{128, 639}.getSymbolName()),
            "kf_window_indices_w128_r639");
  EXPECT_EQ((WindowIndicesKernelSpec{128, 639}.describe()),
            "window_indices kernel [window = 128, ring = 639]");
  EXPECT_NE((WindowIndicesKernelSpec{16, 0}.getSymbolName()),
            (WindowIndicesKernelSpec{128, 0}.getSymbolName()));
  EXPECT_NE((WindowIndicesKernelSpec{128, 128}.getSymbolName()),
            (WindowIndicesKernelSpec{128, 639}.getSymbolName()));
}

//===----------------------------------------------------------------------===//
// kf.visible_entries
//===----------------------------------------------------------------------===//

// The interpreter's execute(VisibleEntriesOp); a query seeing more than E
// (which it refuses) sees all E.
std::vector<int32_t> expectedVisible(const VisibleEntriesKernelSpec &spec,
                                     std::span<const int64_t> positions) {
  const int64_t e = spec.entries;
  std::vector<int32_t> out(positions.size() * e);
  for (size_t t = 0; t < positions.size(); ++t) {
    const int64_t visible =
        std::min(e, reference::visibleCompressed(positions[t],
                                                 static_cast<int>(spec.ratio)));
    for (int64_t c = 0; c < e; ++c)
      out[t * e + c] = c < visible ? static_cast<int32_t>(c) : -1;
  }
  return out;
}

// Positions whose visible counts are 0, 1, around multiples of 16 and
// ratio boundaries, E (the last position seeing at most E), random.
std::vector<int64_t> visiblePositions(int64_t entries, int64_t ratio,
                                      std::mt19937 &rng) {
  std::vector<int64_t> positions = {0, ratio - 1, ratio};
  if (ratio >= 2)
    positions.push_back(ratio - 2);
  for (int64_t visible :
       {int64_t{15}, int64_t{16}, int64_t{17}, entries - 1, entries})
    if (visible >= 1 && visible <= entries)
      for (int64_t delta : {-1, 0, 1}) {
        int64_t p = visible * ratio - 1 + delta;
        if (p >= 0 && (p + 1) / ratio <= entries)
          positions.push_back(p);
      }
  std::uniform_int_distribution<int64_t> any(0, entries * ratio - 1);
  for (int i = 0; i < 5; ++i)
    positions.push_back(any(rng));
  return positions;
}

void checkVisible(const VisibleEntriesKernelSpec &spec, kf_step_fn kernel) {
  std::mt19937 rng(static_cast<unsigned>(spec.entries * 31 + spec.ratio));
  std::vector<int64_t> positions =
      visiblePositions(spec.entries, spec.ratio, rng);
  // Past the capacity: every entry.
  positions.push_back(spec.entries * spec.ratio + 5 * spec.ratio);
  positions.push_back(2147483646);
  // The entries, which the kernel does not read: NaNs, one per entry.
  const std::vector<float> entries(spec.entries, kNaN);
  const std::vector<int32_t> want = expectedVisible(spec, positions);
  expectIndices(kernel, {positionsOperand(positions), weightOperand(entries)},
                want, spec.entries, positions);
}

TEST_P(VisibleEntriesKernelOnIsa, EqualsInterpreter) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<VisibleEntriesKernelSpec> specs = {
      {32, 128}, {8192, 128}, {1, 1}, {17, 1}, {37, 3}, {16, 2}, {1024, 4}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildVisibleEntriesKernel,
                    checkVisible);
}

TEST(VisibleEntriesKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyVisibleEntriesKernel({0, 128})),
            "visible_entries kernel [E = 0, ratio = 128]: expected E in [1, "
            "2147483647]");
  EXPECT_EQ(llvm::toString(verifyVisibleEntriesKernel({32, 0})),
            "visible_entries kernel [E = 32, ratio = 0]: expected a ratio of "
            "at least 1");
  EXPECT_FALSE(static_cast<bool>(verifyVisibleEntriesKernel({8192, 128})));
}

TEST(VisibleEntriesKernel, NamesEachVariantApart) {
  EXPECT_EQ((VisibleEntriesKernelSpec{8192, 128}.getSymbolName()),
            "kf_visible_entries_e8192_r128");
  EXPECT_EQ((VisibleEntriesKernelSpec{8192, 128}.describe()),
            "visible_entries kernel [E = 8192, ratio = 128]");
  EXPECT_NE((VisibleEntriesKernelSpec{8192, 4}.getSymbolName()),
            (VisibleEntriesKernelSpec{8192, 128}.getSymbolName()));
}

//===----------------------------------------------------------------------===//
// kf.indexer_topk
//===----------------------------------------------------------------------===//

// Token t's visible scores (the first `visible` of `row`), of the kind t
// names, and NaNs past them.
void fillScores(int64_t t, int64_t visible, std::mt19937 &rng,
                std::span<float> row) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = static_cast<int64_t>(row.size());
  for (int64_t c = 0; c < n; ++c) {
    float &v = row[c];
    switch (t % 9) {
    case 0: // Gaussian
    case 1:
      v = normal(rng);
      break;
    case 2: // few values: ties everywhere
      v = reference::roundBf16(static_cast<float>(rng() % 5) * 0.25f);
      break;
    case 3: // ascending: every entry enters
      v = static_cast<float>(c);
      break;
    case 4: // descending
      v = -static_cast<float>(c);
      break;
    case 5: // all equal: 0, 1, ...
      v = 1.5f;
      break;
    case 6: // -inf and +inf among Gaussian values
      v = rng() % 4 == 0 ? -kInf : (rng() % 16 == 0 ? kInf : normal(rng));
      break;
    case 7: // -0 and +0 (equal) among negative values
      v = rng() % 3 == 0 ? ((rng() & 1) ? 0.0f : -0.0f) : -1.0f - normal(rng);
      break;
    default: // bf16 Gaussian: ties at the threshold
      v = reference::roundBf16(normal(rng));
      break;
    }
  }
  for (int64_t c = visible; c < n; ++c)
    row[c] = kNaN;
}

// Positions with visible counts 0, 1, around K and K + 16, E, random.
std::vector<int64_t> topKPositions(const IndexerTopKKernelSpec &spec,
                                   std::mt19937 &rng) {
  const int64_t e = spec.entries, r = spec.ratio, picks = spec.getPicks();
  std::vector<int64_t> positions = {0, r - 1};
  if (r >= 2)
    positions.push_back(r - 2);
  for (int64_t visible : {picks - 1, picks, picks + 1, picks + 15, picks + 16,
                          picks + 17, e - 1, e})
    if (visible >= 1 && visible <= e)
      positions.push_back(visible * r - 1 + (visible % 2 ? r - 1 : 0));
  std::uniform_int_distribution<int64_t> any(0, e * r - 1);
  while (positions.size() < 18)
    positions.push_back(any(rng));
  return positions;
}

// The interpreter's execute(IndexerTopKOp) on one row, a NaN as -inf.
void expectedTopK(std::span<const float> row, int64_t visible,
                  std::span<int32_t> out) {
  std::vector<float> ranked(row.begin(), row.end());
  for (int64_t c = 0; c < visible; ++c)
    if (std::isnan(ranked[c]))
      ranked[c] = -kInf;
  reference::indexerSelect(ranked, static_cast<size_t>(visible), out);
}

void checkTopK(const IndexerTopKKernelSpec &spec,
               std::vector<int64_t> positions, kf_step_fn kernel,
               bool withNaNs) {
  const int64_t e = spec.entries, picks = spec.getPicks();
  const int64_t tokens = static_cast<int64_t>(positions.size());
  std::mt19937 rng(static_cast<unsigned>(e * 7 + spec.k));
  std::vector<float> scores(tokens * e);
  std::vector<int32_t> want(tokens * picks);
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t visible =
        std::min(e, reference::visibleCompressed(positions[t],
                                                 static_cast<int>(spec.ratio)));
    std::span<float> row(scores.data() + t * e, e);
    fillScores(t, visible, rng, row);
    if (withNaNs)
      for (int64_t c = 0; c < visible; c += 3)
        row[c] = kNaN;
    expectedTopK(row, visible, std::span(want.data() + t * picks, picks));
  }
  expectIndices(kernel, {operandOf(scores, e), positionsOperand(positions)},
                want, picks, positions);
}

TEST_P(IndexerTopKKernelOnIsa, EqualsGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<IndexerTopKKernelSpec> specs = {
      {1024, 8, 4}, {1, 1, 1},    {5, 8, 1},     {37, 37, 2},
      {300, 7, 3},  {300, 16, 1}, {4096, 512, 4}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildIndexerTopKKernel,
      [](const IndexerTopKKernelSpec &spec, kf_step_fn kernel) {
        std::mt19937 rng(static_cast<unsigned>(spec.entries + spec.k));
        checkTopK(spec, topKPositions(spec, rng), kernel, /*withNaNs=*/false);
      });
}

// The full model's row: a few tokens, seeing all 262144 entries or fewer.
TEST_P(IndexerTopKKernelOnIsa, EqualsGoldenOnTheFullModel) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const IndexerTopKKernelSpec spec{262144, 512, 4};
  forEachStepKernel(isaTestTarget(GetParam()), {spec}, buildIndexerTopKKernel,
                    [](const IndexerTopKKernelSpec &spec, kf_step_fn kernel) {
                      // Gaussian seeing every entry and all but the last, few
                      // values and ascending (every entry enters) seeing every
                      // entry, descending seeing 513, all equal seeing 100000.
                      checkTopK(spec,
                                {4 * 262144 - 1, 4 * 262144 - 2, 4 * 262144 - 1,
                                 4 * 262144 - 1, 4 * 513 + 2, 4 * 100000 - 1},
                                kernel, /*withNaNs=*/false);
                    });
}

// A NaN score, which the interpreter refuses, ranks as -inf.
TEST_P(IndexerTopKKernelOnIsa, RanksNaNAsNegativeInfinity) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<IndexerTopKKernelSpec> specs = {{1024, 8, 4}, {300, 16, 1}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildIndexerTopKKernel,
                    [](const IndexerTopKKernelSpec &spec, kf_step_fn kernel) {
                      std::mt19937 rng(static_cast<unsigned>(spec.entries));
                      checkTopK(spec, topKPositions(spec, rng), kernel,
                                /*withNaNs=*/true);
                    });
}

TEST(IndexerTopKKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyIndexerTopKKernel({0, 8, 4})),
            "indexer_topk kernel [E = 0, k = 8, ratio = 4]: expected E in "
            "[1, 2147483647]");
  EXPECT_EQ(llvm::toString(verifyIndexerTopKKernel({1024, 0, 4})),
            "indexer_topk kernel [E = 1024, k = 0, ratio = 4]: expected k of "
            "at least 1");
  EXPECT_EQ(llvm::toString(verifyIndexerTopKKernel({1024, 8, 0})),
            "indexer_topk kernel [E = 1024, k = 8, ratio = 0]: expected a "
            "ratio of at least 1");
  EXPECT_FALSE(static_cast<bool>(verifyIndexerTopKKernel({262144, 512, 4})));
  EXPECT_FALSE(static_cast<bool>(verifyIndexerTopKKernel({5, 8, 1})));
}

TEST(IndexerTopKKernel, NamesEachVariantApart) {
  const IndexerTopKKernelSpec spec{262144, 512, 4};
  EXPECT_EQ(spec.getSymbolName(), "kf_indexer_topk_e262144_k512_r4");
  EXPECT_EQ(spec.describe(),
            "indexer_topk kernel [E = 262144, k = 512, ratio = 4]");
  EXPECT_EQ(spec.getPicks(), 512);
  EXPECT_EQ((IndexerTopKKernelSpec{5, 8, 1}.getPicks()), 5);
  EXPECT_NE(spec.getSymbolName(),
            (IndexerTopKKernelSpec{262144, 8, 4}.getSymbolName()));
  EXPECT_NE(spec.getSymbolName(),
            (IndexerTopKKernelSpec{262144, 512, 128}.getSymbolName()));
}

// The kernels call nothing (the shifts of the top-k row are no memmove),
// for the portable level and AVX-512's.
TEST(AttentionIndexKernels, CallNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"},
      {"kf_window_indices_w128", "kf_window_indices_w17_r48",
       "kf_visible_entries_e8192_r128", "kf_indexer_topk_e262144_k512_r4"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(static_cast<bool>(
            buildWindowIndicesKernel(module, {128, 0}, target)));
        ASSERT_TRUE(static_cast<bool>(
            buildWindowIndicesKernel(module, {17, 48}, target)));
        ASSERT_TRUE(static_cast<bool>(
            buildVisibleEntriesKernel(module, {8192, 128}, target)));
        ASSERT_TRUE(static_cast<bool>(
            buildIndexerTopKKernel(module, {262144, 512, 4}, target)));
      });
}

} // namespace
} // namespace kf::codegen
