// DeepSeek-V4 golden reference: sparse attention with a sink and the window
// index set (docs/models/deepseek_v4_model.md §2 "Sparse attention with
// sink", §4.2, precisions §8).
#pragma once

#include <cstdint>
#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

// §4.2: the attention's softmax scale is head_dim^−0.5 with no YaRN
// temperature (§1).
float attentionScale(int headDim);

// SAttn(q, bank, sink, idx, scale) of §2 for one query row.
//   q      [n_heads, head_dim]  bf16 values
//   bank   [rows, head_dim]     the KV bank; each row is both key and value
//   sink   [n_heads]            one logit per head, fp32
//   idx    bank rows to attend to; −1 is padding and is skipped
//   out    [n_heads, head_dim]
// Per head h: l_j = scale · (q_h · bank[idx_j]) in fp32; a softmax over the
// l_j together with sink_h — the sink is not multiplied by scale and has a
// zero value vector, so it only takes probability mass; the probabilities
// rounded to bf16 (as the kernel does before its PV product); then
// out_h = bf16(Σ_j p_j · bank[idx_j]), accumulated in fp64. A row whose list
// is all padding gives zeros. Under Precision::F32 neither the
// probabilities nor out are rounded to bf16.
void sparseAttention(std::span<const float> q, std::span<const float> bank,
                     std::span<const float> sink, std::span<const int32_t> idx,
                     int nHeads, int headDim, float scale, std::span<float> out,
                     Precision precision = Precision::Model);

// The window of the query at absolute position t (§4.2): positions
// t − window + 1 .. t in ascending order, −1 for the ones before position 0.
// out.size() is the window (128 in the full model, §1). Mapping positions to
// bank rows (fresh rows in prefill, ring slot p mod window in decode) is an
// address convention of the caller.
void windowPositions(int64_t t, std::span<int32_t> out);

// The number of compressed entries visible to the query at position t: the
// blocks whose last token is ≤ t, i.e. c < floor((t + 1) / ratio) (§4.2).
// HCA attends to all of them; CSA's indexer chooses among them.
int64_t visibleCompressed(int64_t t, int ratio);

} // namespace kf::deepseek_v4::reference
