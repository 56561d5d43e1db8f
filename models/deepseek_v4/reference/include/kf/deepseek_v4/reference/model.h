// DeepSeek-V4 golden reference: the trunk's forward pass
// (docs/models/deepseek_v4_model.md §3 whole-model forward, §4 decoder block,
// §5 state, §6 head).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kf/deepseek_v4/reference/attention_layer.h"
#include "kf/deepseek_v4/reference/options.h"
#include "kf/deepseek_v4/reference/weights.h"

namespace kf::deepseek_v4::reference {

struct ForwardResult {
  // The fp32 logits of the call's last token, [V].
  std::vector<float> logits;
  // With Options::keepPositionLogits, the logits of each of the call's T
  // tokens, [T][V] (the last row equals `logits`); empty otherwise.
  std::vector<float> positionLogits;
  // With Options::keepLayerStreams, the stream state after each layer:
  // layerStreams[l] is [T][hc][D] for the call's T tokens; empty otherwise.
  std::vector<std::vector<float>> layerStreams;
};

class Model {
public:
  // `weights` must outlive the model.
  Model(const Weights &weights, const Options &options);

  // Starts a new sequence (every layer's ring, compressor and indexer state
  // reset, §4.3) and runs `tokens` from position 0 (§5).
  ForwardResult prefill(std::span<const int32_t> tokens);
  // Runs one token at the next position of the current sequence.
  ForwardResult decode(int32_t token);
  // The position the next decoded token takes.
  int64_t position() const { return position_; }

private:
  // Block_l of §4 over the call's tokens: HcPre, attn_norm, attention,
  // HcPost, then HcPre, ffn_norm, MoE, HcPost. streams [T][hc][D].
  void block(uint32_t layer, std::span<const int32_t> tokens, bool prefill,
             std::vector<float> &streams);
  // §3: embedding, every block, HcHead, the final norm and the fp32 head.
  ForwardResult forward(std::span<const int32_t> tokens, bool prefill);

  const Weights &weights_;
  Options options_;
  std::vector<AttentionLayer> attention_;
  int64_t position_ = 0;
};

} // namespace kf::deepseek_v4::reference
