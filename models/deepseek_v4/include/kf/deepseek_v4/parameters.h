// Parameter counts of a DeepSeek-V4 configuration, as model §1.1
// (docs/models/deepseek_v4_model.md, "Derived sizes") computes them.
#pragma once

#include <cstdint>

#include "kf/deepseek_v4/config.h"

namespace kf::deepseek_v4 {

struct ParameterCount {
  // Every element of every weight tensor. The tid2eid tables are integer
  // routing tables, not parameters, and are left out.
  int64_t total = 0;
  // What one token computes with: everything but the embedding (one row is
  // read, not multiplied) and the E - k routed experts of each layer that it
  // does not use. Attention, indexer, compressors, router, shared experts,
  // hyper-connections, norms and the LM head all count.
  int64_t active = 0;
  // The embedding and the LM head, which model §1.1 also quotes.
  int64_t embeddingAndHead = 0;
};

ParameterCount countParameters(const Config &config);

} // namespace kf::deepseek_v4
