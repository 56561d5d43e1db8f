// The agreement of two engines' logits: KL(p || q) of their softmax against
// sums worked by hand, argmax agreement and the largest logit difference.
#include <cmath>
#include <vector>

#include "agreement.h"
#include "gmock/gmock.h"

namespace kf::run_tool {
namespace {

TEST(LogitsAgreement, IdenticalLogitsAgreeExactly) {
  LogitsAgreement a;
  std::vector<float> x = {1.0f, -2.0f, 0.5f, 3.0f};
  a.add(x, x);
  EXPECT_EQ(a.positions, 1);
  EXPECT_EQ(a.argmaxEqual, 1);
  EXPECT_EQ(a.klMax, 0.0);
  EXPECT_EQ(a.maxAbsDiff, 0.0);
}

// p = softmax(0, 0) = (1/2, 1/2), q = softmax(0, log 3) = (1/4, 3/4):
// KL = 1/2 log 2 + 1/2 log(2/3) = 1/2 log(4/3). A shift of every logit by
// the same amount changes neither distribution.
TEST(LogitsAgreement, KlOfTwoPointDistributions) {
  LogitsAgreement a;
  const float log3 = static_cast<float>(std::log(3.0));
  std::vector<float> p = {0.0f, 0.0f}, q = {100.0f, 100.0f + log3};
  a.add(p, q);
  EXPECT_NEAR(a.meanKl(), 0.5 * std::log(4.0 / 3.0), 1e-6);
  // The first of equal logits is the argmax: 0 against 1.
  EXPECT_EQ(a.argmaxEqual, 0);
  EXPECT_NEAR(a.maxAbsDiff, 100.0 + log3, 1e-4);
  // A second position, identical, halves the mean and keeps the largest.
  a.add(p, p);
  EXPECT_EQ(a.positions, 2);
  EXPECT_NEAR(a.meanKl(), 0.25 * std::log(4.0 / 3.0), 1e-6);
  EXPECT_NEAR(a.klMax, 0.5 * std::log(4.0 / 3.0), 1e-6);
  EXPECT_DOUBLE_EQ(a.argmaxShare(), 0.5);
}

// Logits far apart (a vocabulary's worth of very negative ones) neither
// overflow nor lose the divergence.
TEST(LogitsAgreement, LargeLogitsStayFinite) {
  LogitsAgreement a;
  std::vector<float> p(1000, -1e4f), q(1000, -1e4f);
  p[7] = 80.0f;
  q[7] = 79.0f;
  a.add(p, q);
  EXPECT_TRUE(std::isfinite(a.meanKl()));
  EXPECT_NEAR(a.meanKl(), 0.0, 1e-12);
  EXPECT_EQ(a.argmaxEqual, 1);
}

} // namespace
} // namespace kf::run_tool
