// The grid search's classes and envelopes (quant/iq_grid_search.h).
#include "quant/iq_grid_search.h"

#include <algorithm>

namespace kf::quant::iq {

GridClasses classify(std::span<const std::array<int, 8>> entries) {
  GridClasses c;
  std::vector<std::array<int, 2>> keys; // (n, S) of each class
  std::vector<int> classOf;
  for (const std::array<int, 8> &v : entries) {
    std::array<int, 2> key{0, 0};
    for (int x : v) {
      key[0] += x * x;
      key[1] += x;
    }
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end())
      it = keys.insert(keys.end(), key);
    classOf.push_back(static_cast<int>(it - keys.begin()));
  }
  c.count = static_cast<int>(keys.size());
  for (int k = 0; k < c.count; ++k) {
    c.norm[k] = static_cast<float>(keys[k][0]);
    c.sum[k] = static_cast<float>(keys[k][1]);
    c.begin[k] = static_cast<int>(c.order.size());
    for (size_t e = 0; e < entries.size(); ++e)
      if (classOf[e] == k)
        c.order.push_back(static_cast<uint16_t>(e));
  }
  c.begin[c.count] = static_cast<int>(c.order.size());
  return c;
}

std::vector<int> bySlope(std::span<const float> a) {
  std::vector<int> order(a.size());
  for (size_t k = 0; k < a.size(); ++k)
    order[k] = static_cast<int>(k);
  std::sort(order.begin(), order.end(),
            [&](int i, int j) { return a[i] != a[j] ? a[i] > a[j] : i < j; });
  return order;
}

Envelope lowerEnvelope(std::span<const int> bySlope, const float *a,
                       const float *p, const uint16_t *entry,
                       const uint8_t *signs) {
  int first = bySlope[0];
  for (int k : bySlope)
    if (p[k] > p[first] || (p[k] == p[first] && a[k] < a[first]))
      first = k;
  Envelope env;
  // Line m is useless between l and r (a_l > a_m > aR) when r meets l at
  // s = 2 (p_l - pR) / (a_l - aR) no later than m does.
  auto useless = [&](int l, int m, float aR, float pR) {
    return (env.p[l] - pR) * (env.a[l] - env.a[m]) <=
           (env.p[l] - env.p[m]) * (env.a[l] - aR);
  };
  for (int k : bySlope) {
    if (a[k] > a[first])
      continue;
    if (env.count > 0 && env.a[env.count - 1] == a[k]) {
      if (p[k] <= env.p[env.count - 1])
        continue; // parallel and above
      --env.count;
    }
    while (env.count >= 2 && useless(env.count - 2, env.count - 1, a[k], p[k]))
      --env.count;
    env.a[env.count] = a[k];
    env.p[env.count] = p[k];
    env.entry[env.count] = entry[k];
    env.signs[env.count] = signs[k];
    ++env.count;
  }
  return env;
}

} // namespace kf::quant::iq
