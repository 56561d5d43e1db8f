// DeepSeek-V4 golden reference: the discrete choices a forward makes — the
// MoE experts of each token (docs/models/deepseek_v4_model.md §4.5) and the
// compressed entries its indexer picks (§4.4) — with how clear each one was,
// so that another engine's choices can be compared wherever the reference's
// were not a near tie (docs/engine.md, "Layered golden").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace kf::deepseek_v4::reference {

// How clear a top-k pick is.
struct TopKGap {
  // The smallest value picked minus the largest one left out: how far the
  // pick was from going another way; +inf when nothing could have gone
  // another way (hash routing; no more candidates than picks).
  float margin = std::numeric_limits<float>::infinity();
  // The smallest value picked, the margin's scale.
  float lastPicked = 0;

  // The margin relative to the smallest value picked: the share of it the
  // values must move by for the pick to go another way.
  float relative() const {
    if (lastPicked == 0)
      return margin > 0 ? std::numeric_limits<float>::infinity() : 0.0f;
    return margin / std::fabs(lastPicked);
  }
};

struct Choice {
  enum class Kind : uint8_t { Experts, Entries };
  Kind kind;
  uint32_t layer;
  int64_t position;
  // What was picked, in the order picked: expert ids, or entry indices with
  // −1 for picks past the causal entries (indexerSelect).
  std::vector<int32_t> chosen;
  TopKGap gap;
};

// Every choice of a forward, in the order made: per layer, the indexer's
// picks of the call's tokens, then their experts.
using ChoiceLog = std::vector<Choice>;

// The gap of picking the top k of `values` (topK): the k-th largest minus
// the (k+1)-th, +inf when there is no (k+1)-th or it is −inf (masked); the
// k-th largest.
TopKGap topKGap(std::span<const float> values, size_t k);

} // namespace kf::deepseek_v4::reference
