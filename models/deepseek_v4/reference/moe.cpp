#include "kf/deepseek_v4/reference/moe.h"

#include "internal.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/routing.h"

namespace kf::deepseek_v4::reference {

using internal::check;

std::vector<float> gate_scores(std::span<const float> x,
                               const LayerWeights &weights,
                               const Options &options) {
  std::vector<float> s(weights.ffn_gate_inp.size() / x.size());
  linear(LinearRole::Router, x, weights.ffn_gate_inp, options, s);
  for (float &v : s)
    v = sqrt_softplus(v);
  return s;
}

std::vector<float>
expert_ffn(std::span<const float> x, std::span<const float> w1,
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
                       const Options &options) {
  size_t n_embd = config.n_embd, ff = config.n_ff_exp;
  check(x.size() == n_embd, "moe: x must be [D]");
  std::vector<float> s = gate_scores(x, weights, options);
  std::vector<int32_t> ids(config.n_expert_used);
  std::vector<float> route(ids.size());
  if (config.hash_routed(layer))
    route_hash(s, weights.tid2eid, token, config.route_scale, ids, route);
  else
    route_learned(s, weights.exp_probs_b, config.route_scale, ids, route);

  std::vector<double> sum(n_embd, 0.0); // fp32 accumulation, or better
  size_t expert_size = ff * n_embd;
  for (size_t j = 0; j < ids.size(); ++j) {
    size_t e = static_cast<size_t>(ids[j]);
    std::vector<float> y = expert_ffn(
        x, weights.ffn_gate_exps.subspan(e * expert_size, expert_size),
        weights.ffn_up_exps.subspan(e * expert_size, expert_size),
        weights.ffn_down_exps.subspan(e * expert_size, expert_size),
        config.swiglu_clamp_exp.at(layer), route[j], LinearRole::RoutedExpert,
        options);
    for (size_t d = 0; d < n_embd; ++d)
      sum[d] += y[d];
  }
  std::vector<float> shared =
      expert_ffn(x, weights.ffn_gate_shexp, weights.ffn_up_shexp,
                 weights.ffn_down_shexp, config.swiglu_clamp_shexp.at(layer),
                 1.0f, LinearRole::SharedExpert, options);
  std::vector<float> out(n_embd);
  for (size_t d = 0; d < n_embd; ++d)
    out[d] = hold(options.precision, static_cast<float>(sum[d] + shared[d]));
  return out;
}

} // namespace kf::deepseek_v4::reference
