// kf-bench model: a compiled model's prefill and decode speed (docs/engine.md,
// "Sessions"), each against its floor measured in the same run: decode
// against the DRAM roofline of the weight bytes one decode token reads, and
// both against the golden reference forward on the same file.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kf::bench {

struct ModelOptions {
  std::string plan;  // the artifact (kf-compile -m FILE -o MODEL.kfp)
  std::string model; // the GGUF file
  std::vector<int> threads;
  int prompt = 64; // tokens of the timed prefill (at most the plan's rows)
  int decode = 32; // decode steps after it, each timed
  int rounds = 3;  // of everything, of which the medians
  bool json = false;
};

// Prints the table (or one JSON object per thread count): prefill and decode
// tokens/s with their spread over the rounds, the decode roofline and the
// share of it reached, the reference's figures and the speedups over it,
// barriers per run, packed weight and state bytes, and the peak resident
// bytes of the sessions (before the reference's weights and the probe's
// buffer are allocated).
absl::Status runModel(const ModelOptions &options, std::ostream &out);

} // namespace kf::bench
