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

HcConfig hcConfig(const Config &config) {
  return {static_cast<int>(config.hc),
          static_cast<int>(config.sinkhornIterations), config.hcEps,
          config.normEps};
}

} // namespace

Model::Model(const Weights &weights, const Options &options)
    : weights_(weights), options_(options) {
  const Config &config = weights.config();
  for (uint32_t l = 0; l < config.nLayer; ++l)
    attention_.emplace_back(config, weights.layer(l), l, options);
}

void Model::block(uint32_t layer, std::span<const int32_t> tokens, bool prefill,
                  std::vector<float> &streams) {
  const Config &config = weights_.config();
  const LayerWeights &w = weights_.layer(layer);
  HcConfig hc = hcConfig(config);
  size_t nEmbd = config.nEmbd, mult = config.hc;
  size_t width = mult * nEmbd;
  auto streamsOf = [&](size_t t) {
    return std::span<float>(streams).subspan(t * width, width);
  };
  std::vector<float> x(tokens.size() * nEmbd);
  auto xOf = [&](size_t t) {
    return std::span<float>(x).subspan(t * nEmbd, nEmbd);
  };
  std::vector<float> post(tokens.size() * mult);
  std::vector<float> comb(tokens.size() * mult * mult);
  // HcPre and the sublayer's norm, per token; post and comb come from the
  // streams before the sublayer runs (docs/models/deepseek_v4_model.md §4).
  auto pre = [&](const HcWeights &site, std::span<const float> norm) {
    for (size_t t = 0; t < tokens.size(); ++t) {
      hcPre(streamsOf(t), site, hc, xOf(t),
            std::span<float>(post).subspan(t * mult, mult),
            std::span<float>(comb).subspan(t * mult * mult, mult * mult),
            options_.precision);
      rmsNorm(xOf(t), norm, config.normEps, xOf(t), options_.precision);
    }
  };
  auto postMix = [&](std::span<const float> f) {
    std::vector<float> old(width);
    for (size_t t = 0; t < tokens.size(); ++t) {
      std::copy(streamsOf(t).begin(), streamsOf(t).end(), old.begin());
      hcPost(f.subspan(t * nEmbd, nEmbd), old,
             std::span<float>(post).subspan(t * mult, mult),
             std::span<float>(comb).subspan(t * mult * mult, mult * mult),
             static_cast<int>(mult), streamsOf(t), options_.precision);
    }
  };

  pre({w.hcAttnFn, w.hcAttnBase, w.hcAttnScale}, w.attnNorm);
  std::vector<float> a = prefill ? attention_[layer].prefill(x)
                                 : attention_[layer].decode(x, position_);
  postMix(a);

  pre({w.hcFfnFn, w.hcFfnBase, w.hcFfnScale}, w.ffnNorm);
  std::vector<float> f;
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> y = moe(config, w, layer, xOf(t), tokens[t],
                               position_ + static_cast<int64_t>(t), options_);
    f.insert(f.end(), y.begin(), y.end());
  }
  postMix(f);
}

ForwardResult Model::forward(std::span<const int32_t> tokens, bool prefill) {
  const Config &config = weights_.config();
  size_t nEmbd = config.nEmbd, mult = config.hc;
  check(!tokens.empty(), "Model: no tokens");
  // Embed[ids] in bf16, repeated into every stream (§3).
  std::vector<float> streams;
  for (int32_t token : tokens) {
    check(token >= 0 && static_cast<uint32_t>(token) < config.nVocab,
          "Model: token id outside the vocabulary");
    std::span<const float> row =
        weights_.tokenEmbd().subspan(static_cast<size_t>(token) * nEmbd, nEmbd);
    for (size_t j = 0; j < mult; ++j)
      for (float v : row)
        streams.push_back(hold(options_.precision, v));
  }
  ForwardResult result;
  for (uint32_t l = 0; l < config.nLayer; ++l) {
    block(l, tokens, prefill, streams);
    if (options_.keepLayerStreams)
      result.layerStreams.push_back(streams);
  }
  // The head reads the last token only (§3, §6), unless every position's
  // logits are asked for.
  const size_t width = mult * nEmbd;
  const size_t first = options_.keepPositionLogits ? 0 : tokens.size() - 1;
  std::vector<float> y(nEmbd);
  result.logits.resize(config.nVocab);
  for (size_t t = first; t < tokens.size(); ++t) {
    hcHead(std::span<const float>(streams).subspan(t * width, width),
           {weights_.outputHcFn(), weights_.outputHcBase(),
            weights_.outputHcScale()},
           hcConfig(config), y, options_.precision);
    rmsNorm(y, weights_.outputNorm(), config.normEps, y, options_.precision);
    linear(LinearRole::Output, y, weights_.output(), options_, result.logits);
    if (options_.keepPositionLogits)
      result.positionLogits.insert(result.positionLogits.end(),
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
