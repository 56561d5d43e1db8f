// Timed cases as text, to carry them out of a child process (run_in_child)
// without losing a bit of a timing.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "matmul.h"

namespace kf::bench {

// What was measured of each case: its names, shape, bytes and every timed
// call. Figures derived later (DRAM, oneDNN ratios) are left out.
std::string encode_cases(std::span<const CaseResult> cases);

// encode_cases' text back; an error names the line that does not parse.
absl::StatusOr<std::vector<CaseResult>> decode_cases(std::string_view text);

} // namespace kf::bench
