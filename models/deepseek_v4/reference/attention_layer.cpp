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
std::span<float> rope_part(std::span<float> rows, size_t head, size_t dim,
                           size_t rope_dim) {
  return rows.subspan(head * dim + dim - rope_dim, rope_dim);
}

} // namespace

RopeConfig layer_rope(const Config &config, uint32_t layer) {
  RopeConfig rope{.rope_dim = static_cast<int>(config.rope_dim),
                  .base = config.rope_base};
  if (config.attention(layer) == AttentionKind::Window)
    return rope;
  rope.base = config.compress_rope_base;
  rope.yarn = true;
  rope.yarn_factor = config.yarn_factor;
  rope.beta_fast = config.yarn_beta_fast;
  rope.beta_slow = config.yarn_beta_slow;
  rope.original_len = config.yarn_original_context;
  return rope;
}

AttentionLayer::AttentionLayer(const Config &config,
                               const LayerWeights &weights, uint32_t layer,
                               const Options &options)
    : config_(config), weights_(weights), kind_(config.attention(layer)),
      ratio_(static_cast<int>(config.compress_ratios.at(layer))),
      options_(options), rope_freqs_(config.rope_dim / 2),
      ring_(size_t{config.window} * config.head_dim) {
  rope_frequencies(layer_rope(config, layer), rope_freqs_);
  if (kind_ == AttentionKind::Window)
    return;
  int rope_dim = static_cast<int>(config.rope_dim);
  compressor_.emplace(
      CompressorWeights{weights.compressor_kv, weights.compressor_gate,
                        weights.compressor_ape, weights.compressor_norm},
      CompressorShape{ratio_, config.compressor_halves(layer) == 2,
                      static_cast<int>(config.head_dim), rope_dim,
                      config.norm_eps},
      CompressorKind::Main, rope_freqs_, options_);
  if (kind_ == AttentionKind::Csa)
    indexer_compressor_.emplace(
        CompressorWeights{
            weights.indexer_compressor_kv, weights.indexer_compressor_gate,
            weights.indexer_compressor_ape, weights.indexer_compressor_norm},
        CompressorShape{ratio_, true, static_cast<int>(config.indexer_head_dim),
                        rope_dim, config.norm_eps},
        CompressorKind::Indexer, rope_freqs_, options_);
}

AttentionLayer::Query AttentionLayer::query(std::span<const float> x,
                                            int64_t pos) const {
  size_t heads = config_.n_head, dim = config_.head_dim;
  Query r{std::vector<float>(config_.q_lora_rank),
          std::vector<float>(heads * dim)};
  const Precision precision = options_.precision;
  linear(LinearRole::AttnQA, x, weights_.attn_q_a, options_, r.qr);
  rms_norm(r.qr, weights_.attn_q_a_norm, config_.norm_eps, r.qr, precision);
  linear(LinearRole::AttnQB, r.qr, weights_.attn_q_b, options_, r.q);
  for (size_t h = 0; h < heads; ++h) {
    rms_scale(std::span<float>(r.q).subspan(h * dim, dim), config_.norm_eps,
              precision);
    rope(rope_part(r.q, h, dim, config_.rope_dim), pos, rope_freqs_, precision);
  }
  return r;
}

std::vector<float> AttentionLayer::kv(std::span<const float> x,
                                      int64_t pos) const {
  size_t dim = config_.head_dim;
  std::vector<float> kv(dim);
  linear(LinearRole::AttnKv, x, weights_.attn_kv, options_, kv);
  rms_norm(kv, weights_.attn_kv_a_norm, config_.norm_eps, kv,
           options_.precision);
  rope(rope_part(kv, 0, dim, config_.rope_dim), pos, rope_freqs_,
       options_.precision);
  if (options_.simulates())
    fp8_sim(std::span<float>(kv).first(dim - config_.rope_dim), 64);
  return kv;
}

std::vector<float> AttentionLayer::indexer_query(std::span<const float> qr,
                                                 int64_t pos) const {
  size_t heads = config_.indexer_heads, dim = config_.indexer_head_dim;
  std::vector<float> qi(heads * dim);
  linear(LinearRole::IndexerQB, qr, weights_.indexer_q_b, options_, qi);
  for (size_t h = 0; h < heads; ++h) {
    rope(rope_part(qi, h, dim, config_.rope_dim), pos, rope_freqs_,
         options_.precision);
    if (options_.simulates()) {
      std::span<float> head = std::span<float>(qi).subspan(h * dim, dim);
      hadamard(head);
      fp4_sim(head, 32);
    }
  }
  return qi;
}

std::vector<float>
AttentionLayer::indexer_weights(std::span<const float> x) const {
  std::vector<float> w(config_.indexer_heads);
  linear(LinearRole::IndexerProj, x, weights_.indexer_proj, options_, w);
  // The reference multiplies its bf16 tensor by a Python float, which
  // torch applies in fp32.
  float scale = static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(config_.indexer_head_dim) *
                      config_.indexer_heads));
  for (float &v : w)
    v = hold(options_.precision, v * scale);
  return w;
}

void AttentionLayer::add_compressed(std::span<const float> x,
                                    std::span<const float> qr, int64_t pos,
                                    int64_t n_entries, int32_t first_entry_row,
                                    std::vector<int32_t> &idx) const {
  int64_t visible = visible_compressed(pos, ratio_);
  check(visible <= n_entries, "attention: a visible entry was not built");
  if (kind_ == AttentionKind::Hca) {
    for (int32_t c = 0; c < visible; ++c)
      idx.push_back(first_entry_row + c);
    return;
  }
  size_t dim = config_.indexer_head_dim;
  std::vector<float> scores(static_cast<size_t>(n_entries));
  indexer_scores(indexer_query(qr, pos), indexer_weights(x),
                 indexer_compressor_->entries().first(scores.size() * dim),
                 static_cast<int>(config_.indexer_heads), static_cast<int>(dim),
                 scores, options_.precision);
  std::vector<int32_t> selected(
      std::min<size_t>(config_.indexer_top_k, scores.size()));
  indexer_select(scores, static_cast<size_t>(visible), selected);
  for (int32_t c : selected)
    idx.push_back(c < 0 ? -1 : first_entry_row + c);
}

std::vector<float> AttentionLayer::output(std::span<float> o,
                                          int64_t pos) const {
  size_t heads = config_.n_head, dim = config_.head_dim;
  for (size_t h = 0; h < heads; ++h)
    inverse_rope(rope_part(o, h, dim, config_.rope_dim), pos, rope_freqs_,
                 options_.precision);
  // Group g holds heads g·H/G .. (g+1)·H/G − 1 and rows g·Ro .. of wo_a.
  size_t groups = config_.o_groups, rank = config_.o_lora_rank;
  size_t group_in = heads * dim / groups;
  std::vector<float> z(groups * rank);
  for (size_t g = 0; g < groups; ++g)
    linear(LinearRole::AttnOutputA, o.subspan(g * group_in, group_in),
           weights_.attn_output_a.subspan(g * rank * group_in, rank * group_in),
           options_, std::span<float>(z).subspan(g * rank, rank));
  std::vector<float> out(config_.n_embd);
  linear(LinearRole::AttnOutputB, z, weights_.attn_output_b, options_, out);
  return out;
}

std::vector<float> AttentionLayer::prefill(std::span<const float> x) {
  size_t n_embd = config_.n_embd, dim = config_.head_dim;
  check(!x.empty() && x.size() % n_embd == 0,
        "AttentionLayer::prefill: x must be [T, D] with T > 0");
  size_t tokens = x.size() / n_embd;
  auto row = [&](size_t t) { return x.subspan(t * n_embd, n_embd); };

  std::vector<Query> queries;
  std::vector<float> bank; // the fresh KV rows, then the compressed entries
  for (size_t t = 0; t < tokens; ++t) {
    queries.push_back(query(row(t), static_cast<int64_t>(t)));
    std::vector<float> k = kv(row(t), static_cast<int64_t>(t));
    bank.insert(bank.end(), k.begin(), k.end());
  }
  int64_t n_entries = 0;
  if (compressor_) {
    if (indexer_compressor_)
      indexer_compressor_->prefill(x);
    compressor_->prefill(x);
    n_entries = compressor_->size();
    bank.insert(bank.end(), compressor_->entries().begin(),
                compressor_->entries().end());
  }

  std::vector<float> out;
  std::vector<int32_t> idx(config_.window);
  std::vector<float> o(config_.n_head * dim);
  for (size_t t = 0; t < tokens; ++t) {
    int64_t pos = static_cast<int64_t>(t);
    idx.resize(config_.window);
    window_positions(pos, idx); // fresh row t holds position t
    if (compressor_)
      add_compressed(row(t), queries[t].qr, pos, n_entries,
                     static_cast<int32_t>(tokens), idx);
    sparse_attention(queries[t].q, bank, weights_.attn_sinks, idx,
                     static_cast<int>(config_.n_head), static_cast<int>(dim),
                     attention_scale(static_cast<int>(dim)), o,
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
  next_pos_ = static_cast<int64_t>(tokens);
  return out;
}

std::vector<float> AttentionLayer::decode(std::span<const float> x,
                                          int64_t pos) {
  check(pos == next_pos_ && x.size() == config_.n_embd,
        "AttentionLayer::decode: x [D] at the position after the last one");
  size_t dim = config_.head_dim, window = config_.window;
  Query q = query(x, pos);
  std::vector<float> k = kv(x, pos);
  if (indexer_compressor_)
    indexer_compressor_->decode(x, pos);
  std::copy(k.begin(), k.end(),
            ring_.begin() + static_cast<std::ptrdiff_t>(
                                static_cast<size_t>(pos) % window * dim));
  std::vector<float> bank = ring_; // the ring, then the cached entries
  int64_t n_entries = 0;
  if (compressor_) {
    compressor_->decode(x, pos);
    n_entries = compressor_->size();
    bank.insert(bank.end(), compressor_->entries().begin(),
                compressor_->entries().end());
  }

  std::vector<int32_t> idx(window);
  window_positions(pos, idx);
  for (int32_t &p : idx) // position p lives in ring slot p mod window
    if (p >= 0)
      p = static_cast<int32_t>(static_cast<size_t>(p) % window);
  if (compressor_)
    add_compressed(x, q.qr, pos, n_entries, static_cast<int32_t>(window), idx);
  std::vector<float> o(config_.n_head * dim);
  sparse_attention(q.q, bank, weights_.attn_sinks, idx,
                   static_cast<int>(config_.n_head), static_cast<int>(dim),
                   attention_scale(static_cast<int>(dim)), o,
                   options_.precision);
  ++next_pos_;
  return output(o, pos);
}

} // namespace kf::deepseek_v4::reference
