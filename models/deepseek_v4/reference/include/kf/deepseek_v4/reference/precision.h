// DeepSeek-V4 golden reference: the precision a forward pass holds its
// activations in (docs/models/deepseek_v4.md, "Precision modes").
#pragma once

#include <span>

namespace kf::deepseek_v4::reference {

enum class Precision {
  // The model's own arithmetic (docs/models/deepseek_v4_model.md §8): an
  // activation the reference keeps in bf16 is rounded to bf16, and the QAT
  // simulations run where Options::simulateQuantization says.
  Model,
  // Every activation kept in f32, no simulation, weights as decoded: the
  // arithmetic independent f32 implementations of the model share, so that
  // they can certify this one to f32 noise.
  F32,
};

// An activation the model holds in bf16, as `precision` holds it: rounded
// to the nearest bf16 (ties to even) under Model, unchanged under F32.
float hold(Precision precision, float x);
void hold(Precision precision, std::span<float> x);

} // namespace kf::deepseek_v4::reference
