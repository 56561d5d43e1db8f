// DeepSeek-V4 golden reference: the indexer's scores and its choice of
// compressed entries (docs/models/deepseek_v4_model.md §4.4, precisions §8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kf/deepseek_v4/reference/precision.h"

namespace kf::deepseek_v4::reference {

// score[c] = Σ_h w[h] · ReLU(q_h · K_c) for one query row (§4.4), in the
// reference's bf16 arithmetic (§8): each dot product is accumulated in fp32
// and rounded to bf16, ReLU'd, multiplied by w[h] and rounded to bf16; the
// sum over heads is accumulated and rounded to bf16 once. Under
// Precision::F32 nothing is rounded to bf16.
//   q       [n_heads, head_dim]  the indexer query after Hadamard and FP4SIM
//   weights [n_heads]            bf16, already scaled by head_dim^−½·n_heads^−½
//   keys    [n_entries, head_dim] the indexer's compressed entries
//   scores  [n_entries]
void indexerScores(std::span<const float> q, std::span<const float> weights,
                   std::span<const float> keys, int nHeads, int headDim,
                   std::span<float> scores,
                   Precision precision = Precision::Model);

// The entries the query attends to (§4.4): the top k = out.size() entries by
// score, where only entries c < n_valid (the causal ones, §4.2) are
// candidates and picks past them are −1 — as in the reference's prefill,
// where future entries score −inf and k = min(index_topk, entries in the
// call). The caller sizes `out` so; k ≤ scores.size(). Ties go to the lower c
// (top_k's tie-break), so a row's choice does not depend on how many future
// entries the call holds.
void indexerSelect(std::span<const float> scores, size_t nValid,
                   std::span<int32_t> out);

} // namespace kf::deepseek_v4::reference
