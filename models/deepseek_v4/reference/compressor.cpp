#include "kf/deepseek_v4/reference/compressor.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/hadamard.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/quant_sim.h"
#include "kf/deepseek_v4/reference/rope.h"

namespace kf::deepseek_v4::reference {

using internal::check;
using internal::expF32;

namespace {

// One channel's slots: its value and its score (gate + ape, in fp32).
struct Slot {
  float value;
  float score;
};

// Σ_m softmax(score)_m · value_m in fp32, the sums accumulated in fp64.
// At least one slot must have a finite score.
float softmaxPool(std::span<const Slot> slots) {
  float max = -std::numeric_limits<float>::infinity();
  for (const Slot &s : slots)
    max = std::max(max, s.score);
  std::vector<float> w(slots.size());
  double sum = 0;
  for (size_t m = 0; m < slots.size(); ++m) {
    w[m] = expF32(slots[m].score - max); // exp(−inf) = 0 for absent slots
    sum += w[m];
  }
  float total = static_cast<float>(sum);
  double pooled = 0;
  for (size_t m = 0; m < slots.size(); ++m)
    pooled += static_cast<double>(w[m] / total) * slots[m].value;
  return static_cast<float>(pooled);
}

} // namespace

void poolCompressedEntry(std::span<const float> values,
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
    entry[ch] = softmaxPool(slots);
  }
}

void poolCompressedEntryOverlap(std::span<const float> prevValues,
                                std::span<const float> prevGates,
                                std::span<const float> ownValues,
                                std::span<const float> ownGates,
                                std::span<const float> ape, int ratio,
                                std::span<float> entry) {
  size_t r = static_cast<size_t>(ratio);
  size_t d = entry.size();
  size_t width = 2 * d; // c·d with c = 2
  check(ratio > 0 && d > 0 && ownValues.size() == r * width &&
            ownGates.size() == r * width && ape.size() == r * width,
        "pool_compressed_entry_overlap: own values, gates and ape [ratio, 2d], "
        "entry [d]");
  bool first = prevValues.empty();
  check(first ? prevGates.empty()
              : prevValues.size() == r * width && prevGates.size() == r * width,
        "pool_compressed_entry_overlap: prev values and gates [ratio, 2d], or "
        "both empty for entry 0");
  std::vector<Slot> slots(2 * r);
  for (size_t ch = 0; ch < d; ++ch) {
    for (size_t m = 0; m < r; ++m) {
      size_t prev = m * width + ch;    // "previous" role: channels [0, d)
      size_t own = m * width + d + ch; // "own" role: channels [d, 2d)
      slots[m] = first ? Slot{0.0f, -std::numeric_limits<float>::infinity()}
                       : Slot{prevValues[prev], prevGates[prev] + ape[prev]};
      slots[r + m] = {ownValues[own], ownGates[own] + ape[own]};
    }
    entry[ch] = softmaxPool(slots);
  }
}

Compressor::Compressor(CompressorWeights weights, CompressorShape shape,
                       CompressorKind kind, std::span<const float> ropeFreqs,
                       const Options &options)
    : weights_(weights), shape_(shape), kind_(kind),
      ropeFreqs_(ropeFreqs.begin(), ropeFreqs.end()), options_(options),
      width_(static_cast<size_t>(shape.dim) * (shape.overlap ? 2 : 1)) {
  size_t ratio = static_cast<size_t>(shape.ratio);
  check(shape.ratio > 0 && shape.dim > shape.ropeDim &&
            2 * ropeFreqs.size() == static_cast<size_t>(shape.ropeDim),
        "Compressor: ratio > 0, rope_dim < dim, rope_dim/2 frequencies");
  check(weights.kv.size() % width_ == 0 &&
            weights.gate.size() == weights.kv.size() &&
            weights.ape.size() == ratio * width_ &&
            weights.norm.size() == static_cast<size_t>(shape.dim),
        "Compressor: wkv and wgate [w][D], ape [ratio][w], norm [d]");
}

int64_t Compressor::size() const {
  return static_cast<int64_t>(entries_.size() /
                              static_cast<size_t>(shape_.dim));
}

void Compressor::project(std::span<const float> x, std::span<float> a,
                         std::span<float> g) const {
  linear(LinearRole::Compressor, x, weights_.kv, options_, a);
  linear(LinearRole::Compressor, x, weights_.gate, options_, g);
}

void Compressor::buildEntry(int64_t c, std::span<const float> prevValues,
                            std::span<const float> prevGates,
                            std::span<const float> values,
                            std::span<const float> gates) {
  size_t d = static_cast<size_t>(shape_.dim);
  size_t nope = d - static_cast<size_t>(shape_.ropeDim);
  std::vector<float> e(d);
  if (shape_.overlap)
    poolCompressedEntryOverlap(prevValues, prevGates, values, gates,
                               weights_.ape, shape_.ratio, e);
  else
    poolCompressedEntry(values, gates, weights_.ape, shape_.ratio, e);
  hold(options_.precision, e);
  rmsNorm(e, weights_.norm, shape_.normEps, e, options_.precision);
  rope(std::span<float>(e).subspan(nope), c * shape_.ratio, ropeFreqs_,
       options_.precision);
  if (options_.simulates()) {
    if (kind_ == CompressorKind::Main) {
      fp8Sim(std::span<float>(e).first(nope), 64);
    } else {
      hadamard(e);
      fp4Sim(e, 32);
    }
  }
  entries_.insert(entries_.end(), e.begin(), e.end());
}

void Compressor::prefill(std::span<const float> x) {
  check(!weights_.kv.empty(),
        "Compressor::prefill: a compressor without weights takes projections");
  size_t nEmbd = weights_.kv.size() / width_;
  check(x.size() % nEmbd == 0, "Compressor::prefill: x must be [T, D]");
  size_t tokens = x.size() / nEmbd;
  std::vector<float> a(tokens * width_), g(tokens * width_);
  for (size_t u = 0; u < tokens; ++u)
    project(x.subspan(u * nEmbd, nEmbd),
            std::span<float>(a).subspan(u * width_, width_),
            std::span<float>(g).subspan(u * width_, width_));
  prefillProjected(a, g);
}

void Compressor::prefillProjected(std::span<const float> a,
                                  std::span<const float> g) {
  check(a.size() % width_ == 0 && g.size() == a.size(),
        "Compressor::prefillProjected: values and gates [T, w]");
  size_t ratio = static_cast<size_t>(shape_.ratio);
  // Block b's projections, [ratio][width], or the leftover tokens' when b is
  // the unfinished last block.
  auto block = [&](std::span<const float> p, size_t b) {
    size_t first = b * ratio * width_;
    size_t end = std::min(p.size(), first + ratio * width_);
    return std::vector<float>(p.begin() + static_cast<std::ptrdiff_t>(first),
                              p.begin() + static_cast<std::ptrdiff_t>(end));
  };
  size_t tokens = a.size() / width_;
  entries_.clear();
  size_t complete = tokens / ratio;
  for (size_t c = 0; c < complete; ++c) {
    bool hasPrev = shape_.overlap && c > 0;
    std::vector<float> prevA = hasPrev ? block(a, c - 1) : std::vector<float>{};
    std::vector<float> prevG = hasPrev ? block(g, c - 1) : std::vector<float>{};
    buildEntry(static_cast<int64_t>(c), prevA, prevG, block(a, c), block(g, c));
  }
  values_ = block(a, complete);
  gates_ = block(g, complete);
  bool keepPrev = shape_.overlap && complete > 0;
  prevValues_ = keepPrev ? block(a, complete - 1) : std::vector<float>{};
  prevGates_ = keepPrev ? block(g, complete - 1) : std::vector<float>{};
}

void Compressor::decode(std::span<const float> x, int64_t pos) {
  check(!weights_.kv.empty(),
        "Compressor::decode: a compressor without weights takes projections");
  std::vector<float> a(width_), g(width_);
  project(x, a, g);
  decodeProjected(a, g, pos);
}

void Compressor::decodeProjected(std::span<const float> a,
                                 std::span<const float> g, int64_t pos) {
  size_t ratio = static_cast<size_t>(shape_.ratio);
  check(a.size() == width_ && g.size() == width_,
        "Compressor::decodeProjected: values and gates [w]");
  check(pos >= 0 &&
            values_.size() / width_ == static_cast<size_t>(pos) % ratio &&
            size() == pos / shape_.ratio,
        "Compressor::decode: positions must follow the sequence");
  values_.insert(values_.end(), a.begin(), a.end());
  gates_.insert(gates_.end(), g.begin(), g.end());
  if (values_.size() < ratio * width_)
    return;
  buildEntry(pos / shape_.ratio, prevValues_, prevGates_, values_, gates_);
  // The completed block becomes the previous block of the next entry.
  if (shape_.overlap) {
    prevValues_ = std::move(values_);
    prevGates_ = std::move(gates_);
  }
  values_.clear();
  gates_.clear();
}

} // namespace kf::deepseek_v4::reference
