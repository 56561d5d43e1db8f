// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/routing.h"
#include "kf/deepseek_v4/reference/choices.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::bf16RoundingBound;
using test::isBf16;
using test::kU32;

TEST(SqrtSoftplus, MatchesFormula) {
  // s = sqrt(log(1 + e^z)), one fp32 rounding of the fp64 value.
  for (float z : {-30.0f, -5.0f, -1.0f, 0.0f, 0.5f, 1.0f, 10.0f, 19.5f}) {
    double expected = std::sqrt(std::log1p(std::exp(static_cast<double>(z))));
    EXPECT_NEAR(sqrtSoftplus(z), expected, kU32 * expected) << z;
  }
  // z = 0: sqrt(ln 2) = 0.83255461; z = −30: ≈ e^−15 = 3.0590232e-7.
  EXPECT_NEAR(sqrtSoftplus(0), 0.83255461, 1e-7);
  EXPECT_NEAR(sqrtSoftplus(-30), 3.0590232e-7, 1e-13);
}

TEST(SqrtSoftplus, IsSqrtZAboveTwenty) {
  // torch's softplus returns z itself for z > 20; e^z overflows fp32 from
  // z ≈ 88.7 and fp64 from ≈ 709.8, and the result stays finite.
  for (float z : {20.5f, 21.0f, 89.0f, 1000.0f, 1e30f})
    EXPECT_EQ(sqrtSoftplus(z), std::sqrt(z)) << z;
}

TEST(TopK, LowerIndexWinsTies) {
  const std::vector<float> v = {1, 3, 3, 2, 3};
  std::vector<int32_t> one(1), two(2), three(3), all(5);
  topK(v, one);
  topK(v, two);
  topK(v, three);
  topK(v, all);
  EXPECT_EQ(one, (std::vector<int32_t>{1}));
  EXPECT_EQ(two, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(three, (std::vector<int32_t>{1, 2, 4}));
  EXPECT_EQ(all, (std::vector<int32_t>{1, 2, 4, 3, 0}));
}

TEST(TopKGap, IsTheGapBelowThePicks) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {1, 5, 3, -4};
  EXPECT_EQ(topKGap(v, 1).margin, 2.0f);
  EXPECT_EQ(topKGap(v, 1).lastPicked, 5.0f);
  EXPECT_EQ(topKGap(v, 1).relative(), 0.4f);
  EXPECT_EQ(topKGap(v, 2).margin, 2.0f);
  EXPECT_EQ(topKGap(v, 3).margin, 5.0f);
  EXPECT_EQ(topKGap(v, 3).relative(), 5.0f);
  EXPECT_EQ(topKGap(v, 4).margin, inf); // nothing left out
  EXPECT_EQ(topKGap(v, 4).relative(), inf);
  EXPECT_EQ(topKGap(v, 4).lastPicked, -4.0f);
  // A tie: the lower index won by nothing.
  EXPECT_EQ(topKGap(std::vector<float>{5, 5}, 1).relative(), 0.0f);
  EXPECT_EQ(topKGap(std::vector<float>{0, 0}, 1).relative(), 0.0f);
  EXPECT_EQ(topKGap(std::vector<float>{0, -1}, 1).relative(), inf);
  // A masked candidate is no alternative.
  EXPECT_EQ(topKGap(std::vector<float>{2, -inf, 1}, 2).margin, inf);
  EXPECT_EQ(topKGap(std::vector<float>{2, -inf, 1}, 1).margin, 1.0f);
}

TEST(TopK, InfinitiesAndSignedZerosTie) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<int32_t> out(3);
  topK(std::vector<float>{-inf, 0, -inf}, out);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 0, 2}));
  // −0 == +0: a tie, so the lower index, whichever zero it holds.
  std::vector<int32_t> first(1);
  topK(std::vector<float>{-0.0f, 0.0f}, first);
  EXPECT_EQ(first[0], 0);
  topK(std::vector<float>{0.0f, -0.0f}, first);
  EXPECT_EQ(first[0], 0);
}

TEST(RoutingWeights, NormalisedThenScaled) {
  // s = (1, 2, 3), experts {2, 0}: (3/4, 1/4)·1.5 = (1.125, 0.375), exact.
  const std::vector<float> s = {1, 2, 3};
  const std::vector<int32_t> ids = {2, 0};
  std::vector<float> w(2);
  routingWeights(s, ids, kRouteScale, w);
  EXPECT_EQ(w, (std::vector<float>{1.125f, 0.375f}));
}

TEST(RouteLearned, BiasOnlySelects) {
  // s + bias = (1.1, 1.0, 0.8, 0.9): the top 2 are experts 0 and 1, though
  // expert 2 has the larger score. Weights from the unbiased s:
  // 0.5/1.5·1.5 = 0.5 and 1.0/1.5·1.5 = 1.0.
  const std::vector<float> s = {0.5f, 1.0f, 0.8f, 0.2f};
  const std::vector<float> bias = {0.6f, 0, 0, 0.7f};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  routeLearned(s, bias, kRouteScale, ids, w);
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1}));
  // s_0/(s_0 + s_1) and its product with 1.5: two fp32 roundings.
  EXPECT_NEAR(w[0], 0.5, 2 * kU32);
  EXPECT_NEAR(w[1], 1.0, 2 * kU32);
}

TEST(RouteLearned, TiesOnTheBiasedScoreGoToTheLowerExpert) {
  // s + bias = (1, 2, 2, 2): experts 1 and 2.
  const std::vector<float> s = {1, 1.5f, 1, 2};
  const std::vector<float> bias = {0, 0.5f, 1, 0};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  routeLearned(s, bias, kRouteScale, ids, w);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2}));
  // 1.5/2.5·1.5 and 1/2.5·1.5, two fp32 roundings each.
  EXPECT_NEAR(w[0], 0.9, 2 * kU32 * 0.9);
  EXPECT_NEAR(w[1], 0.6, 2 * kU32 * 0.6);
}

TEST(RouteHash, TakesTheTokensRow) {
  // tid2eid [3 tokens, 2]; token 2 → experts (3, 0) in the row's order, the
  // weights from the scores: s_3/(s_3 + s_0) = 4/5 and 1/5, times 1.5.
  const std::vector<int32_t> tid2eid = {0, 1, 2, 3, 3, 0};
  const std::vector<float> s = {1, 9, 9, 4};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  routeHash(s, tid2eid, 2, kRouteScale, ids, w);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 0}));
  EXPECT_NEAR(w[0], 1.2, 2 * kU32 * 1.2);
  EXPECT_NEAR(w[1], 0.3, 2 * kU32 * 0.3);
}

TEST(RoutingDeathTest, RejectsTokensOutsideTheTable) {
  const std::vector<int32_t> tid2eid = {0, 1, 2, 3};
  const std::vector<float> s = {1, 1, 1, 1};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  EXPECT_DEATH(routeHash(s, tid2eid, 2, kRouteScale, ids, w),
               "outside the table");
}

double silu(double g) { return g / (1 + std::exp(-g)); }

TEST(Swiglu, ClampsUpBothWaysAndGateFromAbove) {
  // limit 10, routing weight 0.5:
  //   g 12 → 10, u −15 → −10:  silu(10)·(−10)·0.5
  //   g −50 stays (no lower clamp on the gate), u 15 → 10
  //   g 1, u 2: no clamp
  //   g 10.5 → 10, u −10.5 → −10
  //   g −12 stays, u 3: a symmetric gate clamp would use silu(−10) instead
  const std::vector<float> g = {12, -50, 1, 10.5f, -12};
  const std::vector<float> u = {-15, 15, 2, -10.5f, 3};
  const double clampedG[] = {10, -50, 1, 10, -12};
  const double clampedU[] = {-10, 10, 2, -10, 3};
  std::vector<float> h(5);
  swiglu(g, u, 10.0f, 0.5f, h);
  for (int i = 0; i < 5; ++i) {
    double expected = silu(clampedG[i]) * clampedU[i] * 0.5;
    // silu in fp64 rounded to fp32, two fp32 products, then bf16.
    EXPECT_NEAR(h[i], expected,
                bf16RoundingBound(expected) + 4 * kU32 * std::fabs(expected))
        << i;
    EXPECT_TRUE(isBf16(h[i])) << i;
  }
  EXPECT_NE(h[4], test::toBf16(silu(-10) * 3 * 0.5));
}

TEST(Swiglu, SharedExpertWeightOne) {
  // The tiny config's limit 2 (§9): g 3 → 2, u −2.5 → −2: silu(2)·(−2).
  const std::vector<float> g = {3};
  const std::vector<float> u = {-2.5f};
  std::vector<float> h(1);
  swiglu(g, u, 2.0f, 1.0f, h);
  double expected = silu(2) * -2;
  EXPECT_NEAR(h[0], expected,
              bf16RoundingBound(expected) + 4 * kU32 * std::fabs(expected));
}

} // namespace
} // namespace kf::deepseek_v4::reference
