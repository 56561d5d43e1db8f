// DeepSeek-V4 golden reference: MoE gating and the expert activation
// (docs/models/deepseek_v4_model.md §4.5, precisions §8: gating and SwiGLU
// are fp32).
#pragma once

#include <cstdint>
#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

// §1: routed_scaling_factor.
inline constexpr float kRouteScale = 1.5f;

// One gate score from its logit z (§4.5): s = sqrt(softplus(z)), where
// softplus follows torch: log(1 + e^z), and z itself for z > 20. Evaluated in
// fp64 and rounded to fp32 once.
float sqrtSoftplus(float z);

// The top k of `values` by value, written to `out` (k = out.size()) in
// descending order. The one deterministic tie-break of the reference, used
// for every discrete choice (MoE experts, indexer entries): of equal values
// the lower index wins (docs/architecture.md, "Models"; §4.4 and §10 explain
// why torch.topk's arbitrary choice is not reproducible). −inf values take part
// like any other. The values must not be NaN.
void topK(std::span<const float> values, std::span<int32_t> out);

// The routing weights of experts `ids` (§4.5): s[id] / Σ s[ids] ·
// route_scale, in fp32, from the unbiased scores — for learned and hash
// routing alike.
void routingWeights(std::span<const float> scores, std::span<const int32_t> ids,
                    float routeScale, std::span<float> weights);

// Learned routing (layers ≥ n_hash_layers, §4.5): ids = top_k(s + bias) with
// k = ids.size(); the bias only affects this selection, the weights are
// routing_weights(scores, ids). scores and bias [n_experts].
void routeLearned(std::span<const float> scores, std::span<const float> bias,
                  float routeScale, std::span<int32_t> ids,
                  std::span<float> weights);

// Hash routing (layers < n_hash_layers, §4.5): ids = tid2eid[tokenId], the
// table's row of k = ids.size() experts, in the row's order; the weights are
// routing_weights(scores, ids). tid2eid is [vocab, k] row-major; its entries
// must lie in [0, n_experts).
void routeHash(std::span<const float> scores, std::span<const int32_t> tid2eid,
               int64_t tokenId, float routeScale, std::span<int32_t> ids,
               std::span<float> weights);

// The expert activation of §4.5 for one expert and one token, fp32:
// h = bf16(silu(min(g, limit)) · clamp(u, −limit, limit) · weight), with
// g = the w1 (gate) output, u = the w3 (up) output, weight = the routing
// weight (1 for the shared expert, which has the same clamp). The result is
// rounded to bf16 because w2 reads it in bf16 (not under Precision::F32).
// `h` may alias `gate` or `up`.
void swiglu(std::span<const float> gate, std::span<const float> up, float limit,
            float weight, std::span<float> h,
            Precision precision = Precision::Model);

} // namespace kf::deepseek_v4::reference
