// The compiled kf.indexer_scores against the interpreter's (w =
// bf16(weights · scale), then the golden's indexerScores at
// Precision::Model) on the entries each token sees, -inf past them, run as
// a plan step by the runtime's executor on 1 and 2 threads and called
// directly on ranges of 3 items (which start and end inside tokens), the
// last first (so that a score written past its block would stay), per x86
// ISA level, the result filled with a sentinel first.
//
// Shapes: the tiny model's H = 16, d = 128, E = 1024 (the capacity of a
// 4096-token context at ratio 4) with its default block of 64 and with one
// block per token; the full model's H = 64, d = 128 with E = 256 and with
// E = 16384 (tokens seeing at most 700 entries); and odd ones: H = 3, 5, 2,
// 6, 12 (head tiles of 1, 2 and 4; 8 for 16 and 64 heads with AVX-512), d =
// 16, 32, 48, blocks of 40, 26, 50 and 7 entries (groups of fewer than 16),
// ratios 1, 2, 3 and 128. Positions: tokens seeing 0, 1, 15, 16, 17
// entries, a block's entries and one more or fewer, E - 1 and E, and random
// ones. Keys past every token's visible ones are NaN (a cache's unwritten
// rows): a partly visible group computes them and must store -inf.
//
// Values: bf16 queries and weights (the model's), full-precision floats at
// several scales, weights of 0 and negative ones, and a crafted token: its
// head 0 meets entry 0's key [1, 1, 1, 0, ...] (and the same from d / 2)
// with q = [2^60, 1, -2^60, 0, ...] (and [2^60, -2^60, 1, 0, ...] from d /
// 2), whose dot is 1 summed in k order but 0 in reverse order or in two
// lanes of alternate k (2^60 + 1 is 2^60 in fp64), the other heads meeting
// none of that key; its heads 1 and 3 add opposite contributions of about
// 2^63 around a small one from head 2 (the sum over heads: 0 in head order,
// the small one in others); head 4's dots overflow fp32 in about half the
// entries (inf logits), head 5's are subnormal.
//
// Tolerance: none. Each lane runs the golden's IEEE operations in its order
// (a fused multiply-add where the target has one rounds as the golden's
// multiply and add: the product of two floats is exact in fp64), so scores
// are compared bit for bit; a NaN score only as a NaN (its payload and sign
// are the hardware's, which LLVM does not promise to keep).
#include "StepKernelTestUtil.h"

#include "kf/Codegen/IndexerScoresKernel.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/indexer.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(IndexerScoresKernelOnIsa);

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = -12345.0f;
constexpr float kTinyScale = 0.0220970865f; // 128^-1/2 · 16^-1/2
constexpr float kFullScale = 0.0110485433f; // 128^-1/2 · 64^-1/2

int64_t visibleOf(const IndexerScoresKernelSpec &spec, int64_t position) {
  return std::min(spec.entries, reference::visibleCompressed(
                                    position, static_cast<int>(spec.ratio)));
}

struct Inputs {
  std::vector<float> query, weights, keys;
  std::vector<int64_t> positions;
};

// Token t's query [H, d] and weights [H], of the kind t names.
void fillToken(int64_t t, const IndexerScoresKernelSpec &spec,
               std::mt19937 &rng, std::span<float> q, std::span<float> w) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto bf16 = [&]() { return reference::roundBf16(normal(rng)); };
  const int64_t h = spec.heads, d = spec.dim;
  switch (t % 4) {
  case 0: // bf16 values, as the model's
    for (float &v : q)
      v = bf16();
    for (float &v : w)
      v = bf16();
    return;
  case 1: // full-precision floats at several scales
    for (float &v : q)
      v = std::ldexp(normal(rng), static_cast<int>(rng() % 7) - 3);
    for (float &v : w)
      v = normal(rng);
    return;
  case 2: { // the crafted token
    for (float &v : q)
      v = bf16();
    for (float &v : w)
      v = bf16();
    auto headRow = [&](int64_t head) { return q.subspan(head * d, d); };
    // Head 0: [2^60, 1, -2^60, 0, ...] and, from d / 2, [2^60, -2^60, 1,
    // 0, ...] (entry 0's key is 1 there).
    std::span<float> first = headRow(0);
    std::fill(first.begin(), first.end(), 0.0f);
    first[0] = first[d / 2] = 0x1p60f;
    first[1] = first[d / 2 + 2] = 1.0f;
    first[2] = first[d / 2 + 1] = -0x1p60f;
    w[0] = 0.75f;
    if (h >= 4) {
      // Heads 1 and 3: one row of 2^60 · bf16 values, opposite weights;
      // head 2 small between them.
      for (float &v : headRow(1))
        v = std::ldexp(bf16(), 60);
      std::copy_n(headRow(1).begin(), d, headRow(3).begin());
      w[1] = 0.5f;
      w[3] = -0.5f;
      for (float &v : headRow(2))
        v = 0.25f * bf16();
    }
    if (h >= 5) // dots past FLT_MAX in about half the entries
      for (float &v : headRow(4))
        v = std::ldexp(bf16(), 124);
    if (h >= 6) // subnormal dots
      for (float &v : headRow(5))
        v = std::ldexp(bf16(), -133);
    // The other heads meet nothing of entry 0's key: its score is head 0's.
    for (int64_t head = 1; head < h; ++head)
      for (int64_t k :
           {int64_t{0}, int64_t{1}, int64_t{2}, d / 2, d / 2 + 1, d / 2 + 2})
        headRow(head)[k] = 0.0f;
    return;
  }
  default: // weights of 0 and negative ones
    for (float &v : q)
      v = bf16();
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = i % 4 == 0 ? 0.0f : -std::abs(bf16());
    return;
  }
}

Inputs inputsOf(const IndexerScoresKernelSpec &spec,
                std::vector<int64_t> positions) {
  std::mt19937 rng(static_cast<unsigned>(spec.heads * 1000 + spec.entries));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t tokens = static_cast<int64_t>(positions.size());
  const int64_t h = spec.heads, d = spec.dim;
  Inputs in{std::vector<float>(tokens * h * d), std::vector<float>(tokens * h),
            std::vector<float>(spec.entries * d), std::move(positions)};
  for (int64_t t = 0; t < tokens; ++t)
    fillToken(t, spec, rng, std::span(in.query).subspan(t * h * d, h * d),
              std::span(in.weights).subspan(t * h, h));
  int64_t seen = 0;
  for (int64_t p : in.positions)
    seen = std::max(seen, visibleOf(spec, p));
  for (int64_t c = 0; c < spec.entries; ++c)
    for (int64_t k = 0; k < d; ++k)
      in.keys[c * d + k] = c >= seen ? kNaN : reference::roundBf16(normal(rng));
  // Entry 0 meets the crafted heads' triples: 1 summed in k order, 0 in
  // reverse order or in two lanes of alternate k.
  std::fill_n(in.keys.begin(), d, 0.0f);
  std::fill_n(in.keys.begin(), 3, 1.0f);
  std::fill_n(in.keys.begin() + d / 2, 3, 1.0f);
  return in;
}

// The interpreter's execute(IndexerScoresOp) on the visible entries, -inf
// past them.
std::vector<float> expected(const IndexerScoresKernelSpec &spec,
                            const Inputs &in) {
  const int64_t h = spec.heads, d = spec.dim, e = spec.entries;
  const int64_t tokens = static_cast<int64_t>(in.positions.size());
  std::vector<float> out(tokens * e, -kInf);
  std::vector<float> w(h);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < h; ++i)
      w[i] = reference::roundBf16(in.weights[t * h + i] * spec.scale);
    const int64_t visible = visibleOf(spec, in.positions[t]);
    reference::indexerScores(std::span(in.query).subspan(t * h * d, h * d), w,
                             std::span(in.keys).subspan(0, visible * d),
                             static_cast<int>(h), static_cast<int>(d),
                             std::span(out).subspan(t * e, visible));
  }
  return out;
}

// Tokens seeing 0, 1, 15, 16, 17, a block and one more or fewer, E - 1, E
// entries (at the first or last position seeing so many), and random ones.
std::vector<int64_t> positionsOf(const IndexerScoresKernelSpec &spec) {
  const int64_t r = spec.ratio, e = spec.entries, block = spec.entryBlock;
  std::vector<int64_t> positions;
  if (r >= 2)
    positions.push_back(r - 2);
  for (int64_t visible : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17},
                          block - 1, block, block + 1, e - 1, e})
    if (visible >= 1 && visible <= e)
      positions.push_back(visible * r - 1 + (visible % 2 ? r - 1 : 0));
  std::mt19937 rng(static_cast<unsigned>(e));
  std::uniform_int_distribution<int64_t> any(0, e * r - 1);
  for (int i = 0; i < 2; ++i)
    positions.push_back(any(rng));
  return positions;
}

void checkScores(const IndexerScoresKernelSpec &spec,
                 std::vector<int64_t> positions, kf_step_fn kernel) {
  Inputs in = inputsOf(spec, std::move(positions));
  const std::vector<float> want = expected(spec, in);
  const int64_t tokens = static_cast<int64_t>(in.positions.size());
  const int64_t h = spec.heads, d = spec.dim, e = spec.entries;
  const int64_t itemsPerToken = spec.getItemsPerToken();
  // The golden's scores must be mostly finite, or the comparison is weak.
  int64_t finite = 0, scored = 0;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < visibleOf(spec, in.positions[t]); ++c, ++scored)
      finite += std::isfinite(want[t * e + c]);
  EXPECT_GE(2 * finite, scored);

  for (int threads : {0, 1, 2}) {
    SCOPED_TRACE(threads == 0 ? std::string("direct calls of 3 items")
                              : std::to_string(threads) + " threads");
    std::vector<float> got(want.size(), kSentinel);
    if (threads == 0) {
      void *addresses[] = {in.query.data(), in.weights.data(), in.keys.data(),
                           in.positions.data(), got.data()};
      const int64_t items = tokens * itemsPerToken;
      // The last range first: a score written past its block would stay.
      for (int64_t begin = (items - 1) / 3 * 3; begin >= 0; begin -= 3)
        kernel(addresses, tokens, begin, std::min(begin + 3, items));
    } else {
      ASSERT_EQ(
          runRowStep(
              kernel, tokens, itemsPerToken,
              {rowOperand(in.query, h * d),
               rowOperand(in.weights, h),
               weightOperand(in.keys),
               {std::span(reinterpret_cast<uint8_t *>(in.positions.data()),
                          in.positions.size() * sizeof(int64_t)),
                sizeof(int64_t)},
               rowOperand(got, e)},
              threads),
          absl::OkStatus());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]) && std::isnan(got[i]))
        continue;
      const int64_t t = static_cast<int64_t>(i) / e;
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                std::bit_cast<uint32_t>(want[i]))
          << "token " << t << " (position " << in.positions[t] << "), entry "
          << static_cast<int64_t>(i) % e << ": " << got[i] << " != " << want[i];
    }
  }
}

TEST_P(IndexerScoresKernelOnIsa, EqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<IndexerScoresKernelSpec> specs = {
      {16, 128, 1024, kTinyScale, 4, 64},
      {16, 128, 1024, kTinyScale, 4, 1024},
      {64, 128, 256, kFullScale, 4, 64},
      {3, 16, 40, 0.5f, 1, 40},
      {5, 48, 130, 1.0f, 2, 26},
      {2, 32, 1000, 0.25f, 3, 50},
      {6, 16, 7, 2.0f, 1, 7},
      {12, 32, 64, 0.125f, 128, 16}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildIndexerScoresKernel,
                    [](const IndexerScoresKernelSpec &spec, kf_step_fn kernel) {
                      checkScores(spec, positionsOf(spec), kernel);
                    });
}

// The full model's heads over a capacity of 16384 entries, tokens seeing
// few of them (a score costs H · d = 8192 multiply-adds).
TEST_P(IndexerScoresKernelOnIsa, EqualsInterpreterOnTheFullModelsHeads) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const IndexerScoresKernelSpec spec{64, 128, 16384, kFullScale, 4, 64};
  forEachStepKernel(
      isaTestTarget(GetParam()), {spec}, buildIndexerScoresKernel,
      [](const IndexerScoresKernelSpec &spec, kf_step_fn kernel) {
        checkScores(spec,
                    {0, 3, 4 * 17 - 1, 4 * 64 + 2, 4 * 65 - 1, 4 * 700 - 1},
                    kernel);
      });
}

TEST(IndexerScoresKernel, ChoosesBlocksDividingE) {
  using Spec = IndexerScoresKernelSpec;
  EXPECT_EQ(Spec::defaultEntryBlock(1024), 64);
  EXPECT_EQ(Spec::defaultEntryBlock(262144), 64);
  EXPECT_EQ(Spec::defaultEntryBlock(144), 48);
  EXPECT_EQ(Spec::defaultEntryBlock(1000), 50);
  EXPECT_EQ(Spec::defaultEntryBlock(130), 26);
  EXPECT_EQ(Spec::defaultEntryBlock(40), 40);
  EXPECT_EQ(Spec::defaultEntryBlock(7), 7);
  EXPECT_EQ(Spec::defaultEntryBlock(1), 1);
  EXPECT_EQ(Spec::defaultEntryBlock(65 * 67), 65);
  EXPECT_EQ(Spec::defaultEntryBlock(2 * 1009), 1009);
  EXPECT_EQ(Spec::defaultEntryBlock(2147483647), 2147483647); // a prime
  for (int64_t e = 1; e <= 3000; ++e) {
    const int64_t block = Spec::defaultEntryBlock(e);
    ASSERT_TRUE(block >= 1 && e % block == 0) << e;
  }
}

TEST(IndexerScoresKernel, RefusesBadSpecs) {
  auto error = [](IndexerScoresKernelSpec spec) {
    return llvm::toString(verifyIndexerScoresKernel(spec));
  };
  EXPECT_EQ(error({16, 128, 1024, kTinyScale, 4, 64}), "");
  EXPECT_EQ(error({0, 128, 1024, kTinyScale, 4, 64}),
            "indexer_scores kernel [H = 0, d = 128, E = 1024, scale = "
            "0.022097087, ratio = 4, block = 64]: expected at least one head");
  EXPECT_EQ(error({16, 100, 1024, kTinyScale, 4, 64}),
            "indexer_scores kernel [H = 16, d = 100, E = 1024, scale = "
            "0.022097087, ratio = 4, block = 64]: expected d a positive "
            "multiple of 16");
  EXPECT_EQ(error({16, 128, 0, kTinyScale, 4, 1}),
            "indexer_scores kernel [H = 16, d = 128, E = 0, scale = "
            "0.022097087, ratio = 4, block = 1]: expected E in [1, "
            "2147483647]");
  EXPECT_EQ(error({16, 128, 1024, kTinyScale, 0, 64}),
            "indexer_scores kernel [H = 16, d = 128, E = 1024, scale = "
            "0.022097087, ratio = 0, block = 64]: expected a ratio of at least "
            "1");
  EXPECT_EQ(error({16, 128, 1024, kTinyScale, 4, 48}),
            "indexer_scores kernel [H = 16, d = 128, E = 1024, scale = "
            "0.022097087, ratio = 4, block = 48]: expected a block dividing "
            "E");
  EXPECT_EQ(error({16, 128, 1024, kInf, 4, 64}),
            "indexer_scores kernel [H = 16, d = 128, E = 1024, scale = inf, "
            "ratio = 4, block = 64]: expected a finite scale");
  EXPECT_EQ(error({1024, 128, 1024, kTinyScale, 4, 64}),
            "indexer_scores kernel [H = 1024, d = 128, E = 1024, scale = "
            "0.022097087, ratio = 4, block = 64]: expected H at most 1004 for "
            "d = 128 (the kernel's stack of 1 MiB)");
  EXPECT_EQ(error({64, 128, 262144, kFullScale, 4, 64}), "");
}

TEST(IndexerScoresKernel, NamesEachVariantApart) {
  const IndexerScoresKernelSpec spec{64, 128, 262144, kFullScale, 4, 64};
  EXPECT_EQ(spec.getSymbolName(),
            "kf_indexer_scores_h64_d128_e262144_r4_b64_s3c3504f3");
  EXPECT_EQ(spec.describe(),
            "indexer_scores kernel [H = 64, d = 128, E = 262144, scale = "
            "0.011048543, ratio = 4, block = 64]");
  EXPECT_EQ(spec.getItemsPerToken(), 4096);
  for (IndexerScoresKernelSpec other :
       {IndexerScoresKernelSpec{16, 128, 262144, kFullScale, 4, 64},
        IndexerScoresKernelSpec{64, 64, 262144, kFullScale, 4, 64},
        IndexerScoresKernelSpec{64, 128, 1024, kFullScale, 4, 64},
        IndexerScoresKernelSpec{64, 128, 262144, kTinyScale, 4, 64},
        IndexerScoresKernelSpec{64, 128, 262144, kFullScale, 128, 64},
        IndexerScoresKernelSpec{64, 128, 262144, kFullScale, 4, 32}})
    EXPECT_NE(other.getSymbolName(), spec.getSymbolName());
}

// The kernel calls nothing: no fma from libm on the portable level, which
// has no FMA instruction.
TEST(IndexerScoresKernel, CallsNothing) {
  const IndexerScoresKernelSpec spec{64, 128, 262144, kFullScale, 4, 64};
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v3", "x86-64-v4"}, {spec.getSymbolName()},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(
            static_cast<bool>(buildIndexerScoresKernel(module, spec, target)));
        ASSERT_TRUE(static_cast<bool>(buildIndexerScoresKernel(
            module, {5, 48, 130, 1.0f, 2, 26}, target)));
      });
}

} // namespace
} // namespace kf::codegen
