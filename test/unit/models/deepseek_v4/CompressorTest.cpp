#include "kf/deepseek_v4/reference/compressor.h"

#include <cmath>
#include <vector>

#include "TestUtil.h"
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
double pooling_tolerance(double expected) {
  return 64 * kU32 * std::fabs(expected);
}

// Sets the score of slot m to log(weight) split unevenly between the gate and
// ape, so that a pooling which ignored either would fail.
void set_score(std::vector<float> &gates, std::vector<float> &ape, size_t index,
               double log_weight) {
  ape[index] = static_cast<float>(0.25 * log_weight + 0.5);
  gates[index] = static_cast<float>(log_weight - ape[index]);
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
    set_score(gates, ape, m * d + 0, std::log(m + 1.0));
    values[m * d + 1] = m / 2.0f;
    set_score(gates, ape, m * d + 1, 1.5);
  }
  std::vector<float> entry(d);
  pool_compressed_entry(values, gates, ape, ratio, entry);
  EXPECT_NEAR(entry[0], 254.0 / 3, pooling_tolerance(254.0 / 3));
  EXPECT_NEAR(entry[1], 31.75, pooling_tolerance(31.75));
}

// The ratio-4 overlapping layout: [4 tokens, 2d] per span; channel ch uses
// columns ch of the previous block and d + ch of its own block.
struct Overlap {
  static constexpr int ratio = 4, d = 2, width = 2 * d;
  std::vector<float> prev_values = std::vector<float>(ratio * width);
  std::vector<float> prev_gates = std::vector<float>(ratio * width);
  std::vector<float> own_values = std::vector<float>(ratio * width);
  std::vector<float> own_gates = std::vector<float>(ratio * width);
  std::vector<float> ape = std::vector<float>(ratio * width);

  Overlap() {
    // The columns of the role a span does not play get values and scores
    // that would dominate any pooling that read them.
    for (int m = 0; m < ratio; ++m)
      for (int ch = 0; ch < d; ++ch) {
        prev_values[m * width + d + ch] = 1000;
        prev_gates[m * width + d + ch] = 50;
        own_values[m * width + ch] = -1000;
        own_gates[m * width + ch] = 50;
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
    t.own_values[m * width + d + 0] = 10.0f * m;
    set_score(t.own_gates, t.ape, m * width + d + 0, std::log(m + 1.0));
    t.own_values[m * width + d + 1] = m + 1.0f;
    set_score(t.own_gates, t.ape, m * width + d + 1, -0.75);
  }
  std::vector<float> entry(d);
  pool_compressed_entry_overlap({}, {}, t.own_values, t.own_gates, t.ape,
                                Overlap::ratio, entry);
  EXPECT_NEAR(entry[0], 20, pooling_tolerance(20));
  EXPECT_NEAR(entry[1], 2.5, pooling_tolerance(2.5));
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
  const float prev_ch1[] = {-1, -2, -3, -4};
  const float own_ch1[] = {1, 2, 3, 12};
  for (int m = 0; m < Overlap::ratio; ++m) {
    t.prev_values[m * width + 0] = static_cast<float>(m);
    set_score(t.prev_gates, t.ape, m * width + 0, std::log(m + 1.0));
    t.own_values[m * width + d + 0] = static_cast<float>(4 + m);
    set_score(t.own_gates, t.ape, m * width + d + 0, std::log(m + 5.0));

    t.prev_values[m * width + 1] = prev_ch1[m];
    set_score(t.prev_gates, t.ape, m * width + 1, 0.5);
    t.own_values[m * width + d + 1] = own_ch1[m];
    set_score(t.own_gates, t.ape, m * width + d + 1, 0.5);
  }
  std::vector<float> entry(d);
  pool_compressed_entry_overlap(t.prev_values, t.prev_gates, t.own_values,
                                t.own_gates, t.ape, Overlap::ratio, entry);
  EXPECT_NEAR(entry[0], 14.0 / 3, pooling_tolerance(14.0 / 3));
  // Channel 1 mixes signs: bound by the sum of |terms|, 28/8.
  EXPECT_NEAR(entry[1], 1.0, pooling_tolerance(28.0 / 8));
}

TEST(PoolCompressedEntry, LargeScoresDoNotOverflow) {
  // Scores near 1000 (e^1000 overflows): the softmax subtracts the maximum.
  // Scores 1000 and 1000 − ln 3 weigh 3:1 → e = (3·4 + 1·8)/4 = 5.
  const int ratio = 2, d = 1;
  std::vector<float> values = {4, 8};
  std::vector<float> gates = {1000, static_cast<float>(1000 - std::log(3.0))};
  std::vector<float> ape = {0, 0};
  std::vector<float> entry(d);
  pool_compressed_entry(values, gates, ape, ratio, entry);
  // fl32(1000 − ln 3) is off by up to 2^-24·1000 = 6e-5 in the score.
  EXPECT_NEAR(entry[0], 5, 1e-4);
}

TEST(CompressorDeathTest, RejectsHalfAPreviousBlock) {
  Overlap t;
  std::vector<float> entry(Overlap::d);
  EXPECT_DEATH(pool_compressed_entry_overlap(t.prev_values, {}, t.own_values,
                                             t.own_gates, t.ape, Overlap::ratio,
                                             entry),
               "prev values and gates");
}

} // namespace
} // namespace kf::deepseek_v4::reference
