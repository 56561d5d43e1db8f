// How two engines' logits agree, position by position, when both are fed
// the same tokens: the share of positions whose argmax is the same, the
// Kullback-Leibler divergence KL(reference || other) of their softmax
// distributions (mean and largest, in nats), and the largest logit
// difference (docs/engine.md, "Agreement with the reference").
#pragma once

#include <cstdint>
#include <span>

namespace kf::run_tool {

struct LogitsAgreement {
  int64_t positions = 0;
  int64_t argmaxEqual = 0;
  double klSum = 0, klMax = 0;
  double maxAbsDiff = 0;

  // Adds one position: `reference` and `other` are its logits (equal
  // sizes). The sums run in fp64 from the logits' largest value, so that no
  // exponential overflows.
  void add(std::span<const float> reference, std::span<const float> other);
  double meanKl() const { return positions ? klSum / positions : 0.0; }
  double argmaxShare() const {
    return positions ? static_cast<double>(argmaxEqual) / positions : 0.0;
  }
};

} // namespace kf::run_tool
