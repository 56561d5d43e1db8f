#include "kf/deepseek_v4/reference/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

using internal::check;
using internal::expF32;

float attentionScale(int headDim) {
  check(headDim > 0, "attention_scale: head_dim must be positive");
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)));
}

void sparseAttention(std::span<const float> q, std::span<const float> bank,
                     std::span<const float> sink, std::span<const int32_t> idx,
                     int nHeads, int headDim, float scale, std::span<float> out,
                     Precision precision) {
  check(nHeads > 0 && headDim > 0, "sparse_attention: empty heads");
  size_t heads = static_cast<size_t>(nHeads);
  size_t dim = static_cast<size_t>(headDim);
  check(q.size() == heads * dim && out.size() == heads * dim &&
            sink.size() == heads,
        "sparse_attention: q and out [n_heads, head_dim], sink [n_heads]");
  check(bank.size() % dim == 0,
        "sparse_attention: bank must hold whole rows of head_dim");
  size_t rows = bank.size() / dim;
  std::vector<std::span<const float>> keys; // the non-padding entries of idx
  for (int32_t i : idx) {
    check(i >= -1 && (i < 0 || static_cast<size_t>(i) < rows),
          "sparse_attention: index outside the bank");
    if (i >= 0)
      keys.push_back(bank.subspan(static_cast<size_t>(i) * dim, dim));
  }

  std::vector<float> p(keys.size());
  for (size_t h = 0; h < heads; ++h) {
    std::span<const float> qh = q.subspan(h * dim, dim);
    for (size_t j = 0; j < keys.size(); ++j) {
      double dot = 0;
      for (size_t d = 0; d < dim; ++d)
        dot += static_cast<double>(qh[d]) * keys[j][d];
      p[j] = scale * static_cast<float>(dot);
    }
    // Softmax over the logits and the sink; the sink's term is part of the
    // denominator only, since its value vector is zero.
    float max = sink[h];
    for (float l : p)
      max = std::max(max, l);
    double sum = expF32(sink[h] - max);
    for (float &l : p) {
      l = expF32(l - max);
      sum += l;
    }
    float total = static_cast<float>(sum);
    for (float &v : p)
      v = hold(precision, v / total);

    for (size_t d = 0; d < dim; ++d) {
      double acc = 0;
      for (size_t j = 0; j < keys.size(); ++j)
        acc += static_cast<double>(p[j]) * keys[j][d];
      out[h * dim + d] = hold(precision, static_cast<float>(acc));
    }
  }
}

void windowPositions(int64_t t, std::span<int32_t> out) {
  check(t >= 0 && !out.empty(), "window_positions: t >= 0, window > 0");
  int64_t first = t - static_cast<int64_t>(out.size()) + 1;
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t pos = first + static_cast<int64_t>(i);
    check(pos <= std::numeric_limits<int32_t>::max(),
          "window_positions: position beyond int32");
    out[i] = pos < 0 ? -1 : static_cast<int32_t>(pos);
  }
}

int64_t visibleCompressed(int64_t t, int ratio) {
  check(t >= 0 && ratio > 0, "visible_compressed: t >= 0, ratio > 0");
  return (t + 1) / ratio;
}

} // namespace kf::deepseek_v4::reference
