// DeepSeek-V4 golden reference: how a forward pass runs.
#pragma once

#include "kf/deepseek_v4/reference/choices.h"
#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

struct Options {
  // Model: the model's arithmetic, bf16 where it holds bf16; F32: every
  // activation in f32 and no simulation, whatever simulateQuantization says.
  Precision precision = Precision::Model;
  // The reference's quantization simulations (its QAT,
  // docs/models/deepseek_v4_model.md §2, §8): FP8SIM on the KV latent and on
  // the main compressor's entries, the FP8 activation quantization of every
  // Lin, and Hadamard + FP4SIM on the indexer's queries and keys. Off, the
  // forward is the spec's arithmetic without them; every bf16 rounding of §8
  // stays.
  bool simulateQuantization = true;
  // Whether prefill and decode return the stream state after every layer.
  bool keepLayerStreams = false;
  // Whether prefill returns the logits of every token, not only the last.
  bool keepPositionLogits = false;
  // Where to record every discrete choice the forward makes (choices.h), or
  // nowhere; it must outlive the model.
  ChoiceLog *choices = nullptr;

  // Whether the QAT simulations run: asked for, in the model's precision.
  bool simulates() const {
    return precision == Precision::Model && simulateQuantization;
  }
};

} // namespace kf::deepseek_v4::reference
