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
std::string perLayer(const std::vector<float> &values) {
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) ==
      values.end())
    return values.empty() ? "" : absl::StrCat(values[0]);
  return absl::StrJoin(values, " ");
}

} // namespace

void printConfig(const deepseek_v4::Config &c, std::string_view source,
                 std::ostream &out) {
  using deepseek_v4::AttentionKind;
  int kinds[3] = {};
  for (uint32_t layer = 0; layer < c.nLayer; ++layer)
    ++kinds[static_cast<int>(c.attention(layer))];
  auto line = [&](std::string_view what, const std::string &value) {
    out << absl::StreamFormat("  %-19s %s\n", toAbsl(what), value);
  };
  out << "deepseek4 configuration of " << source << ":\n";
  line("layers",
       absl::StrFormat("%d: %d window-only, %d CSA, %d HCA; layers below %d "
                       "hash-routed",
                       c.nLayer, kinds[int(AttentionKind::Window)],
                       kinds[int(AttentionKind::Csa)],
                       kinds[int(AttentionKind::Hca)], c.hashLayers));
  line("compress ratios", absl::StrJoin(c.compressRatios, " "));
  line("embedding", absl::StrCat(c.nEmbd));
  line("vocabulary", absl::StrCat(c.nVocab, " tokens, bos ", token(c.bosToken),
                                  ", eos ", token(c.eosToken)));
  line("context", absl::StrCat(c.contextLength, " tokens"));
  line("attention",
       absl::StrCat(c.nHead, " heads of ", c.headDim, " (rope ", c.ropeDim,
                    "), one KV latent, q rank ", c.qLoraRank, ", ", c.oGroups,
                    " output groups of rank ", c.oLoraRank, ", window ",
                    c.window));
  line("indexer", absl::StrCat(c.indexerHeads, " heads of ", c.indexerHeadDim,
                               ", top ", c.indexerTopK));
  line("rope",
       absl::StrCat("base ", c.ropeBase, "; compressed layers ",
                    c.compressRopeBase, " with YaRN factor ", c.yarnFactor,
                    ", beta ", c.yarnBetaFast, "/", c.yarnBetaSlow,
                    ", original context ", c.yarnOriginalContext));
  line("hyper-connections",
       absl::StrCat(c.hc, " streams, ", c.sinkhornIterations,
                    " Sinkhorn iterations, eps ", c.hcEps));
  line("norm eps", absl::StrCat(c.normEps));
  line("experts",
       absl::StrCat(c.nExpert, " routed (", c.nExpertUsed, " per token), ",
                    c.nExpertShared, " shared, width ", c.nFfExp,
                    "; sqrt-softplus scores",
                    c.normalizeWeights ? ", normalised" : "", ", scale ",
                    c.routeScale));
  line("swiglu clamp", absl::StrCat("routed ", perLayer(c.swigluClampExp),
                                    ", shared ", perLayer(c.swigluClampShexp)));
  deepseek_v4::ParameterCount p = deepseek_v4::countParameters(c);
  out << "parameters:\n";
  line("total", count(p.total));
  line("active per token", count(p.active));
  line("embedding and head", count(p.embeddingAndHead));
}

} // namespace kf::gguf_tool
