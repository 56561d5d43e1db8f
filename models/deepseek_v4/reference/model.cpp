#include "kf/deepseek_v4/reference/model.h"

#include <algorithm>

#include "internal.h"
#include "kf/deepseek_v4/reference/hyper_connections.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/moe.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

using internal::check;

namespace {

HcConfig hc_config(const Config &config) {
  return {static_cast<int>(config.hc),
          static_cast<int>(config.sinkhorn_iterations), config.hc_eps,
          config.norm_eps};
}

} // namespace

Model::Model(const Weights &weights, const Options &options)
    : weights_(weights), options_(options) {
  const Config &config = weights.config();
  for (uint32_t l = 0; l < config.n_layer; ++l)
    attention_.emplace_back(config, weights.layer(l), l, options);
}

void Model::block(uint32_t layer, std::span<const int32_t> tokens, bool prefill,
                  std::vector<float> &streams) {
  const Config &config = weights_.config();
  const LayerWeights &w = weights_.layer(layer);
  HcConfig hc = hc_config(config);
  size_t n_embd = config.n_embd, mult = config.hc;
  size_t width = mult * n_embd;
  auto streams_of = [&](size_t t) {
    return std::span<float>(streams).subspan(t * width, width);
  };
  std::vector<float> x(tokens.size() * n_embd);
  auto x_of = [&](size_t t) {
    return std::span<float>(x).subspan(t * n_embd, n_embd);
  };
  std::vector<float> post(tokens.size() * mult);
  std::vector<float> comb(tokens.size() * mult * mult);
  // HcPre and the sublayer's norm, per token; post and comb come from the
  // streams before the sublayer runs (docs/models/deepseek_v4_model.md §4).
  auto pre = [&](const HcWeights &site, std::span<const float> norm) {
    for (size_t t = 0; t < tokens.size(); ++t) {
      hc_pre(streams_of(t), site, hc, x_of(t),
             std::span<float>(post).subspan(t * mult, mult),
             std::span<float>(comb).subspan(t * mult * mult, mult * mult),
             options_.precision);
      rms_norm(x_of(t), norm, config.norm_eps, x_of(t), options_.precision);
    }
  };
  auto post_mix = [&](std::span<const float> f) {
    std::vector<float> old(width);
    for (size_t t = 0; t < tokens.size(); ++t) {
      std::copy(streams_of(t).begin(), streams_of(t).end(), old.begin());
      hc_post(f.subspan(t * n_embd, n_embd), old,
              std::span<float>(post).subspan(t * mult, mult),
              std::span<float>(comb).subspan(t * mult * mult, mult * mult),
              static_cast<int>(mult), streams_of(t), options_.precision);
    }
  };

  pre({w.hc_attn_fn, w.hc_attn_base, w.hc_attn_scale}, w.attn_norm);
  std::vector<float> a = prefill ? attention_[layer].prefill(x)
                                 : attention_[layer].decode(x, position_);
  post_mix(a);

  pre({w.hc_ffn_fn, w.hc_ffn_base, w.hc_ffn_scale}, w.ffn_norm);
  std::vector<float> f;
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> y = moe(config, w, layer, x_of(t), tokens[t], options_);
    f.insert(f.end(), y.begin(), y.end());
  }
  post_mix(f);
}

ForwardResult Model::forward(std::span<const int32_t> tokens, bool prefill) {
  const Config &config = weights_.config();
  size_t n_embd = config.n_embd, mult = config.hc;
  check(!tokens.empty(), "Model: no tokens");
  // Embed[ids] in bf16, repeated into every stream (§3).
  std::vector<float> streams;
  for (int32_t token : tokens) {
    check(token >= 0 && static_cast<uint32_t>(token) < config.n_vocab,
          "Model: token id outside the vocabulary");
    std::span<const float> row = weights_.token_embd().subspan(
        static_cast<size_t>(token) * n_embd, n_embd);
    for (size_t j = 0; j < mult; ++j)
      for (float v : row)
        streams.push_back(hold(options_.precision, v));
  }
  ForwardResult result;
  for (uint32_t l = 0; l < config.n_layer; ++l) {
    block(l, tokens, prefill, streams);
    if (options_.keep_layer_streams)
      result.layer_streams.push_back(streams);
  }
  // The head reads the last token only (§3, §6), unless every position's
  // logits are asked for.
  const size_t width = mult * n_embd;
  const size_t first = options_.keep_position_logits ? 0 : tokens.size() - 1;
  std::vector<float> y(n_embd);
  result.logits.resize(config.n_vocab);
  for (size_t t = first; t < tokens.size(); ++t) {
    hc_head(std::span<const float>(streams).subspan(t * width, width),
            {weights_.output_hc_fn(), weights_.output_hc_base(),
             weights_.output_hc_scale()},
            hc_config(config), y, options_.precision);
    rms_norm(y, weights_.output_norm(), config.norm_eps, y, options_.precision);
    linear(LinearRole::Output, y, weights_.output(), options_, result.logits);
    if (options_.keep_position_logits)
      result.position_logits.insert(result.position_logits.end(),
                                    result.logits.begin(), result.logits.end());
  }
  position_ += static_cast<int64_t>(tokens.size());
  return result;
}

ForwardResult Model::prefill(std::span<const int32_t> tokens) {
  position_ = 0;
  return forward(tokens, /*prefill=*/true);
}

ForwardResult Model::decode(int32_t token) {
  return forward(std::span<const int32_t>(&token, 1), /*prefill=*/false);
}

} // namespace kf::deepseek_v4::reference
