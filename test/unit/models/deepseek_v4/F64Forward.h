// A second, independent DeepSeek-V4 trunk forward in plain f64, for checking
// the reference's exact-f32 mode (docs/models/deepseek_v4.md).
//
// It shares no code with models/deepseek_v4/reference: only the decoded f32
// weights (reference::Weights) and the Config are read. Every intermediate
// value is an f64, there is no bf16 rounding and no FP8/FP4 simulation, and
// the whole sequence is processed at once: each sublayer maps all T positions
// to all T positions, and the compressed entries of the whole sequence are
// built before any position attends to them. This is the opposite of the
// reference's one-token-at-a-time, cache-driven shape, so the two can only
// agree if both follow the model's definition.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/reference/weights.h"

namespace kf::deepseek_v4::test {

// How close the discrete choices of a forward came to a tie: the smallest
// gap, over every position and layer, between the last value a top-k took
// and the best value it left out. A gap far above f32 noise means f32 and f64
// arithmetic make the same choice.
struct SelectionMargins {
  double routing = 0; // learned MoE routing, on score + bias
  double indexer = 0; // the CSA indexer's entry selection
};

// The logits of every position of a prefill of `tokens` from position 0,
// [T][V] row-major.
std::vector<double> f64ForwardLogits(const Config &config,
                                     const reference::Weights &weights,
                                     std::span<const int32_t> tokens);

// The same, also reporting how close its top-k selections came to ties.
std::vector<double> f64ForwardLogits(const Config &config,
                                     const reference::Weights &weights,
                                     std::span<const int32_t> tokens,
                                     SelectionMargins &margins);

} // namespace kf::deepseek_v4::test
