// The grid search shared by the IQ2 and IQ1 reference quantizers. Every 8
// weights of these formats are one grid entry (with signs for IQ2, with a
// shift delta = +-1/8 for IQ1) times a scale s > 0 shared by a group of 16 or
// 32 weights, and the searches below are exact over entries and signs at
// every scale they try. Private to the IQ codecs (iq1.cpp, iq2.cpp).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "quant/iq_common.h"

namespace kf::quant::iq {

// The squared error of entry e at scale s is
//   IQ2: |x|^2 + s (s n_e - 2 p_e),
//   IQ1: |x|^2 - 2 s delta X + 8 s^2 delta^2 + s (s (n_e + 2 delta S_e) - 2
//   p_e),
// with n_e = |g_e|^2, S_e = sum_j g_ej, X = sum_j x_j, and p_e = x . g_e for
// IQ1, the largest sum_j sigma_j g_ej x_j over the allowed sign patterns sigma
// for IQ2. Only the last term depends on the entry: at a fixed scale the best
// entry minimises the line s a_e - 2 p_e, a_e = n_e (IQ2) or n_e + 2 delta S_e
// (IQ1), and neither a_e nor p_e nor the sign pattern depends on s. Entries
// with the same (n_e, S_e) form a class whose member of largest p_e beats the
// others at every scale; the grids have 12 (iq2xxs), 22 (iq2xs) and 39 (iq1s)
// classes. Of their best members, only the lines on the lower envelope over
// s > 0 can win at all, typically 3 to 6. So one pass over the grid per 8
// weights yields the envelope, and from then on the least error at any scale is
// a minimum over a handful of lines: the searches below are exact over entries
// and signs at every scale they try.

// Classes of 8 weights over 3 values: C(10, 2).
constexpr int kMaxClasses = 45;

// A grid's entries ordered by class: class k holds the entries
// order[begin[k]] .. order[begin[k + 1] - 1], which share n and S.
struct GridClasses {
  int count = 0;
  std::array<float, kMaxClasses> norm{}; // n: the sum of squared grid values
  std::array<float, kMaxClasses> sum{};  // S: the sum of grid values
  std::array<int, kMaxClasses + 1> begin{};
  std::vector<uint16_t> order;
};

GridClasses classify(std::span<const std::array<int, 8>> entries);

// The lines s a_i - 2 p_i that are least at some s > 0, each with its grid
// entry and sign mask (bit j: weight j negative), in the order in which they
// are least as s grows.
struct Envelope {
  int count = 0;
  std::array<float, kMaxClasses> a, p;
  std::array<uint16_t, kMaxClasses> entry;
  std::array<uint8_t, kMaxClasses> signs;

  // min_i s (s a_i - 2 p_i), and the line reaching it.
  float least(float s, int *line = nullptr) const {
    float best = std::numeric_limits<float>::infinity();
    for (int i = 0; i < count; ++i) {
      float err = s * (s * a[i] - 2 * p[i]);
      if (err < best) {
        best = err;
        if (line)
          *line = i;
      }
    }
    return best;
  }
};

// The classes in order of slope, steepest first.
std::vector<int> bySlope(std::span<const float> a);

// The lower envelope over s > 0 of the classes' lines (the convex hull
// trick), given the classes by slope, steepest first. The line of largest p is
// least just above s = 0 (of equal p, the flatter one), and steeper lines
// never are at s > 0. From it on, a line is dropped when the next one
// undercuts the line before it no later than it does.
Envelope lowerEnvelope(std::span<const int> bySlope, const float *a,
                       const float *p, const uint16_t *entry,
                       const uint8_t *signs);

// --- The super-block scale ---------------------------------------------------
//
// A super-block has an fp16 scale d and per group a small integer code c; the
// group's scale is d * multiplier[c] (exactly as the decoder forms it, since
// both factors are short). For each d it tries (rounded to fp16), every group
// takes its best code by error(group, scale), the group's least squared error
// at that scale, and the d of least total error wins. d0 puts the largest
// weight on the largest grid value at the largest multiplier; the sweep runs
// from 0.3 d0 to 2.4 d0 in steps of 2^(1/4), then tries 2^(+-1/16) and
// 2^(+-1/8) around the best: on Gaussian and Student-t data the best d lies
// well inside that range, and a sweep four times as fine gains less than
// 0.01 dB, since the codes absorb most of a change of d.
struct SuperBlockScales {
  float d = 0;
  std::array<uint8_t, 16> code{};
};

template <typename GroupError>
SuperBlockScales searchScales(int groups, std::span<const float> multiplier,
                              float d0, GroupError error) {
  SuperBlockScales best;
  float bestErr = std::numeric_limits<float>::infinity();
  auto tryD = [&](float d) {
    SuperBlockScales s;
    s.d = fp16Round(d);
    float total = 0;
    for (int g = 0; g < groups; ++g) {
      float groupBest = std::numeric_limits<float>::infinity();
      for (size_t c = 0; c < multiplier.size(); ++c) {
        float err = error(g, s.d * multiplier[c]);
        if (err < groupBest) {
          groupBest = err;
          s.code[g] = static_cast<uint8_t>(c);
        }
      }
      total += groupBest;
    }
    if (total < bestErr) {
      bestErr = total;
      best = s;
      return true;
    }
    return false;
  };
  float bestCoarse = d0;
  for (int i = 0; i <= 12; ++i) {
    float d = 0.3f * d0 * std::exp2(i / 4.0f);
    if (tryD(d))
      bestCoarse = d;
  }
  for (int i : {-2, -1, 1, 2})
    tryD(bestCoarse * std::exp2(i / 16.0f));
  return best;
}

} // namespace kf::quant::iq
