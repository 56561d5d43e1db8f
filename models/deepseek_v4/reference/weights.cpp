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
absl::Status checkSupported(const Config &config) {
  if (!config.normalizeWeights)
    return absl::UnimplementedError(
        "deepseek_v4 reference: deepseek4.expert_weights_norm is false; the "
        "reference routes with normalised weights only "
        "(docs/models/deepseek_v4_model.md §4.5)");
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Weights> Weights::fromGguf(const Config &config,
                                          const gguf::File &file) {
  KF_RETURN_IF_ERROR(checkSupported(config));
  KF_RETURN_IF_ERROR(validateTensors(config, file));
  FloatTensors floats;
  IntTensors integers;
  for (const TensorSpec &spec : tensorSpecs(config)) {
    const gguf::TensorInfo &t = *file.findTensor(spec.name);
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

absl::StatusOr<Weights> Weights::fromFp32(const Config &config,
                                          FloatTensors floats,
                                          IntTensors integers) {
  KF_RETURN_IF_ERROR(checkSupported(config));
  std::vector<TensorSpec> specs = tensorSpecs(config);
  std::set<std::string_view> expectedFloats, expectedIntegers;
  for (const TensorSpec &spec : specs) {
    bool integer = spec.kind == TensorKind::Tid2Eid;
    (integer ? expectedIntegers : expectedFloats).insert(spec.name);
    size_t found = 0;
    if (integer) {
      auto it = integers.find(spec.name);
      if (it == integers.end())
        return absl::NotFoundError(absl::StrCat(
            "deepseek_v4 reference: no int32 tensor '", spec.name, "'"));
      found = it->second.size();
      if (found == static_cast<size_t>(spec.elements()))
        KF_RETURN_IF_ERROR(checkTid2eidRows(
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
                       " (shape ", gguf::shapeString(spec.shape), ")"));
  }
  auto checkNames = [](const auto &tensors,
                       const std::set<std::string_view> &expected,
                       std::string_view type) -> absl::Status {
    for (const auto &[name, values] : tensors)
      if (!expected.contains(name))
        return absl::InvalidArgumentError(
            absl::StrCat("deepseek_v4 reference: unexpected ", toAbsl(type),
                         " tensor '", name, "'"));
    return absl::OkStatus();
  };
  KF_RETURN_IF_ERROR(checkNames(floats, expectedFloats, "fp32"));
  KF_RETURN_IF_ERROR(checkNames(integers, expectedIntegers, "int32"));
  return Weights(config, std::move(floats), std::move(integers));
}

Weights::Weights(const Config &config, FloatTensors floats, IntTensors integers)
    : config_(config), floats_(std::move(floats)),
      integers_(std::move(integers)) {
  auto global = [&](std::string_view name) -> std::span<const float> {
    return floats_.find(name)->second;
  };
  tokenEmbd_ = global("token_embd.weight");
  output_ = global("output.weight");
  outputNorm_ = global("output_norm.weight");
  outputHcFn_ = global("output_hc_fn.weight");
  outputHcBase_ = global("output_hc_base.weight");
  outputHcScale_ = global("output_hc_scale.weight");

  for (uint32_t l = 0; l < config_.nLayer; ++l) {
    // The layer's tensor of `role`, or an empty span if it has none.
    auto get = [&](std::string_view role,
                   std::string_view suffix =
                       "weight") -> std::span<const float> {
      auto it = floats_.find(
          absl::StrCat("blk.", l, ".", toAbsl(role), ".", toAbsl(suffix)));
      if (it == floats_.end())
        return {};
      return it->second;
    };
    LayerWeights w;
    w.attnNorm = get("attn_norm");
    w.attnSinks = get("attn_sinks");
    w.attnQA = get("attn_q_a");
    w.attnQANorm = get("attn_q_a_norm");
    w.attnQB = get("attn_q_b");
    w.attnKv = get("attn_kv");
    w.attnKvANorm = get("attn_kv_a_norm");
    w.attnOutputA = get("attn_output_a");
    w.attnOutputB = get("attn_output_b");
    w.hcAttnFn = get("hc_attn_fn");
    w.hcAttnBase = get("hc_attn_base");
    w.hcAttnScale = get("hc_attn_scale");
    w.hcFfnFn = get("hc_ffn_fn");
    w.hcFfnBase = get("hc_ffn_base");
    w.hcFfnScale = get("hc_ffn_scale");
    w.compressorKv = get("attn_compressor_kv");
    w.compressorGate = get("attn_compressor_gate");
    w.compressorApe = get("attn_compressor_ape");
    w.compressorNorm = get("attn_compressor_norm");
    w.indexerProj = get("indexer.proj");
    w.indexerQB = get("indexer.attn_q_b");
    w.indexerCompressorKv = get("indexer_compressor_kv");
    w.indexerCompressorGate = get("indexer_compressor_gate");
    w.indexerCompressorApe = get("indexer_compressor_ape");
    w.indexerCompressorNorm = get("indexer_compressor_norm");
    w.ffnGateInp = get("ffn_gate_inp");
    if (auto it =
            integers_.find(absl::StrCat("blk.", l, ".ffn_gate_tid2eid.weight"));
        it != integers_.end())
      w.tid2eid = it->second;
    w.expProbsB = get("exp_probs_b", "bias");
    w.ffnNorm = get("ffn_norm");
    w.ffnGateExps = get("ffn_gate_exps");
    w.ffnUpExps = get("ffn_up_exps");
    w.ffnDownExps = get("ffn_down_exps");
    w.ffnGateShexp = get("ffn_gate_shexp");
    w.ffnUpShexp = get("ffn_up_shexp");
    w.ffnDownShexp = get("ffn_down_shexp");
    layers_.push_back(w);
  }
}

} // namespace kf::deepseek_v4::reference
