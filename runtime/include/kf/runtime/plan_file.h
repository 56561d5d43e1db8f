// A plan as bytes (docs/engine.md, "Plan files"): a GGUF file of metadata
// only, under the `kf.plan.` keys, so that the runtime's reader — fuzzed,
// with its bounds checks — reads plans too. A compiled artifact carries
// these bytes beside its kernels; `kf-gguf info` prints them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/plan.h"

namespace kf {

// The plan's bytes, tagged with KF_PLAN_ABI_VERSION.
absl::StatusOr<std::vector<uint8_t>> serializePlan(const Plan &plan);

// The plan `bytes` hold; `name` stands for them in errors. Fails, in one line
// naming `name` and the key, on bytes that are not a plan, a plan of another
// ABI version, a weight layout the runtime does not pack, or a plan that
// Plan::validate refuses.
absl::StatusOr<Plan> parsePlan(std::span<const uint8_t> bytes,
                               const std::string &name);

} // namespace kf
