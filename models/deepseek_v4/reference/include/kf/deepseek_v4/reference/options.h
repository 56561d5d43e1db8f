// DeepSeek-V4 golden reference: how a forward pass runs.
#pragma once

namespace kf::deepseek_v4::reference {

struct Options {
  // The reference's quantization simulations (its QAT, spec §2, §8): FP8SIM
  // on the KV latent and on the main compressor's entries, the FP8
  // activation quantization of every Lin, and Hadamard + FP4SIM on the
  // indexer's queries and keys. Off, the forward is the spec's arithmetic
  // without them; every bf16 rounding of §8 stays.
  bool simulate_quantization = true;
  // Whether prefill and decode return the stream state after every layer.
  bool keep_layer_streams = false;
};

} // namespace kf::deepseek_v4::reference
