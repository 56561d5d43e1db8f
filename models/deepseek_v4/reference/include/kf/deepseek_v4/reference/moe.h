// DeepSeek-V4 golden reference: the mixture-of-experts sublayer
// (docs/models/deepseek_v4_model.md §4.5, precisions §8).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/linear_roles.h"
#include "kf/deepseek_v4/reference/options.h"
#include "kf/deepseek_v4/reference/weights.h"

namespace kf::deepseek_v4::reference {

// The gate scores s = sqrt(softplus(x · gateᵀ)) of §4.5, fp32. [E]
std::vector<float> gateScores(std::span<const float> x,
                              const LayerWeights &weights,
                              const Options &options = {});

// One expert's SwiGLU FFN for one token (§4.5): g = Lin_w1(x),
// u = Lin_w3(x), h = swiglu(g, u, limit, weight) in bf16, returns
// Lin_w2(h) [D]. w1, w3 [F][D], w2 [D][F]. The routing weight is applied
// before w2; the shared expert passes 1. `role`: RoutedExpert or
// SharedExpert.
std::vector<float>
expertFfn(std::span<const float> x, std::span<const float> w1,
          std::span<const float> w3, std::span<const float> w2, float limit,
          float weight, LinearRole role, const Options &options);

// MoE_l(x, token) of §4.5 for one token: routing by tid2eid on hash layers
// (layer < hashLayers) or by the top k of s + bias, weights s[I]/Σ s[I] ·
// route_scale; the routed experts' outputs weighted and summed with the
// shared expert's in fp32; the result in bf16 [D]. The experts are recorded
// in options.choices, if any, as the choice of the token at `position`.
std::vector<float> moe(const Config &config, const LayerWeights &weights,
                       uint32_t layer, std::span<const float> x, int32_t token,
                       int64_t position, const Options &options);

} // namespace kf::deepseek_v4::reference
