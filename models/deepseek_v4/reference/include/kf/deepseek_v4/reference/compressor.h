// DeepSeek-V4 golden reference: the pooling of one compressed KV entry
// (docs/models/deepseek_v4_model.md §4.3, precisions §8: pooling in fp32).
//
// The inputs are the compressor's fp32 projections of the block's tokens,
// a_u = x_u · Wkvᵀ (the values) and g_u = x_u · Wgateᵀ (the gate scores),
// each [tokens, w] row-major, and the learned per-slot score bias ape
// [ratio, w]. The projection width w is d for ratio 128 and 2d for the
// overlapping ratio 4 (the spec's c·d with c = 1 or 2; below, c is the entry
// index). The entry is a per-channel softmax over the token slots of
// (g + ape), pooling a. It is returned in fp32; what follows it (bf16 cast,
// RMSNorm, RoPE at the block's first position, FP8SIM or Hadamard + FP4SIM)
// is done by the Compressor class below, in §4.3's order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kf/deepseek_v4/reference/options.h"

namespace kf::deepseek_v4::reference {

// Entry c of ratio 128 (HCA, no overlap): slot m is token 128c + m, with value
// a[m] and score g[m] + ape[m]; entry[ch] = Σ_m softmax_m(score[·][ch]) ·
// a[m][ch]. values and gates [ratio, d], ape [ratio, d], entry [d].
void poolCompressedEntry(std::span<const float> values,
                         std::span<const float> gates,
                         std::span<const float> ape, int ratio,
                         std::span<float> entry);

// Entry c of ratio 4 with overlap (CSA): 2·ratio slots per channel ch < d.
//   previous-block slots m: token 4(c−1)+m, value prevValues[m][ch],
//                           score prevGates[m][ch] + ape[m][ch]
//   own-block slots m:      token 4c+m, value ownValues[m][d+ch],
//                           score ownGates[m][d+ch] + ape[m][d+ch]
// The first d projection channels serve the "previous" role and the second d
// the "own" role. For entry c = 0 there is no previous block: pass empty
// prev spans, and its slots take value 0 and score −inf as §4.3 says.
// Each values/gates span is [ratio, 2d], ape [ratio, 2d], entry [d].
void poolCompressedEntryOverlap(std::span<const float> prevValues,
                                std::span<const float> prevGates,
                                std::span<const float> ownValues,
                                std::span<const float> ownGates,
                                std::span<const float> ape, int ratio,
                                std::span<float> entry);

// What follows the pooling of an entry (§4.3): the main compressor's entries
// get FP8SIM on their non-rope dims, the indexer's a Hadamard and FP4SIM.
enum class CompressorKind { Main, Indexer };

// A compressor's parameters (§4.3): wkv and wgate [w][D] with w = halves·d
// (halves 2 for the overlapping ratio 4, 1 for ratio 128), ape [ratio][w] and
// the entry norm [d].
struct CompressorWeights {
  std::span<const float> kv;
  std::span<const float> gate;
  std::span<const float> ape;
  std::span<const float> norm;
};

struct CompressorShape {
  int ratio = 0;
  bool overlap = false; // ratio 4: each entry also pools the previous block
  int dim = 0;          // d: 512 (main) or 128 (indexer) in the full model
  int ropeDim = 0;      // the last rope_dim dims of an entry rotate
  float normEps = 0;
};

// One compressor of one layer with its cache of entries and its running
// state (§4.3). Every input x is one token's normed block input [D].
//
// The running state holds the fp32 projections (a_u, g_u) of the tokens of
// the unfinished block and, when overlapping, of the last complete block:
// the spec's kv_state/score_state with the ape added when an entry is
// pooled instead of when a token is stored, which is the same fp32 sum.
// An absent previous block is the spec's (0, −inf) initial state.
class Compressor {
public:
  Compressor(CompressorWeights weights, CompressorShape shape,
             CompressorKind kind, std::span<const float> ropeFreqs,
             const Options &options);

  // A prefill from position 0 (§4.3): forgets the previous sequence, builds
  // every complete block c < T/ratio of x [T, D] in one pass, and keeps the
  // leftover tokens (and, when overlapping, the last complete block) as
  // the running state.
  void prefill(std::span<const float> x);
  // The token at `pos` of a decode: stored in the running state; when it
  // completes its block ((pos + 1) mod ratio == 0) entry pos / ratio is
  // built and cached.
  void decode(std::span<const float> x, int64_t pos);
  // The same, given the tokens' projections (values a = x·Wkvᵀ and gates
  // g = x·Wgateᵀ, [T, w] and [w]) instead of x: what a graph feeds, whose
  // linears compute them. A compressor fed only so may have empty kv and
  // gate weights.
  void prefillProjected(std::span<const float> a, std::span<const float> g);
  void decodeProjected(std::span<const float> a, std::span<const float> g,
                       int64_t pos);

  // The cached entries, [entries()][dim] row-major.
  std::span<const float> entries() const { return entries_; }
  int64_t size() const;

private:
  // The projections a = x·Wkvᵀ and g = x·Wgateᵀ of one token, in fp32.
  void project(std::span<const float> x, std::span<float> a,
               std::span<float> g) const;
  // Pools entry c from the projections of its block (and of the block
  // before it when overlapping; empty for c = 0), then bf16, RMSNorm, RoPE
  // at position c·ratio and the kind's simulation, and caches it.
  void buildEntry(int64_t c, std::span<const float> prevValues,
                  std::span<const float> prevGates,
                  std::span<const float> values, std::span<const float> gates);

  CompressorWeights weights_;
  CompressorShape shape_;
  CompressorKind kind_;
  std::vector<float> ropeFreqs_; // a copy: the caller's table may move
  Options options_;
  size_t width_; // halves·d
  std::vector<float> entries_;
  // Running state: projections of the unfinished block's tokens and of the
  // last complete block (overlapping only), [tokens][width] each.
  std::vector<float> values_, gates_, prevValues_, prevGates_;
};

} // namespace kf::deepseek_v4::reference
