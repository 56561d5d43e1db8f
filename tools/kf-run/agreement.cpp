#include "agreement.h"

#include <algorithm>
#include <cmath>

namespace kf::run_tool {

namespace {

// log Σ e^x, from the largest x.
double logSumExp(std::span<const float> x) {
  const double top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (float v : x)
    sum += std::exp(static_cast<double>(v) - top);
  return top + std::log(sum);
}

} // namespace

void LogitsAgreement::add(std::span<const float> reference,
                          std::span<const float> other) {
  const double lp = logSumExp(reference), lq = logSumExp(other);
  double kl = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double logP = reference[i] - lp, logQ = other[i] - lq;
    kl += std::exp(logP) * (logP - logQ);
    maxAbsDiff = std::max(
        maxAbsDiff, std::abs(static_cast<double>(reference[i]) - other[i]));
  }
  // Rounding can leave a divergence of identical distributions a hair
  // below zero.
  kl = std::max(kl, 0.0);
  ++positions;
  klSum += kl;
  klMax = std::max(klMax, kl);
  auto argmax = [](std::span<const float> x) {
    return std::max_element(x.begin(), x.end()) - x.begin();
  };
  argmaxEqual += argmax(reference) == argmax(other) ? 1 : 0;
}

} // namespace kf::run_tool
