#include "kf/deepseek_v4/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace kf::deepseek_v4 {

namespace {

// The advice of model §9 (docs/models/deepseek_v4_model.md), at the tiny
// preset: HC mix projections and bases about N(0, 0.1), HC scales in 0.1..0.6.
constexpr float kHcSpread = 0.1f;
constexpr float kHcScaleLow = 0.1f, kHcScaleHigh = 0.6f;
// The HC mix projection's input width at the tiny preset (4 streams of 256),
// where §9's N(0, 0.1) holds. Wider inputs get 1/sqrt(fan-in) smaller
// values, so that the mixes keep the same spread (they see an input of unit
// RMS: HC folds an RMS normalisation into them).
constexpr float kHcReferenceWidth = 1024;
// Small next to the learned scores sqrt(softplus(logit)), which spread over
// about 0.3..1.5 with unit-variance logits: the bias nudges, it does not
// decide.
constexpr float kGateBiasSpread = 0.05f;
// With wide margins, the bias of the favoured experts: the gate scores
// sqrt(softplus(z)) of bounded unit-variance logits lie in 0.17..1.88, so a
// favoured expert's s + bias stays 1.29 above any other's, 40 % of it.
constexpr float kFavouredBias = 3.0f;
// With wide margins, the embedding's spread: three times the usual, so that
// the streams keep the token's embedding through the layers and the head,
// which reads the token through it, sees it clearly. The head's rows have
// the usual 1/√D gain.
constexpr float kWideEmbeddingSpread = 3.0f;
// Per-slot score biases of the compressors, small next to the unit-variance
// gate scores they are added to.
constexpr float kApeSpread = 0.1f;
// Sink logits compete with attention scores, which are about N(0, 1):
// q and the KV latent are RMS-normalised and the scale is Dh^-1/2.
constexpr float kSinkSpread = 1.0f;
// The embedding rows share an offset of 1 per element (half of each row's
// energy along the all-ones direction), and the index-score head weights
// w = x·proj a mean of kIndexerBias/D per element, so w ≈ kIndexerBias ·
// mean(x) ± 1 leans positive: 8·0.71 ± 1 for x fresh from the embedding,
// still positive in ~98 % of cases where later layers have diluted mean(x)
// to 0.25. With w > 0 the index scores Σ w·ReLU(q·k) are positive and
// continuous, so top-k boundaries fall on no exact-zero ties (model §10).
// The router and LM head rows are centred so that the offset fixes neither
// the routing nor the logits.
constexpr float kEmbeddingOffset = 1.0f;
constexpr float kIndexerBias = 8.0f;

// 2^64 / φ: SplitMix64's increment.
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// SplitMix64's finaliser (Steele, Lea and Flood, 2014): a bijection whose
// outputs on consecutive multiples of kGolden pass BigCrush. Drawing value
// number c as mix(stream + (c + 1)·kGolden) makes the generator
// counter-based: any value is reached directly, without the ones before it.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t randomBits(uint64_t stream, uint64_t counter) {
  return mix(stream + (counter + 1) * kGolden);
}

// The stream of a tensor: its name's FNV-1a hash mixed with the seed.
uint64_t streamOf(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : name) {
    h ^= static_cast<uint8_t>(ch);
    h *= 0x100000001b3ull;
  }
  return mix(mix(seed) ^ h);
}

// Uniform in [0, 1) with 24 bits: exact in float.
float unitUniform(uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1p-24f;
}

// A standard normal approximated by the Irwin-Hall sum of four uniforms,
// one per 16 bits: mean 0, variance 1, bounded at ±2√3. One random draw per
// value and no transcendental functions, which keeps synth's 27 billion
// values of flash-slice:4 cheap; the bounded tails suit test weights.
float standardNormal(uint64_t bits) {
  float sum = 0;
  for (int i = 0; i < 4; ++i)
    sum += static_cast<float>((bits >> (16 * i)) & 0xffff);
  // (u + 1/2) / 2^16 is uniform in (0, 1): the sum less 2 has variance 1/3.
  return ((sum + 2.0f) * 0x1p-16f - 2.0f) * std::sqrt(3.0f);
}

Distribution constant(float value) {
  return {.shape = Distribution::Shape::Constant, .mean = value};
}
Distribution normal(float mean, float stddev, bool centredRows = false) {
  return {.shape = Distribution::Shape::Normal,
          .mean = mean,
          .stddev = stddev,
          .centredRows = centredRows};
}

} // namespace

Distribution distribution(const TensorSpec &spec, Margins margins) {
  // A matrix's rows are its outputs' weights over shape[0] inputs: weights
  // of variance 1/fan-in keep unit-variance inputs at unit variance.
  const float fanIn = static_cast<float>(spec.shape[0]);
  const float unitGain = 1.0f / std::sqrt(fanIn);
  switch (spec.kind) {
  case TensorKind::Norm:
    return constant(1.0f);
  case TensorKind::HcFn:
    return normal(0, kHcSpread * std::sqrt(kHcReferenceWidth / fanIn));
  case TensorKind::HcBase:
    return normal(0, kHcSpread);
  case TensorKind::HcScale:
    return {.shape = Distribution::Shape::Uniform,
            .low = kHcScaleLow,
            .high = kHcScaleHigh};
  case TensorKind::Sinks:
    return normal(0, kSinkSpread);
  case TensorKind::CompressorApe:
    return normal(0, kApeSpread);
  case TensorKind::GateBias:
    if (margins == Margins::Wide)
      return {.shape = Distribution::Shape::Favoured,
              .stddev = kGateBiasSpread,
              .high = kFavouredBias};
    return normal(0, kGateBiasSpread);
  case TensorKind::Tid2Eid:
    return {.shape = Distribution::Shape::DistinctExperts};
  case TensorKind::Embedding:
    return normal(kEmbeddingOffset,
                  margins == Margins::Wide ? kWideEmbeddingSpread : 1.0f);
  case TensorKind::IndexerWeight:
    return normal(kIndexerBias / fanIn, unitGain);
  case TensorKind::Output:
    if (margins == Margins::Wide)
      return {.shape = Distribution::Shape::Successor, .stddev = unitGain};
    return normal(0, unitGain, /*centredRows=*/true);
  case TensorKind::Router:
    return normal(0, unitGain, /*centredRows=*/true);
  case TensorKind::Projection:
  case TensorKind::RoutedExperts:
  case TensorKind::SharedExperts:
    return normal(0, unitGain);
  }
  return constant(0);
}

TensorDraw::TensorDraw(const TensorSpec &spec, const Config &config,
                       uint64_t seed, Margins margins)
    : distribution_(distribution(spec, margins)), nExpert_(config.nExpert),
      nExpertUsed_(config.nExpertUsed), rowLength_(spec.shape[0]),
      stream_(streamOf(seed, spec.name)) {
  if (distribution_.shape != Distribution::Shape::Successor)
    return;
  // Rows of the embedding, from its stream.
  stream_ = streamOf(seed, "token_embd.weight");
  successor_ = VocabularyCycle(static_cast<uint64_t>(spec.rows()), seed);
}

VocabularyCycle::VocabularyCycle(uint64_t vocabulary, uint64_t seed)
    : v_(vocabulary) {
  // (a·t + b) mod V visits every token before it repeats when b is prime
  // to V and a − 1 is a multiple of every prime factor of V, and of 4 if 4
  // divides V (Hull and Dobell, 1962).
  uint64_t step = v_ % 4 == 0 ? 2 : 1, rest = v_;
  for (uint64_t p = 2; p <= rest; ++p)
    if (rest % p == 0) {
      step *= p;
      while (rest % p == 0)
        rest /= p;
    }
  const uint64_t stream = streamOf(seed, "vocabulary cycle");
  a_ = (1 + randomBits(stream, 0) % v_ * step) % v_;
  b_ = randomBits(stream, 1) % v_;
  while (std::gcd(b_, v_) != 1)
    b_ = (b_ + 1) % v_;
}

void TensorDraw::row(int64_t row, std::span<float> out) const {
  const Distribution &d = distribution_;
  const uint64_t first = static_cast<uint64_t>(row * rowLength_);
  switch (d.shape) {
  case Distribution::Shape::Constant:
    std::fill(out.begin(), out.end(), d.mean);
    return;
  case Distribution::Shape::DistinctExperts: {
    std::vector<int32_t> ids(out.size());
    experts(row, ids);
    std::copy(ids.begin(), ids.end(), out.begin());
    return;
  }
  case Distribution::Shape::Uniform:
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = d.low +
               (d.high - d.low) * unitUniform(randomBits(stream_, first + i));
    return;
  case Distribution::Shape::Favoured: {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = d.stddev * standardNormal(randomBits(stream_, first + i));
    // The favoured places from a stream of their own.
    std::vector<int32_t> favoured(nExpertUsed_);
    distinctExperts(mix(stream_), row, favoured);
    for (int32_t e : favoured)
      out[static_cast<size_t>(e)] += d.high;
    return;
  }
  case Distribution::Shape::Successor: {
    const uint64_t source = successor_(static_cast<uint64_t>(row)) * rowLength_;
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = standardNormal(randomBits(stream_, source + i));
    double mean = std::accumulate(out.begin(), out.end(), 0.0) /
                  static_cast<double>(out.size());
    for (float &x : out)
      x = d.stddev * (x - static_cast<float>(mean));
    return;
  }
  case Distribution::Shape::Normal:
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = d.stddev * standardNormal(randomBits(stream_, first + i));
    float shift = d.mean;
    if (d.centredRows) {
      double sum = std::accumulate(out.begin(), out.end(), 0.0);
      shift -= static_cast<float>(sum / static_cast<double>(out.size()));
    }
    for (float &x : out)
      x += shift;
    return;
  }
}

void TensorDraw::experts(int64_t row, std::span<int32_t> out) const {
  distinctExperts(stream_, row, out);
}

void TensorDraw::distinctExperts(uint64_t stream, int64_t row,
                                 std::span<int32_t> out) const {
  // The first out.size() places of a Fisher-Yates shuffle of 0..E-1: a
  // uniformly random subset, in random order. The modulo's bias is below
  // E / 2^64.
  std::vector<int32_t> pool(nExpert_);
  std::iota(pool.begin(), pool.end(), 0);
  const uint64_t first = static_cast<uint64_t>(row) * nExpert_;
  for (size_t j = 0; j < out.size(); ++j) {
    uint64_t pick = j + randomBits(stream, first + j) % (nExpert_ - j);
    std::swap(pool[j], pool[pick]);
    out[j] = pool[j];
  }
}

} // namespace kf::deepseek_v4
