// A tiny DeepSeek-V4 model with random weights, built in memory for the
// reference's forward-pass tests. Section numbers (§) are those of
// docs/models/deepseek_v4_model.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/reference/weights.h"
#include "kf/deepseek_v4/tensors.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference::test {

// Model §9's tiny configuration with its 2048-token vocabulary: the
// preset's dimensions, ratios [0, 0, 4, 128, 4, 128, 4], window 16.
inline Config tinyConfig() {
  Config c = preset("tiny")->config;
  c.nVocab = 2048;
  c.bosToken = 0;
  c.eosToken = 1;
  return c;
}

// Random weights drawn as model §9 advises: unit-scale activations
// (projections N(0, 1/in)), norms near 1, hc scales in [0.1, 0.6] and
// hc fn and base N(0, 0.1), a small gate bias, tid2eid rows of distinct
// experts.
inline Weights randomWeights(const Config &config, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Weights::FloatTensors floats;
  Weights::IntTensors integers;
  for (const TensorSpec &spec : tensorSpecs(config)) {
    size_t n = static_cast<size_t>(spec.elements());
    if (spec.kind == TensorKind::Tid2Eid) {
      std::vector<int32_t> table;
      std::vector<int32_t> experts(config.nExpert);
      for (int64_t token = 0; token < spec.rows(); ++token) {
        for (size_t e = 0; e < experts.size(); ++e)
          experts[e] = static_cast<int32_t>(e);
        std::shuffle(experts.begin(), experts.end(), rng);
        table.insert(table.end(), experts.begin(),
                     experts.begin() + config.nExpertUsed);
      }
      integers[spec.name] = std::move(table);
      continue;
    }
    float sigma = 0.1f; // hc fn and base, gate bias, ape
    float offset = 0;
    switch (spec.kind) {
    case TensorKind::Embedding:
    case TensorKind::Sinks:
      sigma = 1;
      break;
    case TensorKind::Norm:
      sigma = 0.1f;
      offset = 1;
      break;
    case TensorKind::HcScale:
      sigma = 0;
      break;
    case TensorKind::HcFn:
    case TensorKind::HcBase:
    case TensorKind::GateBias:
    case TensorKind::CompressorApe:
      break;
    default: // matrices: N(0, 1/in) keeps outputs at unit scale
      sigma = 1.0f / std::sqrt(static_cast<float>(spec.shape[0]));
    }
    std::vector<float> values(n);
    for (float &v : values)
      v = spec.kind == TensorKind::HcScale ? 0.1f + 0.5f * uniform(rng)
                                           : offset + sigma * normal(rng);
    floats[spec.name] = std::move(values);
  }
  absl::StatusOr<Weights> weights =
      Weights::fromFp32(config, std::move(floats), std::move(integers));
  EXPECT_TRUE(weights.ok()) << weights.status();
  return *std::move(weights);
}

inline std::vector<int32_t> randomTokens(const Config &config, size_t n,
                                         uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(
      0, static_cast<int32_t>(config.nVocab) - 1);
  std::vector<int32_t> tokens(n);
  for (int32_t &t : tokens)
    t = token(rng);
  return tokens;
}

} // namespace kf::deepseek_v4::reference::test
