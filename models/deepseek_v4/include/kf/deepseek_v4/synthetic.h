// The values of a synthetic DeepSeek-V4 model (kf-gguf synth): random
// weights drawn as model §9 (docs/models/deepseek_v4_model.md) advises,
// scaled so that activations stay O(1) through the layers. Every value is a
// function of (seed, tensor name, row, column) alone, so a tensor's rows can be
// drawn in any order, on any number of threads, and give the same bytes.
// docs/models/deepseek_v4.md lists the distributions and why.
#pragma once

#include <cstdint>
#include <span>

#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/tensors.h"

namespace kf::deepseek_v4 {

struct Distribution {
  enum class Shape {
    Constant,        // every value is `mean`
    Normal,          // approximately N(mean, stddev²), see below
    Uniform,         // uniform in [low, high)
    DistinctExperts, // each row: nExpertUsed distinct experts of nExpert
    Favoured,        // Normal, plus `high` at nExpertUsed distinct places a row
    Successor,       // row t: the embedding's row σ(t), centred, times stddev
  };
  Shape shape = Shape::Constant;
  float mean = 0;
  float stddev = 0;
  float low = 0;
  float high = 0;
  // Normal only: each row is shifted to mean zero after it is drawn.
  bool centredRows = false;
};

// How clear the model's discrete choices are (docs/models/deepseek_v4.md,
// "Synthetic models"). Natural: as random weights make them, so that a
// choice is often a near tie. Wide: each learned-routing layer favours
// nExpertUsed experts by a bias that no gate score overturns, the
// embedding is spread three times wider, and the head's row of token t is
// the embedding of token σ(t), σ a bijection of the vocabulary with one
// cycle: the model predicts σ⁻¹ of the token it reads, by a wide margin
// over the others.
enum class Margins { Natural, Wide };

// How synth draws a tensor.
Distribution distribution(const TensorSpec &spec,
                          Margins margins = Margins::Natural);

// σ of Margins::Wide: a bijection of a vocabulary of V tokens, drawn from
// `seed`, σ(t) = (a·t + b) mod V, whose one cycle visits every token.
class VocabularyCycle {
public:
  VocabularyCycle() = default;
  VocabularyCycle(uint64_t vocabulary, uint64_t seed);
  uint64_t operator()(uint64_t token) const { return (a_ * token + b_) % v_; }

private:
  uint64_t v_ = 1, a_ = 1, b_ = 0;
};

// Draws the rows of one tensor.
class TensorDraw {
public:
  TensorDraw(const TensorSpec &spec, const Config &config, uint64_t seed,
             Margins margins = Margins::Natural);

  // Row `row`: spec.shape[0] values (expert ids for DistinctExperts).
  void row(int64_t row, std::span<float> out) const;
  // Row `row` of a DistinctExperts tensor: spec.shape[0] distinct experts,
  // as the i32 table stores them.
  void experts(int64_t row, std::span<int32_t> out) const;

private:
  // out.size() distinct experts of row `row`, drawn from `stream`.
  void distinctExperts(uint64_t stream, int64_t row,
                       std::span<int32_t> out) const;

  Distribution distribution_;
  uint32_t nExpert_, nExpertUsed_;
  VocabularyCycle successor_; // Successor: the embedding row of row t
  int64_t rowLength_;
  uint64_t stream_; // from (seed, tensor name)
};

} // namespace kf::deepseek_v4
