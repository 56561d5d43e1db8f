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
void add_layer(const Config &c, uint32_t layer, std::vector<TensorSpec> &out) {
  auto add = [&](std::string_view name, TensorKind kind, Shape shape,
                 std::string_view suffix = "weight") {
    out.push_back(
        {absl::StrCat("blk.", layer, ".", to_absl(name), ".", to_absl(suffix)),
         kind, std::move(shape)});
  };
  const int64_t n_embd = c.n_embd, head = c.head_dim, q_lora = c.q_lora_rank;
  const int64_t hc_width = int64_t{c.hc} * n_embd;
  const int64_t hc_mixes = int64_t{2 + c.hc} * c.hc;
  const int64_t ff_shared = int64_t{c.n_ff_exp} * c.n_expert_shared;

  add("attn_norm", TensorKind::Norm, {n_embd});
  add("attn_sinks", TensorKind::Sinks, {c.n_head});
  add("attn_q_a", TensorKind::Projection, {n_embd, q_lora});
  add("attn_q_a_norm", TensorKind::Norm, {q_lora});
  add("attn_q_b", TensorKind::Projection, {q_lora, c.n_head * head});
  add("attn_kv", TensorKind::Projection, {n_embd, head});
  add("attn_kv_a_norm", TensorKind::Norm, {head});
  // Each of the G groups maps its n_head/G heads' outputs to o_lora_rank:
  // torch's wo_a [G·Ro, H·Dh/G] is ggml's [H·Dh/G, G·Ro].
  add("attn_output_a", TensorKind::Projection,
      {c.n_head * head / c.o_groups, int64_t{c.o_groups} * c.o_lora_rank});
  add("attn_output_b", TensorKind::Projection,
      {int64_t{c.o_groups} * c.o_lora_rank, n_embd});
  for (std::string_view site : {"attn", "ffn"}) {
    std::string hc = absl::StrCat("hc_", to_absl(site));
    add(hc + "_fn", TensorKind::HcFn, {hc_width, hc_mixes});
    add(hc + "_base", TensorKind::HcBase, {hc_mixes});
    add(hc + "_scale", TensorKind::HcScale, {3});
  }
  if (uint32_t halves = c.compressor_halves(layer); halves > 0) {
    const int64_t width = halves * head;
    add("attn_compressor_kv", TensorKind::Projection, {n_embd, width});
    add("attn_compressor_gate", TensorKind::Projection, {n_embd, width});
    add("attn_compressor_ape", TensorKind::CompressorApe,
        {width, c.compress_ratios[layer]});
    add("attn_compressor_norm", TensorKind::Norm, {head});
  }
  if (c.attention(layer) == AttentionKind::Csa) {
    const int64_t index_dim = c.indexer_head_dim;
    add("indexer.proj", TensorKind::IndexerWeight, {n_embd, c.indexer_heads});
    add("indexer.attn_q_b", TensorKind::Projection,
        {q_lora, int64_t{c.indexer_heads} * index_dim});
    add("indexer_compressor_kv", TensorKind::Projection,
        {n_embd, 2 * index_dim});
    add("indexer_compressor_gate", TensorKind::Projection,
        {n_embd, 2 * index_dim});
    add("indexer_compressor_ape", TensorKind::CompressorApe,
        {2 * index_dim, c.compress_ratios[layer]});
    add("indexer_compressor_norm", TensorKind::Norm, {index_dim});
  }
  add("ffn_gate_inp", TensorKind::Router, {n_embd, c.n_expert});
  if (c.hash_routed(layer))
    add("ffn_gate_tid2eid", TensorKind::Tid2Eid, {c.n_expert_used, c.n_vocab});
  else
    add("exp_probs_b", TensorKind::GateBias, {c.n_expert}, "bias");
  add("ffn_norm", TensorKind::Norm, {n_embd});
  add("ffn_gate_exps", TensorKind::RoutedExperts,
      {n_embd, c.n_ff_exp, c.n_expert});
  add("ffn_down_exps", TensorKind::RoutedExperts,
      {c.n_ff_exp, n_embd, c.n_expert});
  add("ffn_up_exps", TensorKind::RoutedExperts,
      {n_embd, c.n_ff_exp, c.n_expert});
  add("ffn_gate_shexp", TensorKind::SharedExperts, {n_embd, ff_shared});
  add("ffn_down_shexp", TensorKind::SharedExperts, {ff_shared, n_embd});
  add("ffn_up_shexp", TensorKind::SharedExperts, {n_embd, ff_shared});
}

std::string describe_accepted(TensorKind kind) {
  if (std::optional<Format> fixed = fixed_format(kind))
    return std::string(format_info(*fixed).name);
  if (kind == TensorKind::CompressorApe)
    return "f32 or bf16";
  return "a weight format";
}

absl::Status check_tid2eid(const Config &c, const gguf::File &file,
                           const gguf::TensorInfo &t) {
  std::span<const uint8_t> data = file.data(t);
  std::vector<int32_t> table(data.size() / sizeof(int32_t));
  std::memcpy(table.data(), data.data(), table.size() * sizeof(int32_t));
  return check_tid2eid_rows(
      c, table, absl::StrCat(file.name(), ": tensor ", gguf::quoted(t.name)));
}

} // namespace

absl::Status check_tid2eid_rows(const Config &c, std::span<const int32_t> table,
                                std::string_view what) {
  std::vector<int64_t> seen_in_row(c.n_expert, -1);
  for (int64_t token = 0; token < c.n_vocab; ++token) {
    for (uint32_t j = 0; j < c.n_expert_used; ++j) {
      int32_t expert = table[token * c.n_expert_used + j];
      auto problem = [&](const std::string &issue) {
        return absl::InvalidArgumentError(
            absl::StrCat(to_absl(what), " row ", token, " ", issue));
      };
      if (expert < 0 || static_cast<uint32_t>(expert) >= c.n_expert)
        return problem(absl::StrCat("names expert ", expert, ", expected 0 to ",
                                    c.n_expert - 1));
      if (seen_in_row[expert] == token)
        return problem(absl::StrCat("names expert ", expert,
                                    " twice, expected ", c.n_expert_used,
                                    " distinct experts"));
      seen_in_row[expert] = token;
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

std::vector<TensorSpec> tensor_specs(const Config &c) {
  const int64_t n_embd = c.n_embd, vocab = c.n_vocab;
  std::vector<TensorSpec> specs = {
      {"token_embd.weight", TensorKind::Embedding, {n_embd, vocab}},
      {"output_norm.weight", TensorKind::Norm, {n_embd}},
      {"output.weight", TensorKind::Output, {n_embd, vocab}},
      {"output_hc_fn.weight", TensorKind::HcFn, {int64_t{c.hc} * n_embd, c.hc}},
      {"output_hc_base.weight", TensorKind::HcBase, {c.hc}},
      {"output_hc_scale.weight", TensorKind::HcScale, {1}},
  };
  for (uint32_t layer = 0; layer < c.n_layer; ++layer)
    add_layer(c, layer, specs);
  return specs;
}

std::optional<Format> fixed_format(TensorKind kind) {
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
  if (std::optional<Format> fixed = fixed_format(kind))
    return format == *fixed;
  if (kind == TensorKind::CompressorApe)
    return format == Format::F32 || format == Format::BF16;
  return format_info(format).role == FormatRole::Weight;
}

absl::Status validate_tensors(const Config &config, const gguf::File &file) {
  std::vector<TensorSpec> specs = tensor_specs(config);
  std::set<std::string_view> expected;
  for (const TensorSpec &spec : specs) {
    expected.insert(spec.name);
    const gguf::TensorInfo *t = file.find_tensor(spec.name);
    std::string subject =
        absl::StrCat(file.name(), ": tensor ", gguf::quoted(spec.name));
    if (!t)
      return absl::NotFoundError(absl::StrCat(
          file.name(), ": no tensor ", gguf::quoted(spec.name),
          " (expected shape ", gguf::shape_string(spec.shape), ")"));
    if (t->shape != spec.shape) {
      Shape reversed(t->shape.rbegin(), t->shape.rend());
      bool transposed = t->shape.size() == 2 && reversed == spec.shape;
      return absl::InvalidArgumentError(absl::StrCat(
          subject, " has shape ", gguf::shape_string(t->shape), ", expected ",
          gguf::shape_string(spec.shape),
          transposed ? ": it is transposed (ggml order puts the input "
                       "dimension first)"
                     : ""));
    }
    if (!accepts(spec.kind, t->format))
      return absl::InvalidArgumentError(
          absl::StrCat(subject, " is ", to_absl(format_info(t->format).name),
                       ", expected ", describe_accepted(spec.kind)));
    if (spec.kind == TensorKind::Tid2Eid)
      KF_RETURN_IF_ERROR(check_tid2eid(config, file, *t));
  }
  for (const gguf::TensorInfo &t : file.tensors())
    if (!expected.contains(t.name))
      return absl::InvalidArgumentError(absl::StrCat(
          file.name(), ": unexpected tensor ", gguf::quoted(t.name), ": a ",
          config.n_layer, "-layer deepseek4 model has no such tensor"));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4
