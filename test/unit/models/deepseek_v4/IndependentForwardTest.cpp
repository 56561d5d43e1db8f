// The reference forward's exact-f32 mode against an independent f64 forward
// (F64Forward.h) on the tiny model: two implementations of the same
// definition, written apart, in different shapes and precisions.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "F64Forward.h"
#include "RandomModel.h"
#include "kf/deepseek_v4/reference/model.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::test {
namespace {

using reference::ForwardResult;
using reference::Model;
using reference::Precision;
using reference::Weights;
using reference::test::randomTokens;
using reference::test::randomWeights;
using reference::test::tinyConfig;

size_t argmax(std::span<const float> row) {
  return static_cast<size_t>(std::max_element(row.begin(), row.end()) -
                             row.begin());
}

size_t argmax(std::span<const double> row) {
  return static_cast<size_t>(std::max_element(row.begin(), row.end()) -
                             row.begin());
}

// The reference in exact-f32 mode and the f64 forward give the same logits
// at every position of a 264-token prefill, within 1e-4, and the same argmax.
// 264 positions exercise every layer kind: the window of 16 wraps many
// times, the ratio-4 layers' indexers choose 8 of up to 66 entries, and the
// ratio-128 layers complete two blocks (positions 127 and 255). The test
// takes about 3.5 s in a Release build (each forward under 2 s).
//
// Why 1e-4. The f64 forward's own rounding (2^-53 per operation) is
// negligible, so the difference is the reference's f32 rounding. It rounds
// each stored activation to f32, a relative error of at most u = 2^-24 ≈
// 6e-8 (its dot products accumulate in f64 and round once). A residual value
// meets about 20 such roundings per layer (HC read, norm, q_a, q norm, q_b,
// head scale, RoPE, softmax weights, attention output, inverse RoPE, wo_a,
// wo_b, HC write; again HC read, norm, gate, w1 and w3, SwiGLU, w2, expert
// sum, HC write), some 150 over 7 layers and the head. Every sublayer
// re-normalises its input, so relative errors are carried through the depth
// without growing much; even if all 150 added coherently the logits
// (|logit| ≤ 5.1 here) would move by 150 · u · 5.1 ≈ 4.6e-5, and as
// independent errors by √150 · u · 5.1 ≈ 4e-6.
//
// One term grows with position instead: the reference forms the RoPE angle
// in f32, fl32(fl32(pos) · f_i), as torch does, so at position p the angle
// is off by up to about 2 · p · u radians (the f32 frequency and the f32
// product), 3e-5 at p = 263, while this forward rotates exactly. Given the
// same f32 angles, the f64 forward's measured difference drops to 1.6e-6 at
// T = 160 and 2.0e-6 at T = 400; with exact angles it is 4.0e-6 at T = 160,
// 7.6e-6 at T = 264 and 1.5e-5 at T = 400.
//
// So 1e-4 covers the worst-case f32 accumulation plus the angle term to
// several hundred positions, and is 13× the measured 7.6e-6 at T = 264. Real
// mistakes land far above it: deliberately breaking the f64 forward
// (dropping the ratio-4 previous block, YaRN, the HCA entries, the shared
// expert's clamp, the gate bias, the inverse RoPE or the indexer's ReLU;
// the window one short, the sink scaled, the indexer's order reversed, the
// compressed entries rotated at their last token) moves the logits by 1.1 to
// 3.4, and the subtlest tried, one Sinkhorn iteration short, by 3.6e-4.
TEST(IndependentForward, F32ModeMatchesAPlainF64Forward) {
  const Config config = tinyConfig();
  const Weights weights = randomWeights(config, 7);
  constexpr size_t kTokens = 264;
  const std::vector<int32_t> tokens = randomTokens(config, kTokens, 11);

  auto start = std::chrono::steady_clock::now();
  ForwardResult f32 =
      Model(weights, {.precision = Precision::F32, .keepPositionLogits = true})
          .prefill(tokens);
  auto middle = std::chrono::steady_clock::now();
  SelectionMargins margins;
  std::vector<double> f64 = f64ForwardLogits(config, weights, tokens, margins);
  auto end = std::chrono::steady_clock::now();

  const size_t vocab = config.nVocab;
  ASSERT_EQ(f32.positionLogits.size(), kTokens * vocab);
  ASSERT_EQ(f64.size(), kTokens * vocab);
  double worst = 0, largestLogit = 0;
  size_t worstPosition = 0, sameArgmax = 0;
  for (size_t t = 0; t < kTokens; ++t) {
    std::span<const float> a =
        std::span<const float>(f32.positionLogits).subspan(t * vocab, vocab);
    std::span<const double> b =
        std::span<const double>(f64).subspan(t * vocab, vocab);
    double here = 0;
    for (size_t v = 0; v < vocab; ++v) {
      here = std::max(here, std::fabs(static_cast<double>(a[v]) - b[v]));
      largestLogit = std::max(largestLogit, std::fabs(b[v]));
    }
    // A near-tie in a top-k can flip a discrete choice between f32 and f64
    // and move everything after it by O(1): the margins say whether one did.
    EXPECT_LE(here, 1e-4) << "position " << t
                          << "; smallest top-k margins: routing "
                          << margins.routing << ", indexer " << margins.indexer;
    if (here > worst) {
      worst = here;
      worstPosition = t;
    }
    EXPECT_EQ(argmax(a), argmax(b)) << "position " << t;
    sameArgmax += argmax(a) == argmax(b);
  }
  auto seconds = [](auto d) {
    return std::chrono::duration<double>(d).count();
  };
  std::printf("T = %zu: max |dlogit| %.3g (position %zu), max |logit| %.3g, "
              "argmax agrees at %zu of %zu positions\n",
              kTokens, worst, worstPosition, largestLogit, sameArgmax, kTokens);
  std::printf("smallest top-k margins: routing %.3g, indexer %.3g\n",
              margins.routing, margins.indexer);
  std::printf("reference f32 %.2f s, f64 forward %.2f s\n",
              seconds(middle - start), seconds(end - middle));
}

} // namespace
} // namespace kf::deepseek_v4::test
