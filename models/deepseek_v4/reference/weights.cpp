#include "kf/deepseek_v4/reference/weights.h"

#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4::reference {

namespace {

// The reference implements DeepSeek-V4's routing only: weights normalised
// to sum to 1 before the route scale (model §1.1 and §4.5,
// docs/models/deepseek_v4_model.md).
absl::Status check_supported(const Config &config) {
  if (!config.normalize_weights)
    return absl::UnimplementedError(
        "deepseek_v4 reference: deepseek4.expert_weights_norm is false; the "
        "reference routes with normalised weights only "
        "(docs/models/deepseek_v4_model.md §4.5)");
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Weights> Weights::from_gguf(const Config &config,
                                           const gguf::File &file) {
  KF_RETURN_IF_ERROR(check_supported(config));
  KF_RETURN_IF_ERROR(validate_tensors(config, file));
  FloatTensors floats;
  IntTensors integers;
  for (const TensorSpec &spec : tensor_specs(config)) {
    const gguf::TensorInfo &t = *file.find_tensor(spec.name);
    std::span<const uint8_t> bytes = file.data(t);
    size_t n = static_cast<size_t>(spec.elements());
    if (spec.kind == TensorKind::Tid2Eid) {
      std::vector<int32_t> &table = integers[spec.name];
      table.resize(n);
      std::memcpy(table.data(), bytes.data(), n * sizeof(int32_t));
      continue;
    }
    std::vector<float> &values = floats[spec.name];
    values.resize(n);
    absl::Status decoded = dequantize(t.format, bytes, values);
    if (!decoded.ok())
      return absl::InvalidArgumentError(absl::StrCat(file.name(), ": tensor ",
                                                     gguf::quoted(spec.name),
                                                     ": ", decoded.message()));
  }
  return Weights(config, std::move(floats), std::move(integers));
}

absl::StatusOr<Weights> Weights::from_fp32(const Config &config,
                                           FloatTensors floats,
                                           IntTensors integers) {
  KF_RETURN_IF_ERROR(check_supported(config));
  std::vector<TensorSpec> specs = tensor_specs(config);
  std::set<std::string_view> expected_floats, expected_integers;
  for (const TensorSpec &spec : specs) {
    bool integer = spec.kind == TensorKind::Tid2Eid;
    (integer ? expected_integers : expected_floats).insert(spec.name);
    size_t found = 0;
    if (integer) {
      auto it = integers.find(spec.name);
      if (it == integers.end())
        return absl::NotFoundError(absl::StrCat(
            "deepseek_v4 reference: no int32 tensor '", spec.name, "'"));
      found = it->second.size();
      if (found == static_cast<size_t>(spec.elements()))
        KF_RETURN_IF_ERROR(check_tid2eid_rows(
            config, it->second,
            absl::StrCat("deepseek_v4 reference: tensor '", spec.name, "'")));
    } else {
      auto it = floats.find(spec.name);
      if (it == floats.end())
        return absl::NotFoundError(absl::StrCat(
            "deepseek_v4 reference: no fp32 tensor '", spec.name, "'"));
      found = it->second.size();
    }
    if (found != static_cast<size_t>(spec.elements()))
      return absl::InvalidArgumentError(
          absl::StrCat("deepseek_v4 reference: tensor '", spec.name, "' has ",
                       found, " elements, expected ", spec.elements(),
                       " (shape ", gguf::shape_string(spec.shape), ")"));
  }
  auto check_names = [](const auto &tensors,
                        const std::set<std::string_view> &expected,
                        std::string_view type) -> absl::Status {
    for (const auto &[name, values] : tensors)
      if (!expected.contains(name))
        return absl::InvalidArgumentError(
            absl::StrCat("deepseek_v4 reference: unexpected ", to_absl(type),
                         " tensor '", name, "'"));
    return absl::OkStatus();
  };
  KF_RETURN_IF_ERROR(check_names(floats, expected_floats, "fp32"));
  KF_RETURN_IF_ERROR(check_names(integers, expected_integers, "int32"));
  return Weights(config, std::move(floats), std::move(integers));
}

Weights::Weights(const Config &config, FloatTensors floats, IntTensors integers)
    : config_(config), floats_(std::move(floats)),
      integers_(std::move(integers)) {
  auto global = [&](std::string_view name) -> std::span<const float> {
    return floats_.find(name)->second;
  };
  token_embd_ = global("token_embd.weight");
  output_ = global("output.weight");
  output_norm_ = global("output_norm.weight");
  output_hc_fn_ = global("output_hc_fn.weight");
  output_hc_base_ = global("output_hc_base.weight");
  output_hc_scale_ = global("output_hc_scale.weight");

  for (uint32_t l = 0; l < config_.n_layer; ++l) {
    // The layer's tensor of `role`, or an empty span if it has none.
    auto get = [&](std::string_view role,
                   std::string_view suffix =
                       "weight") -> std::span<const float> {
      auto it = floats_.find(
          absl::StrCat("blk.", l, ".", to_absl(role), ".", to_absl(suffix)));
      if (it == floats_.end())
        return {};
      return it->second;
    };
    LayerWeights w;
    w.attn_norm = get("attn_norm");
    w.attn_sinks = get("attn_sinks");
    w.attn_q_a = get("attn_q_a");
    w.attn_q_a_norm = get("attn_q_a_norm");
    w.attn_q_b = get("attn_q_b");
    w.attn_kv = get("attn_kv");
    w.attn_kv_a_norm = get("attn_kv_a_norm");
    w.attn_output_a = get("attn_output_a");
    w.attn_output_b = get("attn_output_b");
    w.hc_attn_fn = get("hc_attn_fn");
    w.hc_attn_base = get("hc_attn_base");
    w.hc_attn_scale = get("hc_attn_scale");
    w.hc_ffn_fn = get("hc_ffn_fn");
    w.hc_ffn_base = get("hc_ffn_base");
    w.hc_ffn_scale = get("hc_ffn_scale");
    w.compressor_kv = get("attn_compressor_kv");
    w.compressor_gate = get("attn_compressor_gate");
    w.compressor_ape = get("attn_compressor_ape");
    w.compressor_norm = get("attn_compressor_norm");
    w.indexer_proj = get("indexer.proj");
    w.indexer_q_b = get("indexer.attn_q_b");
    w.indexer_compressor_kv = get("indexer_compressor_kv");
    w.indexer_compressor_gate = get("indexer_compressor_gate");
    w.indexer_compressor_ape = get("indexer_compressor_ape");
    w.indexer_compressor_norm = get("indexer_compressor_norm");
    w.ffn_gate_inp = get("ffn_gate_inp");
    if (auto it =
            integers_.find(absl::StrCat("blk.", l, ".ffn_gate_tid2eid.weight"));
        it != integers_.end())
      w.tid2eid = it->second;
    w.exp_probs_b = get("exp_probs_b", "bias");
    w.ffn_norm = get("ffn_norm");
    w.ffn_gate_exps = get("ffn_gate_exps");
    w.ffn_up_exps = get("ffn_up_exps");
    w.ffn_down_exps = get("ffn_down_exps");
    w.ffn_gate_shexp = get("ffn_gate_shexp");
    w.ffn_up_shexp = get("ffn_up_shexp");
    w.ffn_down_shexp = get("ffn_down_shexp");
    layers_.push_back(w);
  }
}

} // namespace kf::deepseek_v4::reference
