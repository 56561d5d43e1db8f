// DeepSeek-V4 golden reference: manifold-constrained hyper-connections
// (docs/models/deepseek_v4_model.md §4.1 HcPre/HcPost, §3 HcHead,
// precisions §8).
//
// The stream state of one token is `mult` streams of `dim` values, stream-major
// ([mult, dim] row-major, so its flattening is the [mult·dim] vector Z of
// §4.1). Streams are bf16 values; the mixing maths is fp32.
#pragma once

#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

struct HcConfig {
  int mult = 4;           // hc_mult: streams
  int sinkhornIters = 20; // hc_sinkhorn_iters: column normalisations
  float eps = 1e-6f;      // hcEps: after sigmoid, softmax and in Sinkhorn
  float normEps = 1e-6f;  // rms_norm_eps: the RMS factor of the mixes
};

// The learned parameters of one HC site (attn or ffn of a block, or the
// head), all fp32. For a block: fn [(2 + mult)·mult, mult·dim] row-major,
// base [(2 + mult)·mult], scale [3]. For the head: fn [mult, mult·dim],
// base [mult], scale [1].
struct HcWeights {
  std::span<const float> fn;
  std::span<const float> base;
  std::span<const float> scale;
};

// Sinkhorn normalisation of the n×n matrix `comb` (row-major, row j, column
// k) in place, in this exact order (§4.1 step 6):
//   softmax over each row, then + eps;
//   divide each column by (its sum over j + eps);
//   then (iters − 1) times: divide each row by (its sum + eps), then each
//   column by (its sum + eps).
// So `iters` counts the column normalisations (20 in the model). fp32, with
// the sums accumulated in fp64.
void sinkhorn(std::span<float> comb, int n, int iters, float eps);

// HcPre (§4.1) for one token: from the streams, the block input
// x = bf16(Σ_j pre_j · stream_j) [dim], the post weights post [mult] (each in
// (0, 2)) and the Sinkhorn-normalised combination comb [mult, mult]. Under
// Precision::F32, here and in hc_post and hc_head, nothing is rounded to
// bf16.
void hcPre(std::span<const float> streams, const HcWeights &weights,
           const HcConfig &config, std::span<float> x, std::span<float> post,
           std::span<float> comb, Precision precision = Precision::Model);

// HcPost (§4.1) for one token: new stream k =
// bf16(post_k · f + Σ_j comb[j][k] · old stream j), fp32 maths with fp64
// accumulation. Column k of
// comb feeds new stream k. `newStreams` must not overlap `oldStreams`.
void hcPost(std::span<const float> f, std::span<const float> oldStreams,
            std::span<const float> post, std::span<const float> comb, int mult,
            std::span<float> newStreams,
            Precision precision = Precision::Model);

// HcHead (§3) for one token: the streams reduced to one without Sinkhorn,
// y = bf16(Σ_j pre_j · stream_j) with pre_j = sigmoid(m_j · scale[0] +
// base_j) + eps.
void hcHead(std::span<const float> streams, const HcWeights &weights,
            const HcConfig &config, std::span<float> y,
            Precision precision = Precision::Model);

} // namespace kf::deepseek_v4::reference
