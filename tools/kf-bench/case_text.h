// Timed cases as text, to carry them out of a child process (runInChild)
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
std::string encodeCases(std::span<const CaseResult> cases);

// encodeCases' text back; an error names the line that does not parse.
absl::StatusOr<std::vector<CaseResult>> decodeCases(std::string_view text);

} // namespace kf::bench
