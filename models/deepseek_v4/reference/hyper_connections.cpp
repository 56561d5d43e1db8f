#include "kf/deepseek_v4/reference/hyper_connections.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

using internal::check;
using internal::expF32;
using internal::sigmoidF32;

namespace {

// The mixes m = (Z · fnᵀ) · r of docs/models/deepseek_v4_model.md §4.1
// steps 1–2 (and of HcHead): one per row of fn, where r is Z's inverse RMS.
// Each dot product accumulates in fp64 and is held in fp32 before the
// multiply by r, in that section's order.
std::vector<float> mixes(std::span<const float> z, std::span<const float> fn,
                         float normEps) {
  check(!z.empty() && fn.size() % z.size() == 0,
        "hc: fn must have rows of mult·dim values");
  float r = inverseRms(z, normEps);
  std::vector<float> m(fn.size() / z.size());
  for (size_t i = 0; i < m.size(); ++i) {
    double dot = 0;
    for (size_t n = 0; n < z.size(); ++n)
      dot += static_cast<double>(z[n]) * fn[i * z.size() + n];
    m[i] = static_cast<float>(dot) * r;
  }
  return m;
}

// Σ_j weight_j · stream_j per element, in fp32 (fp64 accumulation), to bf16.
void weightedStreamSum(std::span<const float> streams,
                       std::span<const float> weight, std::span<float> out,
                       Precision precision) {
  size_t dim = out.size();
  for (size_t d = 0; d < dim; ++d) {
    double sum = 0;
    for (size_t j = 0; j < weight.size(); ++j)
      sum += static_cast<double>(weight[j]) * streams[j * dim + d];
    out[d] = hold(precision, static_cast<float>(sum));
  }
}

void checkStreams(std::span<const float> streams, int mult, size_t dim) {
  check(mult > 0 && dim > 0 &&
            streams.size() == static_cast<size_t>(mult) * dim,
        "hc: streams must hold mult·dim values");
}

// Divides each row (byRows) or each column of the n×n matrix by its sum + eps.
void normalise(std::span<float> c, size_t n, bool byRows, float eps) {
  for (size_t a = 0; a < n; ++a) {
    auto at = [&](size_t b) -> float & {
      return byRows ? c[a * n + b] : c[b * n + a];
    };
    double sum = 0;
    for (size_t b = 0; b < n; ++b)
      sum += at(b);
    float denominator = static_cast<float>(sum) + eps;
    for (size_t b = 0; b < n; ++b)
      at(b) /= denominator;
  }
}

} // namespace

void sinkhorn(std::span<float> comb, int n, int iters, float eps) {
  check(n > 0 && comb.size() == static_cast<size_t>(n) * n,
        "sinkhorn: comb must be n×n");
  check(iters >= 1, "sinkhorn: at least one iteration");
  size_t size = static_cast<size_t>(n);
  // Softmax over each row (over k), then + eps.
  for (size_t j = 0; j < size; ++j) {
    std::span<float> row = comb.subspan(j * size, size);
    float max = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float &v : row) {
      v = expF32(v - max);
      sum += v;
    }
    float total = static_cast<float>(sum);
    for (float &v : row)
      v = v / total + eps;
  }
  normalise(comb, size, /*byRows=*/false, eps);
  for (int it = 1; it < iters; ++it) {
    normalise(comb, size, /*byRows=*/true, eps);
    normalise(comb, size, /*byRows=*/false, eps);
  }
}

void hcPre(std::span<const float> streams, const HcWeights &weights,
           const HcConfig &config, std::span<float> x, std::span<float> post,
           std::span<float> comb, Precision precision) {
  size_t mult = static_cast<size_t>(config.mult);
  checkStreams(streams, config.mult, x.size());
  size_t nMixes = (2 + mult) * mult;
  check(weights.fn.size() == nMixes * streams.size() &&
            weights.base.size() == nMixes && weights.scale.size() == 3,
        "hc_pre: fn [(2+mult)·mult, mult·dim], base [(2+mult)·mult], "
        "scale [3]");
  check(post.size() == mult && comb.size() == mult * mult,
        "hc_pre: post [mult] and comb [mult, mult]");
  std::vector<float> m = mixes(streams, weights.fn, config.normEps);
  std::span<const float> base = weights.base;
  std::span<const float> scale = weights.scale;

  // Step 3: the input mixing weights, not normalised to sum to 1.
  std::vector<float> pre(mult);
  for (size_t j = 0; j < mult; ++j)
    pre[j] = sigmoidF32(scale[0] * m[j] + base[j]) + config.eps;
  // Step 4: post weights in (0, 2).
  for (size_t j = 0; j < mult; ++j)
    post[j] = 2 * sigmoidF32(scale[1] * m[mult + j] + base[mult + j]);
  // Step 5: the combination logits, row j, column k.
  for (size_t jk = 0; jk < mult * mult; ++jk)
    comb[jk] = scale[2] * m[2 * mult + jk] + base[2 * mult + jk];
  // Step 6.
  sinkhorn(comb, config.mult, config.sinkhornIters, config.eps);
  // Step 7.
  weightedStreamSum(streams, pre, x, precision);
}

void hcPost(std::span<const float> f, std::span<const float> oldStreams,
            std::span<const float> post, std::span<const float> comb, int mult,
            std::span<float> newStreams, Precision precision) {
  size_t dim = f.size();
  size_t m = static_cast<size_t>(mult);
  checkStreams(oldStreams, mult, dim);
  check(newStreams.size() == oldStreams.size() && post.size() == m &&
            comb.size() == m * m,
        "hc_post: new streams [mult, dim], post [mult], comb [mult, mult]");
  for (size_t k = 0; k < m; ++k)
    for (size_t d = 0; d < dim; ++d) {
      double sum = static_cast<double>(post[k]) * f[d];
      for (size_t j = 0; j < m; ++j)
        sum += static_cast<double>(comb[j * m + k]) * oldStreams[j * dim + d];
      newStreams[k * dim + d] = hold(precision, static_cast<float>(sum));
    }
}

void hcHead(std::span<const float> streams, const HcWeights &weights,
            const HcConfig &config, std::span<float> y, Precision precision) {
  size_t mult = static_cast<size_t>(config.mult);
  checkStreams(streams, config.mult, y.size());
  check(weights.fn.size() == mult * streams.size() &&
            weights.base.size() == mult && weights.scale.size() == 1,
        "hc_head: fn [mult, mult·dim], base [mult], scale [1]");
  std::vector<float> m = mixes(streams, weights.fn, config.normEps);
  std::vector<float> pre(mult);
  for (size_t j = 0; j < mult; ++j)
    pre[j] = sigmoidF32(m[j] * weights.scale[0] + weights.base[j]) + config.eps;
  weightedStreamSum(streams, pre, y, precision);
}

} // namespace kf::deepseek_v4::reference
