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
  // Tokens of each timed prefill (at most the plan's rows); empty: 1, 64
  // and the plan's rows, those the plan takes.
  std::vector<int> prompts;
  int decode = 32; // decode steps after the longest prefill, each timed
  int rounds = 3;  // of everything, of which the medians
  bool json = false;
  bool pin = false; // each thread pinned to a core of its own (kf-run --pin)
  // Also each decode step's time, barrier wait and weight stream rate.
  bool steps = false;
};

// Prints the tables (or one JSON object per thread count): prefill tokens/s
// per prompt length against the int8 dot-product peak of the threads, and
// decode tokens/s against the DRAM roofline, with their spread over the
// rounds; the reference's figures and the speedups over it (when its fp32
// weights fit in memory); barriers per run; where the time goes by op kind
// and by layer (one profiled run of each), and with `steps` by decode
// step; packed weight and state bytes
// and the peak resident bytes of the session (before the reference's
// weights and the probe's buffer are allocated).
absl::Status runModel(const ModelOptions &options, std::ostream &out);

} // namespace kf::bench
