#include "kf/deepseek_v4/reference/moe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ModelTestUtil.h"
#include "TestUtil.h"
#include "kf/deepseek_v4/tensors.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::toBf16;

constexpr LinearRole kRouted = LinearRole::RoutedExpert;
const Options kNoSim{.simulateQuantization = false};

TEST(ExpertFfn, HandComputedWithTheClampAndTheRoutingWeight) {
  // D = 2, F = 1, x = (1, −1): g = x·(2, 0) = 2, u = x·(0, 3) = −3,
  // weight 0.5.
  // Limit 10: h = bf16(silu(2)·(−3)·0.5), silu(2) = 2/(1 + e^−2) =
  // 1.7615942; h = bf16(−2.6423913) = −2.640625; y = (h, 2h).
  // Limit 2 clamps u to −2: h = bf16(−1.7615942) = −1.7578125.
  const std::vector<float> x = {1, -1};
  const std::vector<float> w1 = {2, 0}, w3 = {0, 3}, w2 = {1, 2};
  std::vector<float> y = expertFfn(x, w1, w3, w2, 10, 0.5f, kRouted, kNoSim);
  EXPECT_EQ(y, (std::vector<float>{-2.640625f, -5.28125f}));
  y = expertFfn(x, w1, w3, w2, 2, 0.5f, kRouted, kNoSim);
  EXPECT_EQ(y, (std::vector<float>{-1.7578125f, -3.515625f}));
}

// microConfig (D 64, E 8, k 2, F 32) with zero gate weights, so every
// score is sqrt(ln 2) and each of the k routing weights is 1.5/2 = 0.75;
// expert e's matrices are e + 1 times one random set, so the output names
// the experts used.
class Moe : public ::testing::Test {
protected:
  void SetUp() override {
    config_ = testing::microConfig();
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 0.2f);
    auto draw = [&](size_t n) {
      std::vector<float> v(n);
      for (float &e : v)
        e = normal(rng);
      return v;
    };
    size_t d = config_.nEmbd, f = config_.nFfExp;
    w1_ = draw(f * d), w3_ = draw(f * d), w2_ = draw(d * f);
    Weights::FloatTensors floats;
    Weights::IntTensors integers;
    for (const TensorSpec &spec : tensorSpecs(config_)) {
      size_t n = static_cast<size_t>(spec.elements());
      if (spec.kind == TensorKind::Tid2Eid) {
        std::vector<int32_t> table(n);
        for (size_t i = 0; i < n; i += 2) { // every token: experts 6, 1
          table[i] = 6;
          table[i + 1] = 1;
        }
        integers[spec.name] = table;
        continue;
      }
      floats[spec.name] = std::vector<float>(n, 0.0f);
    }
    for (uint32_t l = 0; l < config_.nLayer; ++l) {
      auto name = [&](const char *role) {
        return "blk." + std::to_string(l) + "." + role + ".weight";
      };
      std::vector<float> &gate = floats[name("ffn_gate_exps")];
      std::vector<float> &up = floats[name("ffn_up_exps")];
      std::vector<float> &down = floats[name("ffn_down_exps")];
      for (size_t e = 0; e < config_.nExpert; ++e)
        for (size_t i = 0; i < f * d; ++i) {
          float scale = static_cast<float>(e + 1);
          gate[e * f * d + i] = w1_[i] * scale;
          up[e * f * d + i] = w3_[i] * scale;
          down[e * f * d + i] = w2_[i] * scale;
        }
      floats[name("ffn_gate_shexp")] = w1_;
      floats[name("ffn_up_shexp")] = w3_;
      floats[name("ffn_down_shexp")] = w2_;
    }
    // Layer 3 routes by the biased scores: experts 2 and 5.
    floats["blk.3.exp_probs_b.bias"] = {0, 0, 1, 0, 0, 0.5f, 0, 0};
    weights_.emplace(
        *Weights::fromFp32(config_, std::move(floats), std::move(integers)));
    x_ = draw(d);
  }

  // bf16(Σ_j expert_ffn(expert ids[j], 0.75) + the shared expert).
  std::vector<float> expected(uint32_t layer, std::vector<int> ids) const {
    size_t d = config_.nEmbd;
    std::vector<double> sum(d, 0.0);
    for (int e : ids) {
      std::vector<float> w1(w1_), w3(w3_), w2(w2_);
      for (auto *w : {&w1, &w3, &w2})
        for (float &v : *w)
          v *= static_cast<float>(e + 1);
      std::vector<float> y =
          expertFfn(x_, w1, w3, w2, config_.swigluClampExp[layer], 0.75f,
                    kRouted, kNoSim);
      for (size_t i = 0; i < d; ++i)
        sum[i] += y[i];
    }
    std::vector<float> shared =
        expertFfn(x_, w1_, w3_, w2_, config_.swigluClampShexp[layer], 1.0f,
                  LinearRole::SharedExpert, kNoSim);
    std::vector<float> out(d);
    for (size_t i = 0; i < d; ++i)
      out[i] =
          static_cast<float>(toBf16(static_cast<float>(sum[i] + shared[i])));
    return out;
  }

  Config config_;
  std::optional<Weights> weights_;
  std::vector<float> w1_, w3_, w2_, x_;
};

TEST_F(Moe, GateScoresAreSqrtSoftplus) {
  std::vector<float> s = gateScores(x_, weights_->layer(0));
  ASSERT_EQ(s.size(), size_t{8});
  for (float v : s)
    EXPECT_EQ(v, static_cast<float>(std::sqrt(std::log(2.0))));
}

TEST_F(Moe, HashLayersUseTheTokensExperts) {
  Options options{.simulateQuantization = false};
  ChoiceLog choices;
  options.choices = &choices;
  EXPECT_EQ(moe(config_, weights_->layer(0), 0, x_, 17, 9, options),
            expected(0, {6, 1}));
  // Recorded as a choice that could not have gone another way.
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].kind, Choice::Kind::Experts);
  EXPECT_EQ(choices[0].layer, 0u);
  EXPECT_EQ(choices[0].position, 9);
  EXPECT_EQ(choices[0].chosen, (std::vector<int32_t>{6, 1}));
  EXPECT_EQ(choices[0].gap.margin, std::numeric_limits<float>::infinity());
}

TEST_F(Moe, LearnedLayersChooseByTheBiasedScores) {
  Options options{.simulateQuantization = false};
  ChoiceLog choices;
  options.choices = &choices;
  EXPECT_EQ(moe(config_, weights_->layer(3), 3, x_, 17, 4, options),
            expected(3, {2, 5}));
  // Recorded with the gap between the second pick's s + bias and the best
  // expert left out.
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].layer, 3u);
  EXPECT_EQ(choices[0].position, 4);
  EXPECT_EQ(choices[0].chosen, (std::vector<int32_t>{2, 5}));
  std::vector<float> s = gateScores(x_, weights_->layer(3), options);
  float worstPicked = std::min(s[2] + weights_->layer(3).expProbsB[2],
                               s[5] + weights_->layer(3).expProbsB[5]);
  float bestLeft = -std::numeric_limits<float>::infinity();
  for (size_t e = 0; e < s.size(); ++e)
    if (e != 2 && e != 5)
      bestLeft = std::max(bestLeft, s[e] + weights_->layer(3).expProbsB[e]);
  EXPECT_EQ(choices[0].gap.margin, worstPicked - bestLeft);
  EXPECT_EQ(choices[0].gap.lastPicked, worstPicked);
  EXPECT_GT(choices[0].gap.margin, 0.0f);
}

} // namespace
} // namespace kf::deepseek_v4::reference
