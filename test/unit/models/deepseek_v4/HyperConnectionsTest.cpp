// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/hyper_connections.h"

#include <cmath>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::bf16RoundingBound;
using test::isBf16;
using test::kU32;

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// The Sinkhorn tolerance for the small hand cases: each entry goes through at
// most ~10 fp32 roundings (the logit, exp, sum, division, then a sum and a
// division per normalisation), and a normalisation x/Σx at most doubles the
// relative error of its inputs and adds one rounding. From ≈3 units after the
// softmax: 8 after the first column step, 18 and 38 after the next row and
// column. 64 units of 2^-24 covers two iterations.
constexpr double kSinkhornTwoIterationsTolerance = 64 * kU32;

TEST(Sinkhorn, HandComputedTwoIterations) {
  // eps = 0 keeps the hand computation in fractions. Logits
  // [[0, ln 3], [0, 0]]:
  //   softmax rows  [[1/4, 3/4], [1/2, 1/2]]
  //   columns /3/4, /5/4   → [[1/3, 3/5], [2/3, 2/5]]           (1 iteration)
  //   rows /14/15, /16/15  → [[5/14, 9/14], [5/8, 3/8]]
  //   columns /55/56, /57/56 → [[4/11, 12/19], [7/11, 7/19]]     (2 iterations)
  const float ln3 = static_cast<float>(std::log(3.0));
  std::vector<float> one = {0, ln3, 0, 0};
  sinkhorn(one, 2, 1, 0.0f);
  const double afterOne[] = {1.0 / 3, 3.0 / 5, 2.0 / 3, 2.0 / 5};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(one[i], afterOne[i],
                kSinkhornTwoIterationsTolerance * afterOne[i])
        << i;

  std::vector<float> two = {0, ln3, 0, 0};
  sinkhorn(two, 2, 2, 0.0f);
  const double afterTwo[] = {4.0 / 11, 12.0 / 19, 7.0 / 11, 7.0 / 19};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(two[i], afterTwo[i],
                kSinkhornTwoIterationsTolerance * afterTwo[i])
        << i;
}

TEST(Sinkhorn, EpsAfterSoftmaxAndInEveryDenominator) {
  // Uniform logits keep every entry equal to some x: softmax + eps gives
  // x = 1/4 + eps, and each of the 39 normalisations (1 + 19·2) maps
  // x → x/(4x + eps). That converges to (1 − eps)/4 = 0.25 − 2.5e-7, 8 fp32
  // ulps below 1/4 (without eps it would stay at exactly 1/4). The map
  // contracts strongly (its slope is eps/(4x + eps)² ≈ 1e-6), so only the
  // last step's roundings remain: 3 units of 2^-24.
  const double eps = 1e-6;
  double x = 0.25 + static_cast<float>(eps);
  for (int step = 0; step < 39; ++step)
    x = x / (4 * x + static_cast<float>(eps));
  std::vector<float> c(16, 0.5f);
  sinkhorn(c, 4, 20, static_cast<float>(eps));
  for (float v : c)
    EXPECT_NEAR(v, x, 3 * kU32 * x);
  EXPECT_LT(c[0], 0.25f);
}

// §4.1 step 6 in fp64, for the convergence check below.
std::vector<double> sinkhornFp64(const std::vector<double> &logits, int n,
                                 int iters, double eps) {
  std::vector<double> c(logits);
  for (int j = 0; j < n; ++j) {
    double max = logits[j * n];
    for (int k = 0; k < n; ++k)
      max = std::max(max, logits[j * n + k]);
    double sum = 0;
    for (int k = 0; k < n; ++k)
      sum += std::exp(logits[j * n + k] - max);
    for (int k = 0; k < n; ++k)
      c[j * n + k] = std::exp(logits[j * n + k] - max) / sum + eps;
  }
  auto columns = [&] {
    for (int k = 0; k < n; ++k) {
      double sum = 0;
      for (int j = 0; j < n; ++j)
        sum += c[j * n + k];
      for (int j = 0; j < n; ++j)
        c[j * n + k] /= sum + eps;
    }
  };
  auto rows = [&] {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k)
        sum += c[j * n + k];
      for (int k = 0; k < n; ++k)
        c[j * n + k] /= sum + eps;
    }
  };
  columns();
  for (int it = 1; it < iters; ++it) {
    rows();
    columns();
  }
  return c;
}

TEST(Sinkhorn, TwentyIterationsMakeTheMatrixDoublyStochastic) {
  std::vector<double> logits(16);
  for (int i = 0; i < 16; ++i)
    logits[i] = static_cast<float>(std::sin(1.7 * i + 0.3) * 2);
  std::vector<float> c(logits.begin(), logits.end());
  sinkhorn(c, 4, 20, 1e-6f);
  std::vector<double> exact = sinkhornFp64(logits, 4, 20, 1e-6);
  for (int j = 0; j < 4; ++j) {
    double row = 0, column = 0;
    for (int k = 0; k < 4; ++k) {
      row += c[j * 4 + k];
      column += c[k * 4 + j];
    }
    // The last step divides each column by its sum + eps: the column sums are
    // S/(S + eps) ≈ 1 − 1e-6, and fp32 adds ≤ 4 roundings of 2^-24.
    EXPECT_NEAR(column, 1, 1e-6 + 8 * kU32) << j;
    // Rows converge geometrically; 20 iterations leave these logits (in
    // [−2, 2]) far closer than 1e-5 to stochastic.
    EXPECT_NEAR(row, 1, 1e-5) << j;
  }
  // Sinkhorn's normalisations contract (in Hilbert's projective metric), so
  // fp32 rounding does not accumulate across the 39 steps: each entry stays
  // within a few ulps of the fp64 procedure; 1e-6 is about 30 ulps at 0.25.
  for (int i = 0; i < 16; ++i)
    EXPECT_NEAR(c[i], exact[i], 1e-6) << i;
}

// Streams s0 = (1, −1), s1 = (−1, 1), s2 = (1, 1), s3 = (−1, −1), times 2:
// every |Z| = 2, so r = 1/sqrt(4 + 1e-6).
std::vector<float> sampleStreams() { return {2, -2, -2, 2, 2, 2, -2, -2}; }

TEST(HcPre, HandComputed) {
  const int mult = 4, dim = 2, mix = (2 + mult) * mult;
  std::vector<float> streams = sampleStreams();
  const double r = 1 / std::sqrt(4 + 1e-6);
  // fn rows pick parts of Z = (2, −2, −2, 2, 2, 2, −2, −2):
  //   m_0 = 0.5·Z_0·r = r;   m_2 = 0.25·(Z_4 + Z_5)·r = r;
  //   m_4 = −1·Z_6·r = 2r;   m_9 = Z_1·r = −2r (C logit row 0, column 1);
  //   every other m is 0.
  std::vector<float> fn(mix * mult * dim, 0.0f);
  fn[0 * 8 + 0] = 0.5f;
  fn[2 * 8 + 4] = 0.25f;
  fn[2 * 8 + 5] = 0.25f;
  fn[4 * 8 + 6] = -1;
  fn[9 * 8 + 1] = 1;
  std::vector<float> base(mix);
  for (int i = 0; i < mix; ++i)
    base[i] = 0.125f * (i % 7) - 0.25f;
  const std::vector<float> scale = {0.5f, 2, 1.5f};
  std::vector<double> m(mix, 0.0);
  m[0] = r;
  m[2] = r;
  m[4] = 2 * r;
  m[9] = -2 * r;

  HcConfig config;
  std::vector<float> x(dim), post(mult), comb(mult * mult);
  hcPre(streams, {fn, base, scale}, config, x, post, comb);

  // Step 3: pre_j = sigmoid(scale0·m_j + base_j) + 1e-6.
  double pre[4];
  for (int j = 0; j < 4; ++j)
    pre[j] = sigmoid(scale[0] * m[j] + base[j]) + 1e-6;
  // Step 7: x = bf16(Σ_j pre_j·s_j); the pre_j carry a few fp32 roundings.
  for (int d = 0; d < dim; ++d) {
    double expected = 0, magnitude = 0;
    for (int j = 0; j < 4; ++j) {
      expected += pre[j] * streams[j * dim + d];
      magnitude += std::fabs(pre[j] * streams[j * dim + d]);
    }
    EXPECT_NEAR(x[d], expected,
                bf16RoundingBound(expected) + 8 * kU32 * magnitude)
        << d;
    EXPECT_TRUE(isBf16(x[d]));
  }
  // Step 4: post_j = 2·sigmoid(scale1·m_{4+j} + base_{4+j}).
  for (int j = 0; j < 4; ++j) {
    double expected = 2 * sigmoid(scale[1] * m[4 + j] + base[4 + j]);
    EXPECT_NEAR(post[j], expected, 8 * kU32 * expected) << j;
  }
  // Steps 5–6: logits C_jk = scale2·m_{8+4j+k} + base_{8+4j+k}, row j,
  // column k, then Sinkhorn (tested above). The logits differ from the fp32
  // ones by a few ulps, which Sinkhorn (Lipschitz) keeps within 1e-6.
  std::vector<double> logits(16);
  for (int jk = 0; jk < 16; ++jk)
    logits[jk] = scale[2] * m[8 + jk] + base[8 + jk];
  std::vector<double> expectedComb = sinkhornFp64(logits, 4, 20, 1e-6);
  for (int jk = 0; jk < 16; ++jk)
    EXPECT_NEAR(comb[jk], expectedComb[jk], 1e-6) << jk;
}

TEST(HcPost, HandComputed) {
  // mult 2, dim 3. New stream k = post_k·f + Σ_j C[j][k]·old_j:
  //   k = 0: 0.3·f + 0.25·old_0 + 0.75·old_1
  //   k = 1: 1.5·f + 0.5·old_0 + 0.5·old_1
  // e.g. element 0 of stream 0: 0.3 + 0.25 = 0.55 → bf16 0.55078125, and of
  // stream 1: 1.5 + 0.5 = 2. A transposed C (C[k][j]) would make element 1
  // of stream 0 0.6 + 0.5 instead of 0.6 + 0.75.
  const std::vector<float> f = {1, 2, 1};
  const std::vector<float> oldStreams = {1, 0, 1, 0, 1, 1};
  const std::vector<float> post = {0.3f, 1.5f};
  const std::vector<float> comb = {0.25f, 0.5f, 0.75f, 0.5f};
  std::vector<float> out(6);
  hcPost(f, oldStreams, post, comb, 2, out);
  const double expected[] = {0.3 + 0.25, 0.6 + 0.75, 0.3 + 0.25 + 0.75,
                             1.5 + 0.5,  3 + 0.5,    1.5 + 0.5 + 0.5};
  for (int i = 0; i < 6; ++i) {
    // post_0 = fl32(0.3) is 1.2e-8 off 0.3; the result is then one bf16
    // rounding of the fp32 value.
    EXPECT_NEAR(out[i], expected[i],
                bf16RoundingBound(expected[i]) + 4 * kU32 * expected[i])
        << i;
    EXPECT_TRUE(isBf16(out[i])) << i;
  }
  EXPECT_EQ(out[0], 0.55078125f);
  EXPECT_EQ(out[3], 2.0f);
}

TEST(HcHead, HandComputed) {
  // §3: pre_j = sigmoid(m_j·scale0 + base_j) + 1e-6, y = bf16(Σ pre_j·s_j).
  const int mult = 4, dim = 2;
  std::vector<float> streams = sampleStreams();
  const double r = 1 / std::sqrt(4 + 1e-6);
  // m_1 = 1·Z_3·r = 2r and m_3 = −0.5·(Z_0 + Z_2)·r = 0; others 0.
  std::vector<float> fn(mult * mult * dim, 0.0f);
  fn[1 * 8 + 3] = 1;
  fn[3 * 8 + 0] = -0.5f;
  fn[3 * 8 + 2] = -0.5f;
  const std::vector<float> base = {0.5f, -1, 0, 2};
  const std::vector<float> scale = {0.75f};
  const double m[4] = {0, 2 * r, 0, 0};
  std::vector<float> y(dim);
  hcHead(streams, {fn, base, scale}, HcConfig{}, y);
  for (int d = 0; d < dim; ++d) {
    double expected = 0, magnitude = 0;
    for (int j = 0; j < 4; ++j) {
      double pre = sigmoid(m[j] * scale[0] + base[j]) + 1e-6;
      expected += pre * streams[j * dim + d];
      magnitude += std::fabs(pre * streams[j * dim + d]);
    }
    EXPECT_NEAR(y[d], expected,
                bf16RoundingBound(expected) + 8 * kU32 * magnitude)
        << d;
    EXPECT_TRUE(isBf16(y[d]));
  }
}

// Stream j = (2j + 1, 2j + 2): Σ_j s_j = (16, 20).
std::vector<float> countingStreams() { return {1, 2, 3, 4, 5, 6, 7, 8}; }

TEST(HcPre, PreWeightsKeepEpsWhenTheSigmoidVanishes) {
  // fn = 0 and base −100 for the pre mixes: sigmoid(−100) ≈ 4e-44, so
  // pre_j = 1e-6 (+ eps, step 3) and x = bf16(1e-6 · (16, 20)).
  const int mult = 4, mix = (2 + mult) * mult;
  std::vector<float> fn(mix * 8, 0.0f), base(mix, 0.0f);
  for (int j = 0; j < mult; ++j)
    base[j] = -100;
  const std::vector<float> scale = {1, 1, 1};
  std::vector<float> x(2), post(mult), comb(mult * mult);
  hcPre(countingStreams(), {fn, base, scale}, HcConfig{}, x, post, comb);
  EXPECT_NEAR(x[0], 16e-6, bf16RoundingBound(16e-6) + 4 * kU32 * 16e-6);
  EXPECT_NEAR(x[1], 20e-6, bf16RoundingBound(20e-6) + 4 * kU32 * 20e-6);
}

TEST(HcHead, PreWeightsKeepEpsWhenTheSigmoidVanishes) {
  const int mult = 4;
  std::vector<float> fn(mult * 8, 0.0f), base(mult, -100.0f);
  const std::vector<float> scale = {1};
  std::vector<float> y(2);
  hcHead(countingStreams(), {fn, base, scale}, HcConfig{}, y);
  EXPECT_NEAR(y[0], 16e-6, bf16RoundingBound(16e-6) + 4 * kU32 * 16e-6);
  EXPECT_NEAR(y[1], 20e-6, bf16RoundingBound(20e-6) + 4 * kU32 * 20e-6);
}

TEST(HyperConnectionsDeathTest, RejectsWrongShapes) {
  std::vector<float> streams = sampleStreams();
  std::vector<float> fn(24 * 8 - 1), base(24), scale(3);
  std::vector<float> x(2), post(4), comb(16);
  EXPECT_DEATH(hcPre(streams, {fn, base, scale}, HcConfig{}, x, post, comb),
               "hc");
}

} // namespace
} // namespace kf::deepseek_v4::reference
