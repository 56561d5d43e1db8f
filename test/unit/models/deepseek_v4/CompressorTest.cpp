// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/compressor.h"

#include <cmath>
#include <random>
#include <vector>

#include "TestUtil.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/rope.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::kU32;

// Tolerance of a pooled entry against its exact value. The scores are fp32
// sums g + ape of magnitude ≤ 8: each is off by ≤ 2·2^-24·8 from its real
// value, so a softmax weight by ≤ 4·2^-24·8 relative (two scores enter each
// ratio), and exp, the sum and the division add ≤ 3 units: about 35 units of
// 2^-24 per weight. The pooled sum of positive terms inherits that relative
// bound; 64 units cover it.
double poolingTolerance(double expected) {
  return 64 * kU32 * std::fabs(expected);
}

// Sets the score of slot m to log(weight) split unevenly between the gate and
// ape, so that a pooling which ignored either would fail.
void setScore(std::vector<float> &gates, std::vector<float> &ape, size_t index,
              double logWeight) {
  ape[index] = static_cast<float>(0.25 * logWeight + 0.5);
  gates[index] = static_cast<float>(logWeight - ape[index]);
}

TEST(PoolCompressedEntry, Ratio128) {
  // d = 2, 128 slots.
  //   channel 0: score ln(m + 1) → weights (m + 1)/8256; values m, so
  //              e = Σ m(m + 1)/8256 = 699008/8256 = 254/3.
  //   channel 1: equal scores → the mean of the values m/2, 127/4 = 31.75.
  const int ratio = 128, d = 2;
  std::vector<float> values(ratio * d), gates(ratio * d), ape(ratio * d);
  for (int m = 0; m < ratio; ++m) {
    values[m * d + 0] = static_cast<float>(m);
    setScore(gates, ape, m * d + 0, std::log(m + 1.0));
    values[m * d + 1] = m / 2.0f;
    setScore(gates, ape, m * d + 1, 1.5);
  }
  std::vector<float> entry(d);
  poolCompressedEntry(values, gates, ape, ratio, entry);
  EXPECT_NEAR(entry[0], 254.0 / 3, poolingTolerance(254.0 / 3));
  EXPECT_NEAR(entry[1], 31.75, poolingTolerance(31.75));
}

// The ratio-4 overlapping layout: [4 tokens, 2d] per span; channel ch uses
// columns ch of the previous block and d + ch of its own block.
struct Overlap {
  static constexpr int ratio = 4, d = 2, width = 2 * d;
  std::vector<float> prevValues = std::vector<float>(ratio * width);
  std::vector<float> prevGates = std::vector<float>(ratio * width);
  std::vector<float> ownValues = std::vector<float>(ratio * width);
  std::vector<float> ownGates = std::vector<float>(ratio * width);
  std::vector<float> ape = std::vector<float>(ratio * width);

  Overlap() {
    // The columns of the role a span does not play get values and scores
    // that would dominate any pooling that read them.
    for (int m = 0; m < ratio; ++m)
      for (int ch = 0; ch < d; ++ch) {
        prevValues[m * width + d + ch] = 1000;
        prevGates[m * width + d + ch] = 50;
        ownValues[m * width + ch] = -1000;
        ownGates[m * width + ch] = 50;
      }
  }
};

TEST(PoolCompressedEntryOverlap, FirstEntryHasNoPreviousBlock) {
  // c = 0: only the own block. Channel 0: scores ln(m + 1) → weights
  // (m + 1)/10, values 10m → e = Σ m(m + 1) = 0 + 2 + 6 + 12 = 20.
  // Channel 1: equal scores, values 1, 2, 3, 4 → 2.5.
  Overlap t;
  const int d = Overlap::d, width = Overlap::width;
  for (int m = 0; m < Overlap::ratio; ++m) {
    t.ownValues[m * width + d + 0] = 10.0f * m;
    setScore(t.ownGates, t.ape, m * width + d + 0, std::log(m + 1.0));
    t.ownValues[m * width + d + 1] = m + 1.0f;
    setScore(t.ownGates, t.ape, m * width + d + 1, -0.75);
  }
  std::vector<float> entry(d);
  poolCompressedEntryOverlap({}, {}, t.ownValues, t.ownGates, t.ape,
                             Overlap::ratio, entry);
  EXPECT_NEAR(entry[0], 20, poolingTolerance(20));
  EXPECT_NEAR(entry[1], 2.5, poolingTolerance(2.5));
}

TEST(PoolCompressedEntryOverlap, LaterEntryPoolsEightSlots) {
  // c > 0: 8 slots. Channel 0: weights 1..4 on the previous block (scores
  // ln 1..ln 4, channel 0 of prev) and 5..8 on its own (ln 5..ln 8, channel
  // d of own), total 36; values i = 0..7 in slot order, so
  // e = Σ i(i + 1)/36 = 168/36 = 14/3.
  // Channel 1: equal scores over all 8 slots, values −1, −2, −3, −4 (previous)
  // and 1, 2, 3, 12 (own): the mean, 8/8 = 1.
  Overlap t;
  const int d = Overlap::d, width = Overlap::width;
  const float prevCh1[] = {-1, -2, -3, -4};
  const float ownCh1[] = {1, 2, 3, 12};
  for (int m = 0; m < Overlap::ratio; ++m) {
    t.prevValues[m * width + 0] = static_cast<float>(m);
    setScore(t.prevGates, t.ape, m * width + 0, std::log(m + 1.0));
    t.ownValues[m * width + d + 0] = static_cast<float>(4 + m);
    setScore(t.ownGates, t.ape, m * width + d + 0, std::log(m + 5.0));

    t.prevValues[m * width + 1] = prevCh1[m];
    setScore(t.prevGates, t.ape, m * width + 1, 0.5);
    t.ownValues[m * width + d + 1] = ownCh1[m];
    setScore(t.ownGates, t.ape, m * width + d + 1, 0.5);
  }
  std::vector<float> entry(d);
  poolCompressedEntryOverlap(t.prevValues, t.prevGates, t.ownValues, t.ownGates,
                             t.ape, Overlap::ratio, entry);
  EXPECT_NEAR(entry[0], 14.0 / 3, poolingTolerance(14.0 / 3));
  // Channel 1 mixes signs: bound by the sum of |terms|, 28/8.
  EXPECT_NEAR(entry[1], 1.0, poolingTolerance(28.0 / 8));
}

TEST(PoolCompressedEntry, LargeScoresDoNotOverflow) {
  // Scores near 1000 (e^1000 overflows): the softmax subtracts the maximum.
  // Scores 1000 and 1000 − ln 3 weigh 3:1 → e = (3·4 + 1·8)/4 = 5.
  const int ratio = 2, d = 1;
  std::vector<float> values = {4, 8};
  std::vector<float> gates = {1000, static_cast<float>(1000 - std::log(3.0))};
  std::vector<float> ape = {0, 0};
  std::vector<float> entry(d);
  poolCompressedEntry(values, gates, ape, ratio, entry);
  // fl32(1000 − ln 3) is off by up to 2^-24·1000 = 6e-5 in the score.
  EXPECT_NEAR(entry[0], 5, 1e-4);
}

TEST(CompressorDeathTest, RejectsHalfAPreviousBlock) {
  Overlap t;
  std::vector<float> entry(Overlap::d);
  EXPECT_DEATH(poolCompressedEntryOverlap(t.prevValues, {}, t.ownValues,
                                          t.ownGates, t.ape, Overlap::ratio,
                                          entry),
               "prev values and gates");
}

// A compressor over D = 1 inputs x_u = u + 1 with d = 4 (rope_dim 2, one
// frequency), wkv[ch] = ch + 1, zero gates and ape: every slot has the same
// score, so an entry is the plain mean of its slots' values a_u[ch] =
// (u + 1)(ch + 1). No simulation, a unit norm weight.
struct MeanCompressor {
  static constexpr int kDim = 4;
  std::vector<float> kv, gate, ape, norm = std::vector<float>(kDim, 1.0f);
  std::vector<float> freqs = {0.25f};
  Compressor compressor;

  MeanCompressor(int ratio, bool overlap)
      : kv(weights(overlap)), gate(kv.size(), 0.0f),
        ape(static_cast<size_t>(ratio) * kv.size(), 0.0f),
        compressor({kv, gate, ape, norm},
                   {ratio, overlap, kDim, /*rope_dim=*/2, 1e-6f},
                   CompressorKind::Main, freqs,
                   Options{.simulateQuantization = false}) {}

  static std::vector<float> weights(bool overlap) {
    std::vector<float> w(overlap ? 2 * kDim : kDim);
    for (size_t ch = 0; ch < w.size(); ++ch)
      w[ch] = static_cast<float>(ch + 1);
    return w;
  }
};

// The entry of pooled values `mean` after §4.3's bf16 cast, RMSNorm with a
// unit weight and RoPE at `pos`: the norm in fp32 as rms_norm documents it,
// the rotation of the last pair in fp64 and rounded to bf16 (one rounding
// apart from rope's fp32 products: compared within a bf16 ulp).
std::vector<double> expectedEntry(const std::vector<double> &mean, int64_t pos,
                                  float freq) {
  double sumSq = 0;
  for (double v : mean)
    sumSq += v * v;
  float r = static_cast<float>(
      1 / std::sqrt(static_cast<double>(
              static_cast<float>(sumSq / mean.size()) + 1e-6f)));
  std::vector<double> e;
  for (double v : mean)
    e.push_back(test::toBf16(static_cast<float>(v) * r));
  double angle = static_cast<float>(static_cast<float>(pos) * freq);
  double a = e[2], b = e[3];
  e[2] = test::toBf16(a * std::cos(angle) - b * std::sin(angle));
  e[3] = test::toBf16(a * std::sin(angle) + b * std::cos(angle));
  return e;
}

void expectEntry(std::span<const float> entry,
                 const std::vector<double> &expected) {
  ASSERT_EQ(entry.size(), expected.size());
  for (size_t i = 0; i < 2; ++i) // the norm part: exact
    EXPECT_EQ(entry[i], expected[i]) << i;
  for (size_t i = 2; i < 4; ++i) // the rotated part: one bf16 rounding
    EXPECT_NEAR(entry[i], expected[i], 2 * test::bf16RoundingBound(expected[i]))
        << i;
}

TEST(Compressor, OverlappingEntriesPoolTheirOwnAndThePreviousBlock) {
  MeanCompressor m(4, /*overlap=*/true);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  m.compressor.prefill(x);
  ASSERT_EQ(m.compressor.size(), 2);
  // Entry 0 has no previous block: the mean of the own slots u = 0..3 on
  // channels d + ch, 2.5·(d + ch + 1) = 12.5, 15, 17.5, 20, at position 0.
  std::vector<double> own = {12.5, 15, 17.5, 20};
  expectEntry(m.compressor.entries().first(4), expectedEntry(own, 0, 0.25f));
  // Entry 1 pools eight slots: u = 0..3 on channels ch (Σ = 10(ch + 1)) and
  // u = 4..7 on channels d + ch (Σ = 26(d + ch + 1)), at position 4.
  std::vector<double> both(4);
  for (int ch = 0; ch < 4; ++ch)
    both[ch] = (10.0 * (ch + 1) + 26.0 * (4 + ch + 1)) / 8;
  expectEntry(m.compressor.entries().subspan(4, 4),
              expectedEntry(both, 4, 0.25f));
}

TEST(Compressor, RatioWithoutOverlapPoolsOneBlock) {
  MeanCompressor m(4, /*overlap=*/false);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  m.compressor.prefill(x);
  ASSERT_EQ(m.compressor.size(), 2);
  // Entry 1: u = 4..7 on channels ch, 6.5·(ch + 1).
  std::vector<double> mean = {6.5, 13, 19.5, 26};
  expectEntry(m.compressor.entries().subspan(4, 4),
              expectedEntry(mean, 4, 0.25f));
}

// Random projections, scores and ape: decode, token by token from a prefill
// of any length, builds the same entries as one prefill of the whole
// sequence (§4.3's running state), and a new prefill forgets the old
// sequence.
TEST(Compressor, DecodeContinuesAPrefill) {
  const size_t nEmbd = 8;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto draw = [&](size_t n) {
    std::vector<float> v(n);
    for (float &e : v)
      e = normal(rng);
    return v;
  };
  for (bool overlap : {true, false}) {
    const int ratio = overlap ? 4 : 8;
    // d = 72: 64 FP8-simulated dims and 8 rotated ones.
    const size_t d = 72, width = overlap ? 2 * d : d;
    std::vector<float> kv = draw(width * nEmbd), gate = draw(width * nEmbd),
                       ape = draw(ratio * width), norm = draw(d);
    std::vector<float> freqs = {0.5f, 0.25f, 0.125f, 0.0625f};
    auto make = [&] {
      return Compressor({kv, gate, ape, norm}, {ratio, overlap, 72, 8, 1e-6f},
                        CompressorKind::Main, freqs,
                        Options{.simulateQuantization = true});
    };
    const size_t tokens = 27;
    std::vector<float> x = draw(tokens * nEmbd);
    Compressor whole = make();
    whole.prefill(x);
    ASSERT_EQ(whole.size(), static_cast<int64_t>(tokens) / ratio);
    std::vector<float> expected(whole.entries().begin(), whole.entries().end());
    Compressor stepped = make();
    for (size_t first : {0, 1, 3, 4, 5, 8, 17}) {
      // An unrelated sequence first, whose state the next prefill drops.
      stepped.prefill(std::span<const float>(x).subspan(nEmbd, 11 * nEmbd));
      if (first > 0)
        stepped.prefill(std::span<const float>(x).first(first * nEmbd));
      else
        stepped = make(); // a decode from position 0 on a fresh compressor
      for (size_t u = first; u < tokens; ++u)
        stepped.decode(std::span<const float>(x).subspan(u * nEmbd, nEmbd),
                       static_cast<int64_t>(u));
      EXPECT_EQ(std::vector<float>(stepped.entries().begin(),
                                   stepped.entries().end()),
                expected)
          << "ratio " << ratio << ", prefill of " << first;
    }
  }
}

} // namespace
} // namespace kf::deepseek_v4::reference
