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
  std::span<const float> attnNorm;    // [D]
  std::span<const float> attnSinks;   // [H]
  std::span<const float> attnQA;      // [Rq][D]            wq_a
  std::span<const float> attnQANorm;  // [Rq]               q_norm
  std::span<const float> attnQB;      // [H·Dh][Rq]         wq_b
  std::span<const float> attnKv;      // [Dh][D]            wkv
  std::span<const float> attnKvANorm; // [Dh]               kv_norm
  std::span<const float> attnOutputA; // [G·Ro][H·Dh/G]     wo_a
  std::span<const float> attnOutputB; // [D][G·Ro]          wo_b
  std::span<const float> hcAttnFn, hcAttnBase, hcAttnScale;
  std::span<const float> hcFfnFn, hcFfnBase, hcFfnScale;
  std::span<const float> compressorKv;   // [c·Dh][D]
  std::span<const float> compressorGate; // [c·Dh][D]
  std::span<const float> compressorApe;  // [ratio][c·Dh]
  std::span<const float> compressorNorm; // [Dh]
  std::span<const float> indexerProj;    // [Hi][D]            weights_proj
  std::span<const float> indexerQB;      // [Hi·Di][Rq]        indexer wq_b
  std::span<const float> indexerCompressorKv;   // [2·Di][D]
  std::span<const float> indexerCompressorGate; // [2·Di][D]
  std::span<const float> indexerCompressorApe;  // [4][2·Di]
  std::span<const float> indexerCompressorNorm; // [Di]
  std::span<const float> ffnGateInp;            // [E][D]   gate
  std::span<const int32_t> tid2eid;             // [vocab][k]
  std::span<const float> expProbsB;             // [E]      gate bias
  std::span<const float> ffnNorm;               // [D]
  std::span<const float> ffnGateExps;           // [E][F][D]  w1
  std::span<const float> ffnUpExps;             // [E][F][D]  w3
  std::span<const float> ffnDownExps;           // [E][D][F]  w2
  std::span<const float> ffnGateShexp;          // [F·ns][D]
  std::span<const float> ffnUpShexp;            // [F·ns][D]
  std::span<const float> ffnDownShexp;          // [D][F·ns]
};

class Weights {
public:
  // Tensors by llama.cpp name (tensors.h), in fp32; tid2eid tables in int32.
  using FloatTensors = std::map<std::string, std::vector<float>, std::less<>>;
  using IntTensors = std::map<std::string, std::vector<int32_t>, std::less<>>;

  // Decodes every tensor of `config` from `file` with kf::dequantize, after
  // validateTensors has checked names, shapes and formats.
  static absl::StatusOr<Weights> fromGguf(const Config &config,
                                          const gguf::File &file);
  // Takes the tensors as given, for models built in memory: each tensor of
  // tensorSpecs(config) must be present with its element count (tid2eid in
  // `integers`, every other in `floats`) and nothing else, and every tid2eid
  // entry must name an expert below E.
  static absl::StatusOr<Weights>
  fromFp32(const Config &config, FloatTensors floats, IntTensors integers);

  Weights(Weights &&) = default;
  Weights &operator=(Weights &&) = default;
  Weights(const Weights &) = delete;
  Weights &operator=(const Weights &) = delete;

  const Config &config() const { return config_; }
  std::span<const float> tokenEmbd() const { return tokenEmbd_; } // [V][D]
  std::span<const float> output() const { return output_; }       // [V][D]
  std::span<const float> outputNorm() const { return outputNorm_; }
  std::span<const float> outputHcFn() const { return outputHcFn_; }
  std::span<const float> outputHcBase() const { return outputHcBase_; }
  std::span<const float> outputHcScale() const { return outputHcScale_; }
  const LayerWeights &layer(uint32_t layer) const { return layers_.at(layer); }

private:
  Weights(const Config &config, FloatTensors floats, IntTensors integers);

  Config config_;
  // The spans below point into these maps' nodes, which a move keeps.
  FloatTensors floats_;
  IntTensors integers_;
  std::span<const float> tokenEmbd_, output_, outputNorm_;
  std::span<const float> outputHcFn_, outputHcBase_, outputHcScale_;
  std::vector<LayerWeights> layers_;
};

} // namespace kf::deepseek_v4::reference
