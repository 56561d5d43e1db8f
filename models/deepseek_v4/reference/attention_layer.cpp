#include "kf/deepseek_v4/reference/attention_layer.h"

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/hadamard.h"
#include "kf/deepseek_v4/reference/indexer.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/quant_sim.h"

namespace kf::deepseek_v4::reference {

using internal::check;

namespace {

// The last rope_dim values of row `head` of `rows`, rows of width `dim`.
std::span<float> ropePart(std::span<float> rows, size_t head, size_t dim,
                          size_t ropeDim) {
  return rows.subspan(head * dim + dim - ropeDim, ropeDim);
}

} // namespace

RopeConfig layerRope(const Config &config, uint32_t layer) {
  RopeConfig rope{.ropeDim = static_cast<int>(config.ropeDim),
                  .base = config.ropeBase};
  if (config.attention(layer) == AttentionKind::Window)
    return rope;
  rope.base = config.compressRopeBase;
  rope.yarn = true;
  rope.yarnFactor = config.yarnFactor;
  rope.betaFast = config.yarnBetaFast;
  rope.betaSlow = config.yarnBetaSlow;
  rope.originalLen = config.yarnOriginalContext;
  return rope;
}

AttentionLayer::AttentionLayer(const Config &config,
                               const LayerWeights &weights, uint32_t layer,
                               const Options &options)
    : config_(config), weights_(weights), layer_(layer),
      kind_(config.attention(layer)),
      ratio_(static_cast<int>(config.compressRatios.at(layer))),
      options_(options), ropeFreqs_(config.ropeDim / 2),
      ring_(size_t{config.window} * config.headDim) {
  ropeFrequencies(layerRope(config, layer), ropeFreqs_);
  if (kind_ == AttentionKind::Window)
    return;
  int ropeDim = static_cast<int>(config.ropeDim);
  compressor_.emplace(
      CompressorWeights{weights.compressorKv, weights.compressorGate,
                        weights.compressorApe, weights.compressorNorm},
      CompressorShape{ratio_, config.compressorHalves(layer) == 2,
                      static_cast<int>(config.headDim), ropeDim,
                      config.normEps},
      CompressorKind::Main, ropeFreqs_, options_);
  if (kind_ == AttentionKind::Csa)
    indexerCompressor_.emplace(
        CompressorWeights{
            weights.indexerCompressorKv, weights.indexerCompressorGate,
            weights.indexerCompressorApe, weights.indexerCompressorNorm},
        CompressorShape{ratio_, true, static_cast<int>(config.indexerHeadDim),
                        ropeDim, config.normEps},
        CompressorKind::Indexer, ropeFreqs_, options_);
}

AttentionLayer::Query AttentionLayer::query(std::span<const float> x,
                                            int64_t pos) const {
  size_t heads = config_.nHead, dim = config_.headDim;
  Query r{std::vector<float>(config_.qLoraRank),
          std::vector<float>(heads * dim)};
  const Precision precision = options_.precision;
  linear(LinearRole::AttnQA, x, weights_.attnQA, options_, r.qr);
  rmsNorm(r.qr, weights_.attnQANorm, config_.normEps, r.qr, precision);
  linear(LinearRole::AttnQB, r.qr, weights_.attnQB, options_, r.q);
  for (size_t h = 0; h < heads; ++h) {
    rmsScale(std::span<float>(r.q).subspan(h * dim, dim), config_.normEps,
             precision);
    rope(ropePart(r.q, h, dim, config_.ropeDim), pos, ropeFreqs_, precision);
  }
  return r;
}

std::vector<float> AttentionLayer::kv(std::span<const float> x,
                                      int64_t pos) const {
  size_t dim = config_.headDim;
  std::vector<float> kv(dim);
  linear(LinearRole::AttnKv, x, weights_.attnKv, options_, kv);
  rmsNorm(kv, weights_.attnKvANorm, config_.normEps, kv, options_.precision);
  rope(ropePart(kv, 0, dim, config_.ropeDim), pos, ropeFreqs_,
       options_.precision);
  if (options_.simulates())
    fp8Sim(std::span<float>(kv).first(dim - config_.ropeDim), 64);
  return kv;
}

std::vector<float> AttentionLayer::indexerQuery(std::span<const float> qr,
                                                int64_t pos) const {
  size_t heads = config_.indexerHeads, dim = config_.indexerHeadDim;
  std::vector<float> qi(heads * dim);
  linear(LinearRole::IndexerQB, qr, weights_.indexerQB, options_, qi);
  for (size_t h = 0; h < heads; ++h) {
    rope(ropePart(qi, h, dim, config_.ropeDim), pos, ropeFreqs_,
         options_.precision);
    if (options_.simulates()) {
      std::span<float> head = std::span<float>(qi).subspan(h * dim, dim);
      hadamard(head);
      fp4Sim(head, 32);
    }
  }
  return qi;
}

std::vector<float>
AttentionLayer::indexerWeights(std::span<const float> x) const {
  std::vector<float> w(config_.indexerHeads);
  linear(LinearRole::IndexerProj, x, weights_.indexerProj, options_, w);
  // The reference multiplies its bf16 tensor by a Python float, which
  // torch applies in fp32.
  float scale = static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(config_.indexerHeadDim) *
                      config_.indexerHeads));
  for (float &v : w)
    v = hold(options_.precision, v * scale);
  return w;
}

void AttentionLayer::addCompressed(std::span<const float> x,
                                   std::span<const float> qr, int64_t pos,
                                   int64_t nEntries, int32_t firstEntryRow,
                                   std::vector<int32_t> &idx) const {
  int64_t visible = visibleCompressed(pos, ratio_);
  check(visible <= nEntries, "attention: a visible entry was not built");
  if (kind_ == AttentionKind::Hca) {
    for (int32_t c = 0; c < visible; ++c)
      idx.push_back(firstEntryRow + c);
    return;
  }
  size_t dim = config_.indexerHeadDim;
  std::vector<float> scores(static_cast<size_t>(nEntries));
  indexerScores(indexerQuery(qr, pos), indexerWeights(x),
                indexerCompressor_->entries().first(scores.size() * dim),
                static_cast<int>(config_.indexerHeads), static_cast<int>(dim),
                scores, options_.precision);
  std::vector<int32_t> selected(
      std::min<size_t>(config_.indexerTopK, scores.size()));
  indexerSelect(scores, static_cast<size_t>(visible), selected);
  if (options_.choices) {
    // The causal entries are the candidates; with no more of them than
    // picks, nothing was left out.
    std::span<const float> candidates(scores.data(),
                                      static_cast<size_t>(visible));
    TopKGap gap;
    if (candidates.size() > selected.size())
      gap = topKGap(candidates, selected.size());
    options_.choices->push_back(
        {Choice::Kind::Entries, layer_, pos, selected, gap});
  }
  for (int32_t c : selected)
    idx.push_back(c < 0 ? -1 : firstEntryRow + c);
}

std::vector<float> AttentionLayer::output(std::span<float> o,
                                          int64_t pos) const {
  size_t heads = config_.nHead, dim = config_.headDim;
  for (size_t h = 0; h < heads; ++h)
    inverseRope(ropePart(o, h, dim, config_.ropeDim), pos, ropeFreqs_,
                options_.precision);
  // Group g holds heads g·H/G .. (g+1)·H/G − 1 and rows g·Ro .. of wo_a.
  size_t groups = config_.oGroups, rank = config_.oLoraRank;
  size_t groupIn = heads * dim / groups;
  std::vector<float> z(groups * rank);
  for (size_t g = 0; g < groups; ++g)
    linear(LinearRole::AttnOutputA, o.subspan(g * groupIn, groupIn),
           weights_.attnOutputA.subspan(g * rank * groupIn, rank * groupIn),
           options_, std::span<float>(z).subspan(g * rank, rank));
  std::vector<float> out(config_.nEmbd);
  linear(LinearRole::AttnOutputB, z, weights_.attnOutputB, options_, out);
  return out;
}

std::vector<float> AttentionLayer::prefill(std::span<const float> x) {
  size_t nEmbd = config_.nEmbd, dim = config_.headDim;
  check(!x.empty() && x.size() % nEmbd == 0,
        "AttentionLayer::prefill: x must be [T, D] with T > 0");
  size_t tokens = x.size() / nEmbd;
  auto row = [&](size_t t) { return x.subspan(t * nEmbd, nEmbd); };

  std::vector<Query> queries;
  std::vector<float> bank; // the fresh KV rows, then the compressed entries
  for (size_t t = 0; t < tokens; ++t) {
    queries.push_back(query(row(t), static_cast<int64_t>(t)));
    std::vector<float> k = kv(row(t), static_cast<int64_t>(t));
    bank.insert(bank.end(), k.begin(), k.end());
  }
  int64_t nEntries = 0;
  if (compressor_) {
    if (indexerCompressor_)
      indexerCompressor_->prefill(x);
    compressor_->prefill(x);
    nEntries = compressor_->size();
    bank.insert(bank.end(), compressor_->entries().begin(),
                compressor_->entries().end());
  }

  std::vector<float> out;
  std::vector<int32_t> idx(config_.window);
  std::vector<float> o(config_.nHead * dim);
  for (size_t t = 0; t < tokens; ++t) {
    int64_t pos = static_cast<int64_t>(t);
    idx.resize(config_.window);
    windowPositions(pos, idx); // fresh row t holds position t
    if (compressor_)
      addCompressed(row(t), queries[t].qr, pos, nEntries,
                    static_cast<int32_t>(tokens), idx);
    sparseAttention(queries[t].q, bank, weights_.attnSinks, idx,
                    static_cast<int>(config_.nHead), static_cast<int>(dim),
                    attentionScale(static_cast<int>(dim)), o,
                    options_.precision);
    std::vector<float> y = output(o, pos);
    out.insert(out.end(), y.begin(), y.end());
  }

  // The ring keeps the last min(T, window) rows, position p in slot p mod W.
  size_t window = config_.window;
  for (size_t t = tokens > window ? tokens - window : 0; t < tokens; ++t)
    std::copy_n(bank.begin() + static_cast<std::ptrdiff_t>(t * dim), dim,
                ring_.begin() +
                    static_cast<std::ptrdiff_t>((t % window) * dim));
  nextPos_ = static_cast<int64_t>(tokens);
  return out;
}

std::vector<float> AttentionLayer::decode(std::span<const float> x,
                                          int64_t pos) {
  check(pos == nextPos_ && x.size() == config_.nEmbd,
        "AttentionLayer::decode: x [D] at the position after the last one");
  size_t dim = config_.headDim, window = config_.window;
  Query q = query(x, pos);
  std::vector<float> k = kv(x, pos);
  if (indexerCompressor_)
    indexerCompressor_->decode(x, pos);
  std::copy(k.begin(), k.end(),
            ring_.begin() + static_cast<std::ptrdiff_t>(
                                static_cast<size_t>(pos) % window * dim));
  std::vector<float> bank = ring_; // the ring, then the cached entries
  int64_t nEntries = 0;
  if (compressor_) {
    compressor_->decode(x, pos);
    nEntries = compressor_->size();
    bank.insert(bank.end(), compressor_->entries().begin(),
                compressor_->entries().end());
  }

  std::vector<int32_t> idx(window);
  windowPositions(pos, idx);
  for (int32_t &p : idx) // position p lives in ring slot p mod window
    if (p >= 0)
      p = static_cast<int32_t>(static_cast<size_t>(p) % window);
  if (compressor_)
    addCompressed(x, q.qr, pos, nEntries, static_cast<int32_t>(window), idx);
  std::vector<float> o(config_.nHead * dim);
  sparseAttention(q.q, bank, weights_.attnSinks, idx,
                  static_cast<int>(config_.nHead), static_cast<int>(dim),
                  attentionScale(static_cast<int>(dim)), o, options_.precision);
  ++nextPos_;
  return output(o, pos);
}

} // namespace kf::deepseek_v4::reference
