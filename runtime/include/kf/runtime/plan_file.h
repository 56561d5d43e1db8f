// Plans as bytes (docs/engine.md, "Plan files"): a GGUF file of metadata
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

// The plans of one model (a prefill's, a decode's) as bytes, tagged with
// KF_PLAN_ABI_VERSION; plan p's keys under `kf.plan.<p>.`.
absl::StatusOr<std::vector<uint8_t>>
serializePlans(std::span<const Plan> plans);

// The plans `bytes` hold; `name` stands for them in errors. Fails, in one
// line naming `name` and the key, on bytes that are not plans, plans of
// another ABI version, a weight layout the runtime does not pack, a plan
// that Plan::validate refuses, two plans of one name, or plans of other
// targets or state layouts than the first's.
absl::StatusOr<std::vector<Plan>> parsePlans(std::span<const uint8_t> bytes,
                                             const std::string &name);

} // namespace kf
