// The DeepSeek-V4 trunk (docs/models/deepseek_v4.md) re-derived from the
// model's definition, in f64 over whole sequences. See F64Forward.h for why
// it is shaped so differently from the reference.
#include "F64Forward.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <numeric>

namespace kf::deepseek_v4::test {
namespace {

using reference::LayerWeights;
using reference::Weights;

using Vector = std::vector<double>;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One row per position: the whole sequence's activations of one kind.
class Rows {
public:
  Rows(size_t rows, size_t width) : width_(width), values_(rows * width, 0.0) {}
  size_t size() const { return width_ == 0 ? 0 : values_.size() / width_; }
  size_t width() const { return width_; }
  std::span<double> operator[](size_t r) {
    return std::span<double>(values_).subspan(r * width_, width_);
  }
  std::span<const double> operator[](size_t r) const {
    return std::span<const double>(values_).subspan(r * width_, width_);
  }

private:
  size_t width_;
  Vector values_;
};

// ---------------------------------------------------------------------------
// Plain arithmetic on f64 vectors. The weights are f32 as decoded; each is
// widened exactly before it meets an activation.

// W x for W stored [out][in], the layout every projection of the file uses.
Vector project(std::span<const float> weight, std::span<const double> x) {
  const size_t in = x.size();
  Vector y(weight.size() / in);
  for (size_t n = 0; n < y.size(); ++n) {
    const float *w = weight.data() + n * in;
    double acc = 0;
    for (size_t k = 0; k < in; ++k)
      acc += static_cast<double>(w[k]) * x[k];
    y[n] = acc;
  }
  return y;
}

Rows projectRows(std::span<const float> weight, const Rows &x) {
  Rows y(x.size(), weight.size() / x.width());
  for (size_t t = 0; t < x.size(); ++t) {
    Vector row = project(weight, x[t]);
    std::copy(row.begin(), row.end(), y[t].begin());
  }
  return y;
}

double dot(std::span<const double> a, std::span<const double> b) {
  double acc = 0;
  for (size_t i = 0; i < a.size(); ++i)
    acc += a[i] * b[i];
  return acc;
}

double rootMeanSquare(std::span<const double> x, double eps) {
  return std::sqrt(dot(x, x) / static_cast<double>(x.size()) + eps);
}

// Divides by the RMS (eps inside the root), then scales by a learned weight.
void rmsNormalise(std::span<double> x, std::span<const float> weight,
                  double eps) {
  const double rms = rootMeanSquare(x, eps);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = x[i] / rms * static_cast<double>(weight[i]);
}

double logistic(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// log(1 + e^z), written so that neither branch overflows.
double softplus(double z) {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

// The k largest values, best first, a tie going to the lower index (the
// rule the reference documents, so that an exact tie cannot make the two
// disagree). `margin` is lowered to the gap between the last taken and the
// best left-out value: the distance to a choice that could flip.
std::vector<size_t> largest(std::span<const double> values, size_t k,
                            double &margin) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // The index breaks ties, so a plain sort is stable (libstdc++ 12's
  // stable_sort trips clang's deprecation warning in the sanitizer build).
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return values[a] != values[b] ? values[a] > values[b] : a < b;
  });
  k = std::min(k, order.size());
  if (k > 0 && k < order.size())
    margin = std::min(margin, values[order[k - 1]] - values[order[k]]);
  order.resize(k);
  return order;
}

// ---------------------------------------------------------------------------
// Rotary position embedding.

// The per-pair angular frequencies of a layer. Window-only layers use the
// plain base. Layers with compressed entries use the compressed base with
// YaRN: pairs that turn more than beta_fast times over the original context
// keep their frequency, pairs that turn fewer than beta_slow times are slowed
// by the YaRN factor, and the pairs between are blended linearly. No YaRN
// temperature is applied to the softmax.
Vector rotaryFrequencies(const Config &config, uint32_t layer) {
  const bool compressed = config.attention(layer) != AttentionKind::Window;
  const double base = compressed ? config.compressRopeBase : config.ropeBase;
  const double dims = config.ropeDim;
  Vector freqs(config.ropeDim / 2);
  for (size_t i = 0; i < freqs.size(); ++i)
    freqs[i] = std::pow(base, -2.0 * static_cast<double>(i) / dims);
  if (!compressed)
    return freqs;
  // The pair index at which a frequency makes `turns` full turns over the
  // original context length.
  auto pairForTurns = [&](double turns) {
    return dims *
           std::log(config.yarnOriginalContext /
                    (2 * std::numbers::pi * turns)) /
           (2 * std::log(base));
  };
  const double lo =
      std::max(std::floor(pairForTurns(config.yarnBetaFast)), 0.0);
  const double hi =
      std::min(std::ceil(pairForTurns(config.yarnBetaSlow)), dims - 1);
  for (size_t i = 0; i < freqs.size(); ++i) {
    const double ramp =
        std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
    freqs[i] = freqs[i] * (1 - ramp) + freqs[i] / config.yarnFactor * ramp;
  }
  return freqs;
}

// Turns each adjacent pair (x[2i], x[2i+1]), read as the complex number
// x[2i] + j·x[2i+1], by angle direction·pos·f_i. Direction −1 undoes a
// rotation at the same position.
void rotatePairs(std::span<double> x, double pos, const Vector &freqs,
                 double direction) {
  for (size_t i = 0; i < freqs.size(); ++i) {
    const double angle = direction * pos * freqs[i];
    const double c = std::cos(angle), s = std::sin(angle);
    const double re = x[2 * i], im = x[2 * i + 1];
    x[2 * i] = re * c - im * s;
    x[2 * i + 1] = re * s + im * c;
  }
}

// Only the tail of each head carries position; the rest is position-free.
void rotateHeadTails(std::span<double> heads, size_t headDim, size_t ropeDim,
                     double pos, const Vector &freqs, double direction) {
  for (size_t at = 0; at < heads.size(); at += headDim)
    rotatePairs(heads.subspan(at + headDim - ropeDim, ropeDim), pos, freqs,
                direction);
}

// ---------------------------------------------------------------------------
// Manifold-constrained hyper-connections: hc parallel residual streams per
// position, read into one sublayer input and written back by a mixing
// matrix kept close to doubly stochastic.

struct StreamMixing {
  Vector read;  // [hc] weight of each stream in the sublayer input
  Vector write; // [hc] weight of the sublayer output in each new stream
  Vector carry; // [hc][hc] carry[j][k]: old stream j into new stream k
};

// Linear read-outs of the streams, computed on the streams scaled to unit
// RMS over all hc·D values (a weightless norm folded into the projection).
Vector streamReadouts(std::span<const double> streams,
                      std::span<const float> fn, double normEps) {
  const double rms = rootMeanSquare(streams, normEps);
  Vector m = project(fn, streams);
  for (double &v : m)
    v /= rms;
  return m;
}

// Sinkhorn: a row softmax, then alternating column and row scalings
// (columns first and last), each sum padded by eps. `iterations` counts the
// column scalings.
void sinkhorn(Vector &c, size_t n, uint32_t iterations, double eps) {
  auto at = [&](size_t row, size_t col) -> double & {
    return c[row * n + col];
  };
  for (size_t j = 0; j < n; ++j) {
    double top = -kInfinity;
    for (size_t k = 0; k < n; ++k)
      top = std::max(top, at(j, k));
    double total = 0;
    for (size_t k = 0; k < n; ++k)
      total += at(j, k) = std::exp(at(j, k) - top);
    for (size_t k = 0; k < n; ++k)
      at(j, k) = at(j, k) / total + eps;
  }
  // Divides every row (or every column) by its sum padded by eps.
  auto scale = [&](bool rows) {
    for (size_t a = 0; a < n; ++a) {
      auto cell = [&](size_t b) -> double & {
        return rows ? at(a, b) : at(b, a);
      };
      double total = 0;
      for (size_t b = 0; b < n; ++b)
        total += cell(b);
      for (size_t b = 0; b < n; ++b)
        cell(b) /= total + eps;
    }
  };
  auto scaleColumns = [&] { scale(false); };
  auto scaleRows = [&] { scale(true); };
  scaleColumns();
  for (uint32_t it = 1; it < iterations; ++it) {
    scaleRows();
    scaleColumns();
  }
}

// One site's mixing for one position. The read-outs come in three groups:
// hc for the read weights, hc for the write weights, hc·hc for the carry
// logits, each group with its own learned scale and every read-out with its
// own bias.
StreamMixing streamMixing(const Config &config, std::span<const double> streams,
                          std::span<const float> fn,
                          std::span<const float> base,
                          std::span<const float> scale) {
  const size_t n = config.hc;
  const Vector m = streamReadouts(streams, fn, config.normEps);
  auto logit = [&](size_t group, size_t i) {
    const size_t at = group == 0 ? i : group == 1 ? n + i : 2 * n + i;
    return static_cast<double>(scale[group]) * m[at] + base[at];
  };
  StreamMixing mix{Vector(n), Vector(n), Vector(n * n)};
  for (size_t j = 0; j < n; ++j) {
    // Not normalised to sum to one; eps keeps every stream readable.
    mix.read[j] = logistic(logit(0, j)) + config.hcEps;
    mix.write[j] = 2 * logistic(logit(1, j)); // in (0, 2)
  }
  for (size_t jk = 0; jk < n * n; ++jk)
    mix.carry[jk] = logit(2, jk);
  sinkhorn(mix.carry, n, config.sinkhornIterations, config.hcEps);
  return mix;
}

// Σ_j weight_j · stream_j.
void readStreams(std::span<const double> streams, const Vector &weight,
                 std::span<double> out) {
  const size_t dim = out.size();
  for (size_t d = 0; d < dim; ++d) {
    double acc = 0;
    for (size_t j = 0; j < weight.size(); ++j)
      acc += weight[j] * streams[j * dim + d];
    out[d] = acc;
  }
}

// new_k = write_k · f + Σ_j carry[j][k] · old_j. The mixing was computed from
// the old streams, before the sublayer ran.
void writeStreams(std::span<double> streams, const StreamMixing &mix,
                  std::span<const double> f) {
  const size_t n = mix.read.size(), dim = f.size();
  const Vector old(streams.begin(), streams.end());
  for (size_t k = 0; k < n; ++k)
    for (size_t d = 0; d < dim; ++d) {
      double acc = mix.write[k] * f[d];
      for (size_t j = 0; j < n; ++j)
        acc += mix.carry[j * n + k] * old[j * dim + d];
      streams[k * dim + d] = acc;
    }
}

// The head's reduction of the streams to one vector: the read half of a
// mixing, with its own weights and no carry.
Vector mergeStreams(const Config &config, const Weights &weights,
                    std::span<const double> streams) {
  const Vector m =
      streamReadouts(streams, weights.outputHcFn(), config.normEps);
  Vector read(config.hc);
  for (size_t j = 0; j < read.size(); ++j)
    read[j] = logistic(static_cast<double>(weights.outputHcScale()[0]) * m[j] +
                       weights.outputHcBase()[j]) +
              config.hcEps;
  Vector y(config.nEmbd);
  readStreams(streams, read, y);
  return y;
}

// ---------------------------------------------------------------------------
// Compressed entries: every `ratio` tokens pool into one key/value entry.

struct CompressorWeights {
  std::span<const float> kv, gate, ape, norm;
};

// Pools every complete block of the sequence. Each channel of entry c is a
// softmax-weighted average of its block's token values, the weights from
// the gate projection plus a learned bias per slot in the block (ape). With
// overlap (ratio 4) the block before c joins the pool: projections are twice
// as wide, the first half of the channels serving when a token is in the
// previous block and the second half when it is in c's own block; entry 0
// has no previous block. Each pooled entry is then RMS-normalised and its
// tail rotated at the position of its block's first token.
Rows compressedEntries(const Config &config, const Rows &x,
                       const CompressorWeights &w, uint32_t ratio, bool overlap,
                       size_t dim, const Vector &freqs) {
  const Rows values = projectRows(w.kv, x);
  const Rows gates = projectRows(w.gate, x);
  const size_t width = values.width(); // dim, or 2·dim with overlap
  const size_t ownHalf = overlap ? dim : 0;
  Rows entries(x.size() / ratio, dim);
  std::vector<std::pair<double, double>> pool; // (score, value)
  for (size_t c = 0; c < entries.size(); ++c) {
    for (size_t ch = 0; ch < dim; ++ch) {
      pool.clear();
      auto addBlock = [&](size_t block, size_t half) {
        for (size_t m = 0; m < ratio; ++m) {
          const size_t u = block * ratio + m, at = half + ch;
          pool.emplace_back(gates[u][at] + w.ape[m * width + at],
                            values[u][at]);
        }
      };
      if (overlap && c > 0)
        addBlock(c - 1, 0);
      addBlock(c, ownHalf);
      double top = -kInfinity;
      for (const auto &[score, value] : pool)
        top = std::max(top, score);
      double total = 0, pooled = 0;
      for (const auto &[score, value] : pool) {
        const double e = std::exp(score - top);
        total += e;
        pooled += e * value;
      }
      entries[c][ch] = pooled / total;
    }
    rmsNormalise(entries[c], w.norm, config.normEps);
    rotatePairs(entries[c].subspan(dim - config.ropeDim, config.ropeDim),
                static_cast<double>(c * ratio), freqs, +1);
  }
  return entries;
}

// ---------------------------------------------------------------------------
// Attention.

// The query latent (kept for the indexer) and the per-head queries, each
// head scaled to unit RMS before its tail is rotated.
struct Queries {
  Rows latent; // [T][Rq]
  Rows heads;  // [T][H·Dh]
};

Queries queries(const Config &config, const LayerWeights &w, const Rows &x,
                const Vector &freqs) {
  Queries q{projectRows(w.attnQA, x), Rows(0, 0)};
  for (size_t t = 0; t < x.size(); ++t)
    rmsNormalise(q.latent[t], w.attnQANorm, config.normEps);
  q.heads = projectRows(w.attnQB, q.latent);
  const size_t dh = config.headDim;
  for (size_t t = 0; t < x.size(); ++t) {
    for (size_t at = 0; at < q.heads.width(); at += dh) {
      std::span<double> head = q.heads[t].subspan(at, dh);
      const double rms = rootMeanSquare(head, config.normEps);
      for (double &v : head)
        v /= rms;
    }
    rotateHeadTails(q.heads[t], dh, config.ropeDim, static_cast<double>(t),
                    freqs, +1);
  }
  return q;
}

// One latent per token, serving as both key and value of every head.
Rows latents(const Config &config, const LayerWeights &w, const Rows &x,
             const Vector &freqs) {
  Rows kv = projectRows(w.attnKv, x);
  for (size_t t = 0; t < x.size(); ++t) {
    rmsNormalise(kv[t], w.attnKvANorm, config.normEps);
    rotateHeadTails(kv[t], config.headDim, config.ropeDim,
                    static_cast<double>(t), freqs, +1);
  }
  return kv;
}

// The indexer's pick among the compressed entries position t may see: a
// relevance score per entry, Σ_h w_h · ReLU(q_h · K_c), with its own rotated
// queries from the query latent, head weights from the block input, and its
// own compressed keys; the best min(top_k, visible) entries, ascending.
// The model also passes the indexer's queries and keys through a Hadamard
// transform, but only to quantise them: it is orthonormal, so without the
// quantisation it leaves every q · K as it was and is left out here.
std::vector<size_t> indexerPick(const Config &config, const LayerWeights &w,
                                std::span<const double> x,
                                std::span<const double> qLatent, size_t t,
                                const Rows &keys, size_t visible,
                                const Vector &freqs, double &margin) {
  const size_t heads = config.indexerHeads, dim = config.indexerHeadDim;
  Vector q = project(w.indexerQB, qLatent);
  rotateHeadTails(q, dim, config.ropeDim, static_cast<double>(t), freqs, +1);
  Vector headWeight = project(w.indexerProj, x);
  const double normaliser = std::sqrt(static_cast<double>(dim * heads));
  Vector score(visible, 0.0);
  for (size_t c = 0; c < visible; ++c)
    for (size_t h = 0; h < heads; ++h) {
      const double relevance =
          dot(std::span<const double>(q).subspan(h * dim, dim), keys[c]);
      score[c] += headWeight[h] / normaliser * std::max(relevance, 0.0);
    }
  std::vector<size_t> picked = largest(score, config.indexerTopK, margin);
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Softmax attention of every head over `keys`, with one extra learned logit
// per head (the sink) whose value is zero: it only absorbs probability.
// Keys double as values; logits are scaled by 1/sqrt(head_dim), the sink is
// not.
Vector attend(std::span<const double> q,
              const std::vector<std::span<const double>> &keys,
              std::span<const float> sinks, size_t headDim) {
  const size_t heads = q.size() / headDim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(headDim));
  Vector out(q.size(), 0.0);
  Vector logit(keys.size());
  for (size_t h = 0; h < heads; ++h) {
    std::span<const double> qh = q.subspan(h * headDim, headDim);
    const double sink = sinks[h];
    double top = sink;
    for (size_t j = 0; j < keys.size(); ++j) {
      logit[j] = scale * dot(qh, keys[j]);
      top = std::max(top, logit[j]);
    }
    double total = std::exp(sink - top);
    for (double &l : logit)
      total += l = std::exp(l - top);
    std::span<double> oh = std::span<double>(out).subspan(h * headDim, headDim);
    for (size_t j = 0; j < keys.size(); ++j)
      for (size_t d = 0; d < headDim; ++d)
        oh[d] += logit[j] / total * keys[j][d];
  }
  return out;
}

// Heads are split into groups, each with its own low-rank projection, and
// the concatenated group outputs are projected back to the model width.
Vector outputProjection(const Config &config, const LayerWeights &w,
                        std::span<const double> o) {
  const size_t groups = config.oGroups, rank = config.oLoraRank;
  const size_t groupIn = o.size() / groups;
  Vector z;
  for (size_t g = 0; g < groups; ++g) {
    Vector zg =
        project(w.attnOutputA.subspan(g * rank * groupIn, rank * groupIn),
                o.subspan(g * groupIn, groupIn));
    z.insert(z.end(), zg.begin(), zg.end());
  }
  return project(w.attnOutputB, z);
}

// The attention sublayer for every position at once. Position t sees the
// tokens of its window (t − W + 1 .. t) and the compressed entries whose
// blocks are complete by t — all of them on ratio-128 layers, the indexer's
// pick on ratio-4 layers. The output's tails are rotated back at t, so they
// carry the relative position of what was attended.
Rows attentionSublayer(const Config &config, const LayerWeights &w,
                       uint32_t layer, const Rows &x, double &indexMargin) {
  const AttentionKind kind = config.attention(layer);
  const uint32_t ratio = config.compressRatios[layer];
  const size_t dh = config.headDim;
  const Vector freqs = rotaryFrequencies(config, layer);
  const Queries q = queries(config, w, x, freqs);
  const Rows kv = latents(config, w, x, freqs);
  Rows entries(0, dh), indexKeys(0, config.indexerHeadDim);
  if (kind != AttentionKind::Window)
    entries = compressedEntries(
        config, x,
        {w.compressorKv, w.compressorGate, w.compressorApe, w.compressorNorm},
        ratio, config.compressorHalves(layer) == 2, dh, freqs);
  if (kind == AttentionKind::Csa)
    indexKeys = compressedEntries(
        config, x,
        {w.indexerCompressorKv, w.indexerCompressorGate, w.indexerCompressorApe,
         w.indexerCompressorNorm},
        ratio, /*overlap=*/true, config.indexerHeadDim, freqs);

  Rows out(x.size(), config.nEmbd);
  std::vector<std::span<const double>> keys;
  for (size_t t = 0; t < x.size(); ++t) {
    keys.clear();
    const size_t first = t + 1 > config.window ? t + 1 - config.window : 0;
    for (size_t p = first; p <= t; ++p)
      keys.push_back(kv[p]);
    const size_t visible = ratio == 0 ? 0 : (t + 1) / ratio;
    if (kind == AttentionKind::Hca)
      for (size_t c = 0; c < visible; ++c)
        keys.push_back(entries[c]);
    if (kind == AttentionKind::Csa && visible > 0)
      for (size_t c : indexerPick(config, w, x[t], q.latent[t], t, indexKeys,
                                  visible, freqs, indexMargin))
        keys.push_back(entries[c]);
    Vector o = attend(q.heads[t], keys, w.attnSinks, dh);
    rotateHeadTails(o, dh, config.ropeDim, static_cast<double>(t), freqs, -1);
    Vector y = outputProjection(config, w, o);
    std::copy(y.begin(), y.end(), out[t].begin());
  }
  return out;
}

// ---------------------------------------------------------------------------
// Mixture of experts.

// SwiGLU with the gate capped from above and the up projection clamped on
// both sides (the clamp applies to the shared expert too), the result scaled
// by the routing weight before the down projection.
Vector gatedFfn(std::span<const double> x, std::span<const float> gate,
                std::span<const float> up, std::span<const float> down,
                double limit, double weight) {
  const Vector g = project(gate, x), u = project(up, x);
  Vector h(g.size());
  for (size_t i = 0; i < h.size(); ++i) {
    const double a = std::min(g[i], limit);
    const double b = std::clamp(u[i], -limit, limit);
    h[i] = a * logistic(a) * b * weight;
  }
  return project(down, h);
}

// Scores are sqrt(softplus(gate logits)). Hash layers take their experts
// from the token's row of tid2eid; the others take the top-k of score +
// bias, the bias steering the choice only. Either way the weights are the
// chosen experts' unbiased scores, normalised to sum to one and scaled.
Rows moeSublayer(const Config &config, const LayerWeights &w, uint32_t layer,
                 std::span<const int32_t> tokens, const Rows &x,
                 double &routingMargin) {
  const size_t dim = config.nEmbd, ff = config.nFfExp;
  const size_t k = config.nExpertUsed, expert = ff * dim;
  Rows out(x.size(), dim);
  for (size_t t = 0; t < x.size(); ++t) {
    Vector score = project(w.ffnGateInp, x[t]);
    for (double &s : score)
      s = std::sqrt(softplus(s));
    std::vector<size_t> chosen;
    if (config.hashRouted(layer)) {
      for (size_t j = 0; j < k; ++j)
        chosen.push_back(static_cast<size_t>(
            w.tid2eid[static_cast<size_t>(tokens[t]) * k + j]));
    } else {
      Vector biased(score.size());
      for (size_t e = 0; e < score.size(); ++e)
        biased[e] = score[e] + w.expProbsB[e];
      chosen = largest(biased, k, routingMargin);
    }
    double total = 0;
    for (size_t e : chosen)
      total += score[e];
    if (!config.normalizeWeights)
      total = 1;
    std::span<double> y = out[t];
    for (size_t e : chosen) {
      Vector ye = gatedFfn(x[t], w.ffnGateExps.subspan(e * expert, expert),
                           w.ffnUpExps.subspan(e * expert, expert),
                           w.ffnDownExps.subspan(e * expert, expert),
                           config.swigluClampExp[layer],
                           score[e] / total * config.routeScale);
      for (size_t d = 0; d < dim; ++d)
        y[d] += ye[d];
    }
    // The shared experts are stored side by side as one wider expert.
    Vector shared = gatedFfn(x[t], w.ffnGateShexp, w.ffnUpShexp, w.ffnDownShexp,
                             config.swigluClampShexp[layer], 1.0);
    for (size_t d = 0; d < dim; ++d)
      y[d] += shared[d];
  }
  return out;
}

// ---------------------------------------------------------------------------
// The trunk.

// Runs one sublayer between hyper-connection read and write: the mixing of
// every position is taken from the streams as they were before the sublayer.
template <typename Sublayer>
void residualSite(const Config &config, Rows &streams,
                  std::span<const float> fn, std::span<const float> base,
                  std::span<const float> scale, std::span<const float> norm,
                  Sublayer sublayer) {
  std::vector<StreamMixing> mixing;
  Rows input(streams.size(), config.nEmbd);
  for (size_t t = 0; t < streams.size(); ++t) {
    mixing.push_back(streamMixing(config, streams[t], fn, base, scale));
    readStreams(streams[t], mixing[t].read, input[t]);
    rmsNormalise(input[t], norm, config.normEps);
  }
  const Rows f = sublayer(input);
  for (size_t t = 0; t < streams.size(); ++t)
    writeStreams(streams[t], mixing[t], f[t]);
}

void decoderBlock(const Config &config, const LayerWeights &w, uint32_t layer,
                  std::span<const int32_t> tokens, Rows &streams,
                  SelectionMargins &margins) {
  residualSite(config, streams, w.hcAttnFn, w.hcAttnBase, w.hcAttnScale,
               w.attnNorm, [&](const Rows &x) {
                 return attentionSublayer(config, w, layer, x, margins.indexer);
               });
  residualSite(config, streams, w.hcFfnFn, w.hcFfnBase, w.hcFfnScale, w.ffnNorm,
               [&](const Rows &x) {
                 return moeSublayer(config, w, layer, tokens, x,
                                    margins.routing);
               });
}

} // namespace

std::vector<double> f64ForwardLogits(const Config &config,
                                     const Weights &weights,
                                     std::span<const int32_t> tokens,
                                     SelectionMargins &margins) {
  margins = {kInfinity, kInfinity};
  const size_t dim = config.nEmbd, vocab = config.nVocab;
  // Every stream starts as the token's embedding.
  Rows streams(tokens.size(), config.hc * dim);
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::span<const float> row =
        weights.tokenEmbd().subspan(static_cast<size_t>(tokens[t]) * dim, dim);
    for (size_t j = 0; j < config.hc; ++j)
      std::copy(row.begin(), row.end(), streams[t].begin() + j * dim);
  }
  for (uint32_t l = 0; l < config.nLayer; ++l)
    decoderBlock(config, weights.layer(l), l, tokens, streams, margins);
  std::vector<double> logits;
  logits.reserve(tokens.size() * vocab);
  for (size_t t = 0; t < tokens.size(); ++t) {
    Vector y = mergeStreams(config, weights, streams[t]);
    rmsNormalise(y, weights.outputNorm(), config.normEps);
    Vector row = project(weights.output(), y);
    logits.insert(logits.end(), row.begin(), row.end());
  }
  return logits;
}

std::vector<double> f64ForwardLogits(const Config &config,
                                     const Weights &weights,
                                     std::span<const int32_t> tokens) {
  SelectionMargins ignored;
  return f64ForwardLogits(config, weights, tokens, ignored);
}

} // namespace kf::deepseek_v4::test
