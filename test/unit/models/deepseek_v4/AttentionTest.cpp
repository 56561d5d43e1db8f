// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/attention.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::toBf16;

TEST(AttentionScale, IsHeadDimToTheMinusHalf) {
  EXPECT_EQ(attentionScale(512), static_cast<float>(1 / std::sqrt(512.0)));
  EXPECT_EQ(attentionScale(4), 0.5f);
}

// One head, head_dim 2. Bank rows K0 = (1, 0), K1 = (0, 1), K2 = (1, 1),
// K3 = (−1, 0.5) and a row 4 that no index names; q = (2, 2), scale 1/2,
// sink ln 2. Logits l = scale·(q·K) = 1, 1, 2, −0.5; the sink enters the
// softmax unscaled with weight e^{ln 2} = 2 and no value.
struct OneHead {
  std::vector<float> bank = {1, 0, 0, 1, 1, 1, -1, 0.5f, 100, -100};
  std::vector<float> q = {2, 2};
  std::vector<float> sink = {static_cast<float>(std::log(2.0))};
  float scale = 0.5f;
};

// §2 worked in fp64: softmax over the logits and the sink, each probability
// rounded to bf16, o = bf16(Σ p_j·K_j).
std::vector<double> expectedOneHead(bool roundProbabilities) {
  const double keys[4][2] = {{1, 0}, {0, 1}, {1, 1}, {-1, 0.5}};
  const double logits[4] = {1, 1, 2, -0.5};
  double total =
      std::exp(static_cast<double>(static_cast<float>(std::log(2.0))));
  for (double l : logits)
    total += std::exp(l);
  std::vector<double> o(2, 0.0);
  for (int j = 0; j < 4; ++j) {
    double p = std::exp(logits[j]) / total;
    if (roundProbabilities)
      p = toBf16(p);
    for (int d = 0; d < 2; ++d)
      o[d] += p * keys[j][d];
  }
  for (double &v : o)
    v = toBf16(v);
  return o;
}

TEST(SparseAttention, HandComputedOneHeadWithSink) {
  // p = (e, e, e², e^−½) / (2e + e² + e^−½ + 2) = 0.1761, 0.1761, 0.4788,
  // 0.0393, in bf16 0.17578125, 0.17578125, 0.478515625, 0.039306640625
  // (none near a rounding tie); o = (0.61499, 0.67395), in bf16
  // (0.61328125, 0.67578125).
  OneHead t;
  const std::vector<int32_t> idx = {0, 1, 2, 3};
  std::vector<float> out(2);
  sparseAttention(t.q, t.bank, t.sink, idx, 1, 2, t.scale, out);
  std::vector<double> expected = expectedOneHead(true);
  EXPECT_EQ(out[0], expected[0]);
  EXPECT_EQ(out[1], expected[1]);
  EXPECT_EQ(out[0], 0.61328125f);
  EXPECT_EQ(out[1], 0.67578125f);
  // Unrounded probabilities would give o_0 = bf16(0.61565) = 0.6171875: the
  // test sees the bf16 rounding of §2.
  EXPECT_NE(out[0], expectedOneHead(false)[0]);
}

TEST(SparseAttention, PaddingIsSkipped) {
  OneHead t;
  const std::vector<int32_t> padded = {-1, 0, 1, -1, 2, 3, -1};
  std::vector<float> out(2);
  sparseAttention(t.q, t.bank, t.sink, padded, 1, 2, t.scale, out);
  EXPECT_EQ(out[0], 0.61328125f);
  EXPECT_EQ(out[1], 0.67578125f);
}

TEST(SparseAttention, OnlyPaddingLeavesTheSinkAlone) {
  // All mass on the sink, whose value vector is zero.
  OneHead t;
  const std::vector<int32_t> idx = {-1, -1};
  std::vector<float> out = {7, 7};
  sparseAttention(t.q, t.bank, t.sink, idx, 1, 2, t.scale, out);
  EXPECT_EQ(out, (std::vector<float>{0, 0}));
}

TEST(SparseAttention, SinkIsNotScaled) {
  // One key with logit 0 (q ⟂ K), weight 1, and a sink ln 3. Unscaled the
  // sink weighs 3, so the key keeps 1/4: o = K/4. Scaled by 1/8 it would
  // weigh 3^(1/8) ≈ 1.15 and the key would keep 0.47.
  const std::vector<float> bank = {2, 4};
  const std::vector<float> q = {2, -1};
  const std::vector<float> sink = {static_cast<float>(std::log(3.0))};
  const std::vector<int32_t> idx = {0};
  std::vector<float> out(2);
  sparseAttention(q, bank, sink, idx, 1, 2, 0.125f, out);
  // 1/(1 + fl32(e^{ln 3})) differs from 1/4 by ~1e-8; bf16 0.25.
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[1], 1.0f);
}

TEST(SparseAttention, HeadsHaveTheirOwnQueryAndSink) {
  // Two heads over the same bank and index list. Head 0 as above; head 1 has
  // q = (0, 0) (all logits 0) and a sink of −1e30 (no mass): a plain mean of
  // the four rows, (1/4·(1 + 0 + 1 − 1), 1/4·(0 + 1 + 1 + 0.5)) =
  // (0.25, 0.625).
  OneHead t;
  std::vector<float> q = {2, 2, 0, 0};
  std::vector<float> sink = {t.sink[0], -1e30f};
  const std::vector<int32_t> idx = {0, 1, 2, 3};
  std::vector<float> out(4);
  sparseAttention(q, t.bank, sink, idx, 2, 2, t.scale, out);
  EXPECT_EQ(out[0], 0.61328125f);
  EXPECT_EQ(out[1], 0.67578125f);
  EXPECT_EQ(out[2], 0.25f);
  EXPECT_EQ(out[3], 0.625f);
}

TEST(SparseAttentionDeathTest, RejectsIndicesOutsideTheBank) {
  OneHead t;
  const std::vector<int32_t> idx = {0, 5};
  std::vector<float> out(2);
  EXPECT_DEATH(sparseAttention(t.q, t.bank, t.sink, idx, 1, 2, t.scale, out),
               "outside the bank");
}

TEST(WindowPositions, PadsBeforePositionZero) {
  std::vector<int32_t> w(4);
  windowPositions(0, w);
  EXPECT_EQ(w, (std::vector<int32_t>{-1, -1, -1, 0}));
  windowPositions(2, w);
  EXPECT_EQ(w, (std::vector<int32_t>{-1, 0, 1, 2}));
  windowPositions(3, w);
  EXPECT_EQ(w, (std::vector<int32_t>{0, 1, 2, 3}));
  std::vector<int32_t> model(128);
  windowPositions(1000, model); // §4.2: t − 127 .. t, itself included
  EXPECT_EQ(model.front(), 873);
  EXPECT_EQ(model.back(), 1000);
}

TEST(VisibleCompressed, BlocksWhoseLastTokenIsAtMostT) {
  // Ratio 4: entry 0 covers tokens 0..3 and is visible from t = 3.
  EXPECT_EQ(visibleCompressed(0, 4), 0);
  EXPECT_EQ(visibleCompressed(2, 4), 0);
  EXPECT_EQ(visibleCompressed(3, 4), 1);
  EXPECT_EQ(visibleCompressed(6, 4), 1);
  EXPECT_EQ(visibleCompressed(7, 4), 2);
  EXPECT_EQ(visibleCompressed(126, 128), 0);
  EXPECT_EQ(visibleCompressed(127, 128), 1);
  EXPECT_EQ(visibleCompressed(300, 128), 2);
}

} // namespace
} // namespace kf::deepseek_v4::reference
