#include "kf/deepseek_v4/reference/compressor.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "internal.h"

namespace kf::deepseek_v4::reference {

using internal::check;
using internal::exp_f32;

namespace {

// One channel's slots: its value and its score (gate + ape, in fp32).
struct Slot {
  float value;
  float score;
};

// Σ_m softmax(score)_m · value_m in fp32, the sums accumulated in fp64.
// At least one slot must have a finite score.
float softmax_pool(std::span<const Slot> slots) {
  float max = -std::numeric_limits<float>::infinity();
  for (const Slot &s : slots)
    max = std::max(max, s.score);
  std::vector<float> w(slots.size());
  double sum = 0;
  for (size_t m = 0; m < slots.size(); ++m) {
    w[m] = exp_f32(slots[m].score - max); // exp(−inf) = 0 for absent slots
    sum += w[m];
  }
  float total = static_cast<float>(sum);
  double pooled = 0;
  for (size_t m = 0; m < slots.size(); ++m)
    pooled += static_cast<double>(w[m] / total) * slots[m].value;
  return static_cast<float>(pooled);
}

} // namespace

void pool_compressed_entry(std::span<const float> values,
                           std::span<const float> gates,
                           std::span<const float> ape, int ratio,
                           std::span<float> entry) {
  size_t r = static_cast<size_t>(ratio);
  size_t d = entry.size();
  check(ratio > 0 && d > 0 && values.size() == r * d && gates.size() == r * d &&
            ape.size() == r * d,
        "pool_compressed_entry: values, gates and ape [ratio, d], entry [d]");
  std::vector<Slot> slots(r);
  for (size_t ch = 0; ch < d; ++ch) {
    for (size_t m = 0; m < r; ++m)
      slots[m] = {values[m * d + ch], gates[m * d + ch] + ape[m * d + ch]};
    entry[ch] = softmax_pool(slots);
  }
}

void pool_compressed_entry_overlap(std::span<const float> prev_values,
                                   std::span<const float> prev_gates,
                                   std::span<const float> own_values,
                                   std::span<const float> own_gates,
                                   std::span<const float> ape, int ratio,
                                   std::span<float> entry) {
  size_t r = static_cast<size_t>(ratio);
  size_t d = entry.size();
  size_t width = 2 * d; // c·d with c = 2
  check(ratio > 0 && d > 0 && own_values.size() == r * width &&
            own_gates.size() == r * width && ape.size() == r * width,
        "pool_compressed_entry_overlap: own values, gates and ape [ratio, 2d], "
        "entry [d]");
  bool first = prev_values.empty();
  check(first
            ? prev_gates.empty()
            : prev_values.size() == r * width && prev_gates.size() == r * width,
        "pool_compressed_entry_overlap: prev values and gates [ratio, 2d], or "
        "both empty for entry 0");
  std::vector<Slot> slots(2 * r);
  for (size_t ch = 0; ch < d; ++ch) {
    for (size_t m = 0; m < r; ++m) {
      size_t prev = m * width + ch;    // "previous" role: channels [0, d)
      size_t own = m * width + d + ch; // "own" role: channels [d, 2d)
      slots[m] = first ? Slot{0.0f, -std::numeric_limits<float>::infinity()}
                       : Slot{prev_values[prev], prev_gates[prev] + ape[prev]};
      slots[r + m] = {own_values[own], own_gates[own] + ape[own]};
    }
    entry[ch] = softmax_pool(slots);
  }
}

} // namespace kf::deepseek_v4::reference
