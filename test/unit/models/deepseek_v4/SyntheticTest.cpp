// Synthetic weights: values that depend on (seed, tensor, row) only, the
// distributions of docs/models/deepseek_v4.md, index-score weights that
// lean positive, and the wide margins' routing bias and head.
#include <cmath>
#include <set>
#include <vector>

#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/synthetic.h"
#include "gmock/gmock.h"

namespace kf::deepseek_v4 {
namespace {

const Config &tiny() {
  static const Config config = preset("tiny")->config;
  return config;
}

TensorSpec spec(const std::string &name) {
  for (TensorSpec &s : tensorSpecs(tiny()))
    if (s.name == name)
      return s;
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

std::vector<float> drawRow(const std::string &name, uint64_t seed,
                           int64_t row) {
  TensorSpec s = spec(name);
  std::vector<float> out(s.shape[0]);
  TensorDraw(s, tiny(), seed).row(row, out);
  return out;
}

// Mean and standard deviation of the first `rows` rows.
std::pair<double, double> moments(const std::string &name, int64_t rows) {
  TensorSpec s = spec(name);
  TensorDraw draw(s, tiny(), 7);
  std::vector<float> row(s.shape[0]);
  double sum = 0, squares = 0;
  for (int64_t r = 0; r < rows; ++r) {
    draw.row(r, row);
    for (float x : row) {
      sum += x;
      squares += double{x} * x;
    }
  }
  double n = static_cast<double>(rows * s.shape[0]);
  double mean = sum / n;
  return {mean, std::sqrt(squares / n - mean * mean)};
}

TEST(Synthetic, ValuesDependOnSeedTensorAndRowOnly) {
  const std::string q = "blk.0.attn_q_a.weight";
  std::vector<float> row5 = drawRow(q, 1, 5);
  // Drawn alone, or after other rows, or by another TensorDraw: the same.
  TensorSpec s = spec(q);
  TensorDraw draw(s, tiny(), 1);
  std::vector<float> other(s.shape[0]);
  draw.row(9, other);
  draw.row(5, other);
  EXPECT_EQ(other, row5);
  EXPECT_NE(drawRow(q, 1, 6), row5);
  EXPECT_NE(drawRow(q, 2, 5), row5);
  EXPECT_NE(drawRow("blk.1.attn_q_a.weight", 1, 5), row5);
}

TEST(Synthetic, DistributionsFollowSpecSectionNine) {
  EXPECT_THAT(drawRow("blk.0.attn_norm.weight", 1, 0), ::testing::Each(1.0f));
  std::vector<float> scales = drawRow("blk.4.hc_ffn_scale.weight", 1, 0);
  EXPECT_THAT(scales, ::testing::Each(::testing::AllOf(::testing::Ge(0.1f),
                                                       ::testing::Lt(0.6f))));
  // HC mixes: N(0, 0.1) at the tiny preset's 1024-wide input.
  EXPECT_EQ(distribution(spec("blk.0.hc_attn_fn.weight")).stddev, 0.1f);
  auto [fn_mean, fn_std] = moments("blk.0.hc_attn_fn.weight", 24);
  EXPECT_NEAR(fn_mean, 0, 0.003);
  EXPECT_NEAR(fn_std, 0.1, 0.003);
  // Matrices: variance 1/fan-in.
  auto [q_mean, q_std] = moments("blk.0.attn_q_b.weight", 1536);
  EXPECT_NEAR(q_mean, 0, 0.001);
  EXPECT_NEAR(q_std, 1 / std::sqrt(128.0), 0.001);
  auto [down_mean, down_std] = moments("blk.3.ffn_down_exps.weight", 1024);
  EXPECT_NEAR(down_std, 1 / std::sqrt(128.0), 0.001);
  // The embedding's common offset.
  auto [e_mean, e_std] = moments("token_embd.weight", 1000);
  EXPECT_NEAR(e_mean, 1, 0.01);
  EXPECT_NEAR(e_std, 1, 0.01);
  // Router rows are centred.
  for (int64_t r = 0; r < 16; ++r) {
    std::vector<float> row = drawRow("blk.5.ffn_gate_inp.weight", 1, r);
    double sum = 0;
    for (float x : row)
      sum += x;
    EXPECT_NEAR(sum / row.size(), 0, 1e-7);
  }
}

TEST(Synthetic, NormalValuesAreBounded) {
  // Irwin-Hall of four uniforms: within 2·sqrt(3) standard deviations.
  TensorSpec s = spec("blk.0.attn_sinks.weight");
  EXPECT_EQ(distribution(s).stddev, 1.0f);
  std::vector<float> row(s.shape[0]);
  for (int64_t seed = 0; seed < 2000; ++seed) {
    TensorDraw(s, tiny(), seed).row(0, row);
    for (float x : row)
      ASSERT_LE(std::abs(x), 2 * std::sqrt(3.0f));
  }
}

TEST(Synthetic, Tid2EidRowsAreDistinctExperts) {
  TensorSpec s = spec("blk.1.ffn_gate_tid2eid.weight");
  ASSERT_EQ(s.shape, std::vector<int64_t>({4, 32256}));
  TensorDraw draw(s, tiny(), 1);
  std::vector<int32_t> row(4);
  std::vector<int> uses(16);
  for (int64_t token = 0; token < s.shape[1]; ++token) {
    draw.experts(token, row);
    std::set<int32_t> distinct(row.begin(), row.end());
    ASSERT_EQ(distinct.size(), 4u) << token;
    for (int32_t e : row) {
      ASSERT_GE(e, 0);
      ASSERT_LT(e, 16);
      ++uses[e];
    }
  }
  // Every expert is about equally likely: 32256·4/16 = 8064 uses each.
  EXPECT_THAT(uses, ::testing::Each(::testing::AllOf(::testing::Gt(7700),
                                                     ::testing::Lt(8400))));
  // As floats, row() gives the same ids.
  std::vector<float> asFloats(4);
  draw.row(3, asFloats);
  draw.experts(3, row);
  EXPECT_THAT(asFloats, ::testing::ElementsAre(row[0], row[1], row[2], row[3]));
}

TEST(Synthetic, IndexScoreWeightsLeanPositive) {
  // w = x·proj for the normed embedding rows x of the first CSA layer's
  // input: positive for almost every (token, head), so index scores
  // Σ w·ReLU(q·k) are positive and rarely tie at zero.
  TensorSpec embd = spec("token_embd.weight");
  TensorSpec proj = spec("blk.2.indexer.proj.weight");
  TensorDraw embdDraw(embd, tiny(), 1), projDraw(proj, tiny(), 1);
  std::vector<std::vector<float>> heads(proj.shape[1], std::vector<float>(256));
  for (int64_t h = 0; h < proj.shape[1]; ++h)
    projDraw.row(h, heads[h]);
  std::vector<float> x(256);
  int positive = 0, total = 0;
  for (int64_t token = 0; token < 2000; ++token) {
    embdDraw.row(token, x);
    double squares = 0;
    for (float v : x)
      squares += double{v} * v;
    double inverseRms = 1 / std::sqrt(squares / 256);
    for (const std::vector<float> &head : heads) {
      double w = 0;
      for (int i = 0; i < 256; ++i)
        w += head[i] * x[i] * inverseRms;
      positive += w > 0;
      ++total;
    }
  }
  EXPECT_GT(positive, total * 999 / 1000) << positive << " of " << total;
}

TEST(Synthetic, WideMarginsFavourKExpertsALayer) {
  const float bound = 0.05f * 2 * std::sqrt(3.0f); // the N(0, 0.05) part
  std::set<std::vector<size_t>> sets;
  for (const char *name : {"blk.3.exp_probs_b.bias", "blk.4.exp_probs_b.bias",
                           "blk.5.exp_probs_b.bias"}) {
    TensorSpec s = spec(name);
    std::vector<float> row(s.shape[0]);
    TensorDraw(s, tiny(), 1, Margins::Wide).row(0, row);
    std::vector<size_t> favoured;
    for (size_t e = 0; e < row.size(); ++e) {
      if (row[e] > 1.5f) {
        EXPECT_GE(row[e], 3.0f - bound) << name << " expert " << e;
        favoured.push_back(e);
      } else {
        EXPECT_LE(std::abs(row[e]), bound) << name << " expert " << e;
      }
    }
    EXPECT_EQ(favoured.size(), tiny().nExpertUsed) << name;
    sets.insert(favoured);
  }
  EXPECT_EQ(sets.size(), 3u) << "each layer favours experts of its own";
  // The natural draw favours none.
  EXPECT_EQ(distribution(spec("blk.3.exp_probs_b.bias")).shape,
            Distribution::Shape::Normal);
}

TEST(Synthetic, WideMarginsHeadRowsAreEmbeddingRowsOfTheCycle) {
  const TensorSpec embd = spec("token_embd.weight");
  const TensorSpec head = spec("output.weight");
  const size_t d = static_cast<size_t>(embd.shape[0]);
  TensorDraw embdDraw(embd, tiny(), 4, Margins::Wide);
  TensorDraw headDraw(head, tiny(), 4, Margins::Wide);
  const VocabularyCycle sigma(tiny().nVocab, 4);
  std::vector<float> e(d), h(d);
  for (int64_t t : {0, 1, 777, 32255}) {
    headDraw.row(t, h);
    embdDraw.row(static_cast<int64_t>(sigma(static_cast<uint64_t>(t))), e);
    // N(1, 3²) centred and scaled to N(0, 1/D).
    double mean = 0;
    for (float x : e)
      mean += x / static_cast<double>(d);
    for (size_t i = 0; i < d; ++i)
      ASSERT_NEAR(h[i], (e[i] - mean) / 3 / std::sqrt(double(d)), 1e-5)
          << "row " << t << ", column " << i;
  }
}

TEST(Synthetic, VocabularyCycleVisitsEveryTokenOnce) {
  for (uint64_t v : {1ull, 2ull, 1009ull, 32256ull, 129280ull}) {
    for (uint64_t seed : {0ull, 1ull, 99ull}) {
      const VocabularyCycle sigma(v, seed);
      std::vector<bool> seen(v);
      uint64_t t = 0;
      for (uint64_t i = 0; i < v; ++i) {
        ASSERT_FALSE(seen[t]) << "V " << v << ", seed " << seed << ": " << t
                              << " again after " << i << " steps";
        seen[t] = true;
        t = sigma(t);
      }
      EXPECT_EQ(t, 0u) << "V " << v << ", seed " << seed;
    }
  }
}

} // namespace
} // namespace kf::deepseek_v4
