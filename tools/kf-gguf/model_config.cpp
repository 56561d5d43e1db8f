// kf-gguf config: a DeepSeek-V4 configuration and its parameter counts.
#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "kf/deepseek_v4/parameters.h"
#include "kf/runtime/absl_compat.h"

namespace kf::gguf_tool {

namespace {

// "284334567511 (284.33 B)".
std::string count(int64_t n) {
  if (n >= 1'000'000'000)
    return absl::StrFormat("%d (%.2f B)", n, n / 1e9);
  if (n >= 1'000'000)
    return absl::StrFormat("%d (%.2f M)", n, n / 1e6);
  return absl::StrCat(n);
}

std::string token(const std::optional<uint32_t> &id) {
  return id ? absl::StrCat(*id) : "none";
}

// "10" when every layer has the same value, else all of them.
std::string per_layer(const std::vector<float> &values) {
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) ==
      values.end())
    return values.empty() ? "" : absl::StrCat(values[0]);
  return absl::StrJoin(values, " ");
}

} // namespace

void print_config(const deepseek_v4::Config &c, std::string_view source,
                  std::ostream &out) {
  using deepseek_v4::AttentionKind;
  int kinds[3] = {};
  for (uint32_t layer = 0; layer < c.n_layer; ++layer)
    ++kinds[static_cast<int>(c.attention(layer))];
  auto line = [&](std::string_view what, const std::string &value) {
    out << absl::StreamFormat("  %-19s %s\n", to_absl(what), value);
  };
  out << "deepseek4 configuration of " << source << ":\n";
  line("layers",
       absl::StrFormat("%d: %d window-only, %d CSA, %d HCA; layers below %d "
                       "hash-routed",
                       c.n_layer, kinds[int(AttentionKind::Window)],
                       kinds[int(AttentionKind::Csa)],
                       kinds[int(AttentionKind::Hca)], c.hash_layers));
  line("compress ratios", absl::StrJoin(c.compress_ratios, " "));
  line("embedding", absl::StrCat(c.n_embd));
  line("vocabulary",
       absl::StrCat(c.n_vocab, " tokens, bos ", token(c.bos_token), ", eos ",
                    token(c.eos_token)));
  line("context", absl::StrCat(c.context_length, " tokens"));
  line("attention",
       absl::StrCat(c.n_head, " heads of ", c.head_dim, " (rope ", c.rope_dim,
                    "), one KV latent, q rank ", c.q_lora_rank, ", ",
                    c.o_groups, " output groups of rank ", c.o_lora_rank,
                    ", window ", c.window));
  line("indexer", absl::StrCat(c.indexer_heads, " heads of ",
                               c.indexer_head_dim, ", top ", c.indexer_top_k));
  line("rope",
       absl::StrCat("base ", c.rope_base, "; compressed layers ",
                    c.compress_rope_base, " with YaRN factor ", c.yarn_factor,
                    ", beta ", c.yarn_beta_fast, "/", c.yarn_beta_slow,
                    ", original context ", c.yarn_original_context));
  line("hyper-connections",
       absl::StrCat(c.hc, " streams, ", c.sinkhorn_iterations,
                    " Sinkhorn iterations, eps ", c.hc_eps));
  line("norm eps", absl::StrCat(c.norm_eps));
  line("experts",
       absl::StrCat(c.n_expert, " routed (", c.n_expert_used, " per token), ",
                    c.n_expert_shared, " shared, width ", c.n_ff_exp,
                    "; sqrt-softplus scores",
                    c.normalize_weights ? ", normalised" : "", ", scale ",
                    c.route_scale));
  line("swiglu clamp",
       absl::StrCat("routed ", per_layer(c.swiglu_clamp_exp), ", shared ",
                    per_layer(c.swiglu_clamp_shexp)));
  deepseek_v4::ParameterCount p = deepseek_v4::count_parameters(c);
  out << "parameters:\n";
  line("total", count(p.total));
  line("active per token", count(p.active));
  line("embedding and head", count(p.embedding_and_head));
}

} // namespace kf::gguf_tool
