#include "kf/deepseek_v4/reference/moe.h"

#include "internal.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/routing.h"

namespace kf::deepseek_v4::reference {

using internal::check;

std::vector<float> gateScores(std::span<const float> x,
                              const LayerWeights &weights,
                              const Options &options) {
  std::vector<float> s(weights.ffnGateInp.size() / x.size());
  linear(LinearRole::Router, x, weights.ffnGateInp, options, s);
  for (float &v : s)
    v = sqrtSoftplus(v);
  return s;
}

std::vector<float>
expertFfn(std::span<const float> x, std::span<const float> w1,
          std::span<const float> w3, std::span<const float> w2, float limit,
          float weight, LinearRole role, const Options &options) {
  check(w1.size() == w3.size() && w1.size() % x.size() == 0 &&
            w2.size() == w1.size(),
        "expert_ffn: w1 and w3 [F][D], w2 [D][F]");
  std::vector<float> g(w1.size() / x.size()), u(g.size());
  linear(role, x, w1, options, g);
  linear(role, x, w3, options, u);
  swiglu(g, u, limit, weight, g, options.precision); // h, bf16
  std::vector<float> y(x.size());
  linear(role, g, w2, options, y);
  return y;
}

std::vector<float> moe(const Config &config, const LayerWeights &weights,
                       uint32_t layer, std::span<const float> x, int32_t token,
                       int64_t position, const Options &options) {
  size_t nEmbd = config.nEmbd, ff = config.nFfExp;
  check(x.size() == nEmbd, "moe: x must be [D]");
  std::vector<float> s = gateScores(x, weights, options);
  std::vector<int32_t> ids(config.nExpertUsed);
  std::vector<float> route(ids.size());
  if (config.hashRouted(layer))
    routeHash(s, weights.tid2eid, token, config.routeScale, ids, route);
  else
    routeLearned(s, weights.expProbsB, config.routeScale, ids, route);
  if (options.choices) {
    // Hash routing has no alternative; learned routing ranks s + bias.
    TopKGap gap;
    if (!config.hashRouted(layer)) {
      std::vector<float> biased(s.size());
      for (size_t e = 0; e < s.size(); ++e)
        biased[e] = s[e] + weights.expProbsB[e];
      gap = topKGap(biased, ids.size());
    }
    options.choices->push_back(
        {Choice::Kind::Experts, layer, position, ids, gap});
  }

  std::vector<double> sum(nEmbd, 0.0); // fp32 accumulation, or better
  size_t expertSize = ff * nEmbd;
  for (size_t j = 0; j < ids.size(); ++j) {
    size_t e = static_cast<size_t>(ids[j]);
    std::vector<float> y =
        expertFfn(x, weights.ffnGateExps.subspan(e * expertSize, expertSize),
                  weights.ffnUpExps.subspan(e * expertSize, expertSize),
                  weights.ffnDownExps.subspan(e * expertSize, expertSize),
                  config.swigluClampExp.at(layer), route[j],
                  LinearRole::RoutedExpert, options);
    for (size_t d = 0; d < nEmbd; ++d)
      sum[d] += y[d];
  }
  std::vector<float> shared =
      expertFfn(x, weights.ffnGateShexp, weights.ffnUpShexp,
                weights.ffnDownShexp, config.swigluClampShexp.at(layer), 1.0f,
                LinearRole::SharedExpert, options);
  std::vector<float> out(nEmbd);
  for (size_t d = 0; d < nEmbd; ++d)
    out[d] = hold(options.precision, static_cast<float>(sum[d] + shared[d]));
  return out;
}

} // namespace kf::deepseek_v4::reference
