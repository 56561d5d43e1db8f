#include "kf/deepseek_v4/reference/attention_layer.h"

#include <algorithm>
#include <random>
#include <vector>

#include "RandomModel.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

TEST(LayerRope, PlainOnWindowLayersYarnOnCompressedLayers) {
  Config config = test::tinyConfig();
  RopeConfig window = layerRope(config, 0);
  EXPECT_EQ(window.base, 10000);
  EXPECT_FALSE(window.yarn);
  for (uint32_t layer : {2, 3}) {
    RopeConfig compressed = layerRope(config, layer);
    EXPECT_EQ(compressed.base, 160000);
    EXPECT_TRUE(compressed.yarn);
    EXPECT_EQ(compressed.yarnFactor, 16);
    EXPECT_EQ(compressed.originalLen, 65536);
    EXPECT_EQ(yarnCorrectionRange(compressed).lo, 15);
    EXPECT_EQ(yarnCorrectionRange(compressed).hi, 25);
  }
}

// Random bf16 block inputs [tokens, D] at unit scale.
std::vector<float> randomInputs(const Config &config, size_t tokens,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(tokens * config.nEmbd);
  for (float &v : x)
    v = roundBf16(normal(rng));
  return x;
}

// For the window-only (0), CSA (2) and HCA (3) layers of the tiny model,
// with and without the simulations: the output of the token at position T
// is the same from a prefill of T + 1 tokens as from a prefill of T tokens
// and a decode, bit for bit (ForwardTest.cpp derives why the tolerance is
// zero). T crosses the window (16), ratio-4 and ratio-128 block ends.
TEST(AttentionLayer, DecodeAfterPrefillEqualsALongerPrefill) {
  Config config = test::tinyConfig();
  Weights weights = test::randomWeights(config, 11);
  size_t nEmbd = config.nEmbd;
  for (bool simulate : {false, true})
    for (uint32_t l : {0, 2, 3}) {
      Options options{.simulateQuantization = simulate};
      AttentionLayer layer(config, weights.layer(l), l, options);
      for (size_t t : {3, 15, 16, 19, 127, 128, 140}) {
        std::vector<float> x = randomInputs(config, t + 1, 50 + t);
        std::vector<float> longer = layer.prefill(x);
        layer.prefill(std::span<const float>(x).first(t * nEmbd));
        std::vector<float> decoded =
            layer.decode(std::span<const float>(x).subspan(t * nEmbd, nEmbd),
                         static_cast<int64_t>(t));
        EXPECT_TRUE(std::equal(decoded.begin(), decoded.end(),
                               longer.end() - static_cast<ptrdiff_t>(nEmbd)))
            << "layer " << l << ", T = " << t << ", simulate " << simulate;
      }
    }
}

// Two decodes in a row keep the ring and the compressor states in step with
// a prefill: the last of 20 prefilled tokens equals prefill 17 + decode 3.
TEST(AttentionLayer, ConsecutiveDecodesFollowThePrefill) {
  Config config = test::tinyConfig();
  Weights weights = test::randomWeights(config, 12);
  size_t nEmbd = config.nEmbd;
  std::vector<float> x = randomInputs(config, 20, 3);
  for (uint32_t l : {0, 2, 3}) {
    AttentionLayer layer(config, weights.layer(l), l, Options{});
    std::vector<float> longer = layer.prefill(x);
    layer.prefill(std::span<const float>(x).first(17 * nEmbd));
    std::vector<float> decoded;
    for (size_t t = 17; t < 20; ++t)
      decoded =
          layer.decode(std::span<const float>(x).subspan(t * nEmbd, nEmbd),
                       static_cast<int64_t>(t));
    EXPECT_TRUE(std::equal(decoded.begin(), decoded.end(),
                           longer.end() - static_cast<ptrdiff_t>(nEmbd)))
        << "layer " << l;
  }
}

} // namespace
} // namespace kf::deepseek_v4::reference
