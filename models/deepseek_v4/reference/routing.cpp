#include "kf/deepseek_v4/reference/routing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/choices.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

using internal::check;

float sqrtSoftplus(float z) {
  double x = z;
  // torch's softplus threshold (beta 1, threshold 20): above it, z itself.
  double softplus = x > 20 ? x : std::log1p(std::exp(x));
  return static_cast<float>(std::sqrt(softplus));
}

void topK(std::span<const float> values, std::span<int32_t> out) {
  check(out.size() <= values.size(), "top_k: k larger than the candidates");
  std::vector<int32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  for (float v : values)
    check(!std::isnan(v), "top_k: NaN value");
  // Larger value first; of equal values the lower index. This is a strict
  // total order, so std::sort gives one result on every platform.
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (values[a] != values[b])
      return values[a] > values[b];
    return a < b;
  });
  std::copy_n(order.begin(), out.size(), out.begin());
}

TopKGap topKGap(std::span<const float> values, size_t k) {
  check(k >= 1 && k <= values.size(), "top_k_gap: k outside [1, values]");
  std::vector<float> sorted(values.begin(), values.end());
  const size_t ranked = std::min(k + 1, sorted.size());
  std::partial_sort(sorted.begin(),
                    sorted.begin() + static_cast<std::ptrdiff_t>(ranked),
                    sorted.end(), std::greater<float>());
  TopKGap gap{.lastPicked = sorted[k - 1]};
  if (k < sorted.size() && sorted[k] != -std::numeric_limits<float>::infinity())
    gap.margin = sorted[k - 1] - sorted[k];
  return gap;
}

void routingWeights(std::span<const float> scores, std::span<const int32_t> ids,
                    float routeScale, std::span<float> weights) {
  check(weights.size() == ids.size() && !ids.empty(),
        "routing_weights: one weight per id");
  double sum = 0;
  for (int32_t id : ids) {
    check(id >= 0 && static_cast<size_t>(id) < scores.size(),
          "routing_weights: expert id out of range");
    sum += scores[id];
  }
  float total = static_cast<float>(sum);
  for (size_t j = 0; j < ids.size(); ++j)
    weights[j] = scores[ids[j]] / total * routeScale;
}

void routeLearned(std::span<const float> scores, std::span<const float> bias,
                  float routeScale, std::span<int32_t> ids,
                  std::span<float> weights) {
  check(bias.size() == scores.size(), "route_learned: one bias per expert");
  std::vector<float> biased(scores.size());
  for (size_t e = 0; e < scores.size(); ++e)
    biased[e] = scores[e] + bias[e];
  topK(biased, ids);
  routingWeights(scores, ids, routeScale, weights);
}

void routeHash(std::span<const float> scores, std::span<const int32_t> tid2eid,
               int64_t tokenId, float routeScale, std::span<int32_t> ids,
               std::span<float> weights) {
  size_t k = ids.size();
  check(k > 0 && tid2eid.size() % k == 0,
        "route_hash: tid2eid must be [vocab, k]");
  check(tokenId >= 0 && static_cast<size_t>(tokenId) < tid2eid.size() / k,
        "route_hash: token id outside the table");
  std::span<const int32_t> row =
      tid2eid.subspan(static_cast<size_t>(tokenId) * k, k);
  std::copy(row.begin(), row.end(), ids.begin());
  routingWeights(scores, ids, routeScale, weights);
}

void swiglu(std::span<const float> gate, std::span<const float> up, float limit,
            float weight, std::span<float> h, Precision precision) {
  check(up.size() == gate.size() && h.size() == gate.size(),
        "swiglu: gate, up and h must have the same length");
  for (size_t i = 0; i < gate.size(); ++i) {
    float g = std::min(gate[i], limit);         // gate: (−inf, limit]
    float u = std::clamp(up[i], -limit, limit); // up: [−limit, limit]
    float silu =
        static_cast<float>(g / (1.0 + std::exp(-static_cast<double>(g))));
    h[i] = hold(precision, silu * u * weight);
  }
}

} // namespace kf::deepseek_v4::reference
