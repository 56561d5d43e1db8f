#include "kf/deepseek_v4/reference/indexer.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/routing.h"

namespace kf::deepseek_v4::reference {

using internal::check;

void indexerScores(std::span<const float> q, std::span<const float> weights,
                   std::span<const float> keys, int nHeads, int headDim,
                   std::span<float> scores, Precision precision) {
  check(nHeads > 0 && headDim > 0, "indexer_scores: empty heads");
  size_t heads = static_cast<size_t>(nHeads);
  size_t dim = static_cast<size_t>(headDim);
  check(q.size() == heads * dim && weights.size() == heads &&
            keys.size() == scores.size() * dim,
        "indexer_scores: q [n_heads, head_dim], weights [n_heads], keys "
        "[n_entries, head_dim], scores [n_entries]");
  for (size_t c = 0; c < scores.size(); ++c) {
    std::span<const float> key = keys.subspan(c * dim, dim);
    double sum = 0;
    for (size_t h = 0; h < heads; ++h) {
      double dot = 0;
      for (size_t d = 0; d < dim; ++d)
        dot += static_cast<double>(q[h * dim + d]) * key[d];
      float logit = hold(precision, static_cast<float>(dot));
      sum += hold(precision, std::max(logit, 0.0f) * weights[h]);
    }
    scores[c] = hold(precision, static_cast<float>(sum));
  }
}

void indexerSelect(std::span<const float> scores, size_t nValid,
                   std::span<int32_t> out) {
  check(nValid <= scores.size() && out.size() <= scores.size(),
        "indexer_select: n_valid and k at most the number of entries");
  std::vector<float> masked(scores.begin(), scores.end());
  std::fill(masked.begin() + static_cast<std::ptrdiff_t>(nValid), masked.end(),
            -std::numeric_limits<float>::infinity());
  topK(masked, out);
  for (int32_t &c : out)
    if (static_cast<size_t>(c) >= nValid)
      c = -1;
}

} // namespace kf::deepseek_v4::reference
