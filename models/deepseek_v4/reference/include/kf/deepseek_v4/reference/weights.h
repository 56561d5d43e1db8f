// DeepSeek-V4 golden reference: every weight of a model decoded to fp32
// (docs/models/deepseek_v4_model.md §1.3 under llama.cpp's names, tensors.h),
// addressable by layer and role.
//
// A matrix keeps its ggml layout: ggml ne = [in, out] is the row-major
// [out][in] of torch, so row n of a projection holds output n's weights. The
// experts of a layer are [E][out][in]. tid2eid is [vocab][k] int32.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/deepseek_v4/config.h"
#include "kf/runtime/gguf.h"

namespace kf::deepseek_v4::reference {

// One trunk layer's tensors, named after their llama.cpp roles. A role the
// layer does not have (a compressor on a window-only layer, the indexer
// outside CSA layers, tid2eid on learned layers, exp_probs_b on hash layers)
// is an empty span.
struct LayerWeights {
  std::span<const float> attn_norm;      // [D]
  std::span<const float> attn_sinks;     // [H]
  std::span<const float> attn_q_a;       // [Rq][D]            wq_a
  std::span<const float> attn_q_a_norm;  // [Rq]               q_norm
  std::span<const float> attn_q_b;       // [H·Dh][Rq]         wq_b
  std::span<const float> attn_kv;        // [Dh][D]            wkv
  std::span<const float> attn_kv_a_norm; // [Dh]               kv_norm
  std::span<const float> attn_output_a;  // [G·Ro][H·Dh/G]     wo_a
  std::span<const float> attn_output_b;  // [D][G·Ro]          wo_b
  std::span<const float> hc_attn_fn, hc_attn_base, hc_attn_scale;
  std::span<const float> hc_ffn_fn, hc_ffn_base, hc_ffn_scale;
  std::span<const float> compressor_kv;   // [c·Dh][D]
  std::span<const float> compressor_gate; // [c·Dh][D]
  std::span<const float> compressor_ape;  // [ratio][c·Dh]
  std::span<const float> compressor_norm; // [Dh]
  std::span<const float> indexer_proj;    // [Hi][D]            weights_proj
  std::span<const float> indexer_q_b;     // [Hi·Di][Rq]        indexer wq_b
  std::span<const float> indexer_compressor_kv;   // [2·Di][D]
  std::span<const float> indexer_compressor_gate; // [2·Di][D]
  std::span<const float> indexer_compressor_ape;  // [4][2·Di]
  std::span<const float> indexer_compressor_norm; // [Di]
  std::span<const float> ffn_gate_inp;            // [E][D]   gate
  std::span<const int32_t> tid2eid;               // [vocab][k]
  std::span<const float> exp_probs_b;             // [E]      gate bias
  std::span<const float> ffn_norm;                // [D]
  std::span<const float> ffn_gate_exps;           // [E][F][D]  w1
  std::span<const float> ffn_up_exps;             // [E][F][D]  w3
  std::span<const float> ffn_down_exps;           // [E][D][F]  w2
  std::span<const float> ffn_gate_shexp;          // [F·ns][D]
  std::span<const float> ffn_up_shexp;            // [F·ns][D]
  std::span<const float> ffn_down_shexp;          // [D][F·ns]
};

class Weights {
public:
  // Tensors by llama.cpp name (tensors.h), in fp32; tid2eid tables in int32.
  using FloatTensors = std::map<std::string, std::vector<float>, std::less<>>;
  using IntTensors = std::map<std::string, std::vector<int32_t>, std::less<>>;

  // Decodes every tensor of `config` from `file` with kf::dequantize, after
  // validate_tensors has checked names, shapes and formats.
  static absl::StatusOr<Weights> from_gguf(const Config &config,
                                           const gguf::File &file);
  // Takes the tensors as given, for models built in memory: each tensor of
  // tensor_specs(config) must be present with its element count (tid2eid in
  // `integers`, every other in `floats`) and nothing else, and every tid2eid
  // entry must name an expert below E.
  static absl::StatusOr<Weights>
  from_fp32(const Config &config, FloatTensors floats, IntTensors integers);

  Weights(Weights &&) = default;
  Weights &operator=(Weights &&) = default;
  Weights(const Weights &) = delete;
  Weights &operator=(const Weights &) = delete;

  const Config &config() const { return config_; }
  std::span<const float> token_embd() const { return token_embd_; } // [V][D]
  std::span<const float> output() const { return output_; }         // [V][D]
  std::span<const float> output_norm() const { return output_norm_; }
  std::span<const float> output_hc_fn() const { return output_hc_fn_; }
  std::span<const float> output_hc_base() const { return output_hc_base_; }
  std::span<const float> output_hc_scale() const { return output_hc_scale_; }
  const LayerWeights &layer(uint32_t layer) const { return layers_.at(layer); }

private:
  Weights(const Config &config, FloatTensors floats, IntTensors integers);

  Config config_;
  // The spans below point into these maps' nodes, which a move keeps.
  FloatTensors floats_;
  IntTensors integers_;
  std::span<const float> token_embd_, output_, output_norm_;
  std::span<const float> output_hc_fn_, output_hc_base_, output_hc_scale_;
  std::vector<LayerWeights> layers_;
};

} // namespace kf::deepseek_v4::reference
