// DeepSeek-V4 golden reference: the pooling of one compressed KV entry
// (spec/deepseek_v4.md §4.3, precisions §8: "compression needs fp32").
//
// The inputs are the compressor's fp32 projections of the block's tokens,
// a_u = x_u · Wkvᵀ (the values) and g_u = x_u · Wgateᵀ (the gate scores),
// each [tokens, w] row-major, and the learned per-slot score bias ape
// [ratio, w]. The projection width w is d for ratio 128 and 2d for the
// overlapping ratio 4 (the spec's c·d with c = 1 or 2; below, c is the entry
// index). The entry is a per-channel softmax over the token slots of
// (g + ape), pooling a. It is returned in fp32; what follows it (bf16 cast,
// RMSNorm, RoPE at the block's first position, FP8SIM or Hadamard + FP4SIM)
// is the caller's, in §4.3's order.
#pragma once

#include <span>

namespace kf::deepseek_v4::reference {

// Entry c of ratio 128 (HCA, no overlap): slot m is token 128c + m, with value
// a[m] and score g[m] + ape[m]; entry[ch] = Σ_m softmax_m(score[·][ch]) ·
// a[m][ch]. values and gates [ratio, d], ape [ratio, d], entry [d].
void pool_compressed_entry(std::span<const float> values,
                           std::span<const float> gates,
                           std::span<const float> ape, int ratio,
                           std::span<float> entry);

// Entry c of ratio 4 with overlap (CSA): 2·ratio slots per channel ch < d.
//   previous-block slots m: token 4(c−1)+m, value prev_values[m][ch],
//                           score prev_gates[m][ch] + ape[m][ch]
//   own-block slots m:      token 4c+m, value own_values[m][d+ch],
//                           score own_gates[m][d+ch] + ape[m][d+ch]
// The first d projection channels serve the "previous" role and the second d
// the "own" role. For entry c = 0 there is no previous block: pass empty
// prev spans, and its slots take value 0 and score −inf as §4.3 says.
// Each values/gates span is [ratio, 2d], ape [ratio, 2d], entry [d].
void pool_compressed_entry_overlap(std::span<const float> prev_values,
                                   std::span<const float> prev_gates,
                                   std::span<const float> own_values,
                                   std::span<const float> own_gates,
                                   std::span<const float> ape, int ratio,
                                   std::span<float> entry);

} // namespace kf::deepseek_v4::reference
