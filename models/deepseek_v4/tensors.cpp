#include "kf/deepseek_v4/tensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4 {

namespace {

using Shape = std::vector<int64_t>;

// Appends one layer's tensors, in llama.cpp's load order.
void addLayer(const Config &c, uint32_t layer, std::vector<TensorSpec> &out) {
  auto add = [&](std::string_view name, TensorKind kind, Shape shape,
                 std::string_view suffix = "weight") {
    out.push_back(
        {absl::StrCat("blk.", layer, ".", toAbsl(name), ".", toAbsl(suffix)),
         kind, std::move(shape)});
  };
  const int64_t nEmbd = c.nEmbd, head = c.headDim, qLora = c.qLoraRank;
  const int64_t hcWidth = int64_t{c.hc} * nEmbd;
  const int64_t hcMixes = int64_t{2 + c.hc} * c.hc;
  const int64_t ffShared = int64_t{c.nFfExp} * c.nExpertShared;

  add("attn_norm", TensorKind::Norm, {nEmbd});
  add("attn_sinks", TensorKind::Sinks, {c.nHead});
  add("attn_q_a", TensorKind::Projection, {nEmbd, qLora});
  add("attn_q_a_norm", TensorKind::Norm, {qLora});
  add("attn_q_b", TensorKind::Projection, {qLora, c.nHead * head});
  add("attn_kv", TensorKind::Projection, {nEmbd, head});
  add("attn_kv_a_norm", TensorKind::Norm, {head});
  // Each of the G groups maps its nHead/G heads' outputs to oLoraRank:
  // torch's wo_a [G·Ro, H·Dh/G] is ggml's [H·Dh/G, G·Ro].
  add("attn_output_a", TensorKind::Projection,
      {c.nHead * head / c.oGroups, int64_t{c.oGroups} * c.oLoraRank});
  add("attn_output_b", TensorKind::Projection,
      {int64_t{c.oGroups} * c.oLoraRank, nEmbd});
  for (std::string_view site : {"attn", "ffn"}) {
    std::string hc = absl::StrCat("hc_", toAbsl(site));
    add(hc + "_fn", TensorKind::HcFn, {hcWidth, hcMixes});
    add(hc + "_base", TensorKind::HcBase, {hcMixes});
    add(hc + "_scale", TensorKind::HcScale, {3});
  }
  if (uint32_t halves = c.compressorHalves(layer); halves > 0) {
    const int64_t width = halves * head;
    add("attn_compressor_kv", TensorKind::Projection, {nEmbd, width});
    add("attn_compressor_gate", TensorKind::Projection, {nEmbd, width});
    add("attn_compressor_ape", TensorKind::CompressorApe,
        {width, c.compressRatios[layer]});
    add("attn_compressor_norm", TensorKind::Norm, {head});
  }
  if (c.attention(layer) == AttentionKind::Csa) {
    const int64_t indexDim = c.indexerHeadDim;
    add("indexer.proj", TensorKind::IndexerWeight, {nEmbd, c.indexerHeads});
    add("indexer.attn_q_b", TensorKind::Projection,
        {qLora, int64_t{c.indexerHeads} * indexDim});
    add("indexer_compressor_kv", TensorKind::Projection, {nEmbd, 2 * indexDim});
    add("indexer_compressor_gate", TensorKind::Projection,
        {nEmbd, 2 * indexDim});
    add("indexer_compressor_ape", TensorKind::CompressorApe,
        {2 * indexDim, c.compressRatios[layer]});
    add("indexer_compressor_norm", TensorKind::Norm, {indexDim});
  }
  add("ffn_gate_inp", TensorKind::Router, {nEmbd, c.nExpert});
  if (c.hashRouted(layer))
    add("ffn_gate_tid2eid", TensorKind::Tid2Eid, {c.nExpertUsed, c.nVocab});
  else
    add("exp_probs_b", TensorKind::GateBias, {c.nExpert}, "bias");
  add("ffn_norm", TensorKind::Norm, {nEmbd});
  add("ffn_gate_exps", TensorKind::RoutedExperts, {nEmbd, c.nFfExp, c.nExpert});
  add("ffn_down_exps", TensorKind::RoutedExperts, {c.nFfExp, nEmbd, c.nExpert});
  add("ffn_up_exps", TensorKind::RoutedExperts, {nEmbd, c.nFfExp, c.nExpert});
  add("ffn_gate_shexp", TensorKind::SharedExperts, {nEmbd, ffShared});
  add("ffn_down_shexp", TensorKind::SharedExperts, {ffShared, nEmbd});
  add("ffn_up_shexp", TensorKind::SharedExperts, {nEmbd, ffShared});
}

std::string describeAccepted(TensorKind kind) {
  if (std::optional<Format> fixed = fixedFormat(kind))
    return std::string(formatInfo(*fixed).name);
  if (kind == TensorKind::CompressorApe)
    return "f32 or bf16";
  return "a weight format";
}

absl::Status checkTid2eid(const Config &c, const gguf::File &file,
                          const gguf::TensorInfo &t) {
  std::span<const uint8_t> data = file.data(t);
  std::vector<int32_t> table(data.size() / sizeof(int32_t));
  std::memcpy(table.data(), data.data(), table.size() * sizeof(int32_t));
  return checkTid2eidRows(
      c, table, absl::StrCat(file.name(), ": tensor ", gguf::quoted(t.name)));
}

} // namespace

absl::Status checkTid2eidRows(const Config &c, std::span<const int32_t> table,
                              std::string_view what) {
  std::vector<int64_t> seenInRow(c.nExpert, -1);
  for (int64_t token = 0; token < c.nVocab; ++token) {
    for (uint32_t j = 0; j < c.nExpertUsed; ++j) {
      int32_t expert = table[token * c.nExpertUsed + j];
      auto problem = [&](const std::string &issue) {
        return absl::InvalidArgumentError(
            absl::StrCat(toAbsl(what), " row ", token, " ", issue));
      };
      if (expert < 0 || static_cast<uint32_t>(expert) >= c.nExpert)
        return problem(absl::StrCat("names expert ", expert, ", expected 0 to ",
                                    c.nExpert - 1));
      if (seenInRow[expert] == token)
        return problem(absl::StrCat("names expert ", expert,
                                    " twice, expected ", c.nExpertUsed,
                                    " distinct experts"));
      seenInRow[expert] = token;
    }
  }
  return absl::OkStatus();
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<TensorSpec> tensorSpecs(const Config &c) {
  const int64_t nEmbd = c.nEmbd, vocab = c.nVocab;
  std::vector<TensorSpec> specs = {
      {"token_embd.weight", TensorKind::Embedding, {nEmbd, vocab}},
      {"output_norm.weight", TensorKind::Norm, {nEmbd}},
      {"output.weight", TensorKind::Output, {nEmbd, vocab}},
      {"output_hc_fn.weight", TensorKind::HcFn, {int64_t{c.hc} * nEmbd, c.hc}},
      {"output_hc_base.weight", TensorKind::HcBase, {c.hc}},
      {"output_hc_scale.weight", TensorKind::HcScale, {1}},
  };
  for (uint32_t layer = 0; layer < c.nLayer; ++layer)
    addLayer(c, layer, specs);
  return specs;
}

std::optional<Format> fixedFormat(TensorKind kind) {
  switch (kind) {
  case TensorKind::Norm:
  case TensorKind::HcBase:
  case TensorKind::HcScale:
  case TensorKind::Sinks:
  case TensorKind::GateBias:
    return Format::F32;
  case TensorKind::Tid2Eid:
    return Format::I32;
  default:
    return std::nullopt;
  }
}

bool accepts(TensorKind kind, Format format) {
  if (std::optional<Format> fixed = fixedFormat(kind))
    return format == *fixed;
  if (kind == TensorKind::CompressorApe)
    return format == Format::F32 || format == Format::BF16;
  return formatInfo(format).role == FormatRole::Weight;
}

absl::Status validateTensors(const Config &config, const gguf::File &file) {
  std::vector<TensorSpec> specs = tensorSpecs(config);
  std::set<std::string_view> expected;
  for (const TensorSpec &spec : specs) {
    expected.insert(spec.name);
    const gguf::TensorInfo *t = file.findTensor(spec.name);
    std::string subject =
        absl::StrCat(file.name(), ": tensor ", gguf::quoted(spec.name));
    if (!t)
      return absl::NotFoundError(absl::StrCat(
          file.name(), ": no tensor ", gguf::quoted(spec.name),
          " (expected shape ", gguf::shapeString(spec.shape), ")"));
    if (t->shape != spec.shape) {
      Shape reversed(t->shape.rbegin(), t->shape.rend());
      bool transposed = t->shape.size() == 2 && reversed == spec.shape;
      return absl::InvalidArgumentError(absl::StrCat(
          subject, " has shape ", gguf::shapeString(t->shape), ", expected ",
          gguf::shapeString(spec.shape),
          transposed ? ": it is transposed (ggml order puts the input "
                       "dimension first)"
                     : ""));
    }
    if (!accepts(spec.kind, t->format))
      return absl::InvalidArgumentError(
          absl::StrCat(subject, " is ", toAbsl(formatInfo(t->format).name),
                       ", expected ", describeAccepted(spec.kind)));
    if (spec.kind == TensorKind::Tid2Eid)
      KF_RETURN_IF_ERROR(checkTid2eid(config, file, *t));
  }
  for (const gguf::TensorInfo &t : file.tensors())
    if (!expected.contains(t.name))
      return absl::InvalidArgumentError(absl::StrCat(
          file.name(), ": unexpected tensor ", gguf::quoted(t.name), ": a ",
          config.nLayer, "-layer deepseek4 model has no such tensor"));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4
