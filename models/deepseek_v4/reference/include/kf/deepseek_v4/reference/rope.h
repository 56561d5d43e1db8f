// DeepSeek-V4 golden reference: rotary position embedding
// (docs/models/deepseek_v4_model.md §2 "RoPE" and "Frequencies").
#pragma once

#include <cstdint>
#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

// The frequency table of one kind of layer (§1, §2).
struct RopeConfig {
  int ropeDim = 64; // dims per head that rotate (the last 64, §1)
  double base = 10000;
  bool yarn = false;
  // YaRN (§2), used only when `yarn` is set.
  double yarnFactor = 16;
  double betaFast = 32;
  double betaSlow = 1;
  double originalLen = 65536; // original_max_position_embeddings
};

// SWA-only layers (ratio 0, MTP and DSpark stages): base 10000, no YaRN.
inline constexpr RopeConfig kSwaRope{};
// Compressed layers (ratio 4 or 128) and their indexers: base 160000 + YaRN.
inline constexpr RopeConfig kCompressedRope{.base = 160000, .yarn = true};

// YaRN's correction dim (§2): the dim index at which the frequency makes
// `rotations` full turns over the original context,
// cd(n) = rope_dim · ln(originalLen / (2πn)) / (2 · ln base).
double yarnCorrectionDim(const RopeConfig &config, double rotations);

// The ramp's ends (§2): lo = max(floor(cd(beta_fast)), 0),
// hi = min(ceil(cd(beta_slow)), rope_dim - 1). 15 and 25 for kCompressedRope.
struct YarnRange {
  int lo;
  int hi;
};
YarnRange yarnCorrectionRange(const RopeConfig &config);

// The rope_dim/2 frequencies f_i = base^(−2i/rope_dim), rounded to fp32 once
// (the reference holds an fp32 table). With YaRN each is blended in fp32 with
// f_i/factor by the ramp r_i = clamp((i − lo)/(hi − lo), 0, 1):
// f'_i = f_i·(1 − r_i) + (f_i/factor)·r_i.
void ropeFrequencies(const RopeConfig &config, std::span<float> freqs);

// Rotates the interleaved pairs (x[2i], x[2i+1]) of one rope slice in place by
// exp(j·pos·f_i) (§2, GPT-J style). The angle is formed in fp32 as
// fl32(fl32(pos) · f_i), as the reference does, so that large positions give
// the reference's angle; the product is taken in fp32 and the result rounded
// to bf16 (the reference writes it back into a bf16 tensor); under
// Precision::F32 the rotation is taken in fp64 and rounded to fp32 once.
// x.size() must be 2 · freqs.size().
void rope(std::span<float> x, int64_t pos, std::span<const float> freqs,
          Precision precision = Precision::Model);

// The inverse rotation, by exp(−j·pos·f_i) (§4.2: de-rotating the attention
// output at the query position). Same precision as rope().
void inverseRope(std::span<float> x, int64_t pos, std::span<const float> freqs,
                 Precision precision = Precision::Model);

} // namespace kf::deepseek_v4::reference
