// Repeated timed calls and their median: shared machines are noisy, and a
// median ignores the calls another process interrupted where a mean does not.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace kf::bench {

// How many timed calls: exactly `reps`, or as many as fit in `minSeconds`
// (at least kMinReps, at most kMaxReps).
struct RepPolicy {
  std::optional<int> reps;
  double minSeconds = 0.5;

  static constexpr int kMinReps = 3;
  static constexpr int kMaxReps = 100000;
};

struct Timing {
  std::vector<double> seconds; // one per timed call, in call order

  double median() const;
  double min() const;
};

// The median of `values`: the middle one, or the mean of the middle two.
// Zero for none.
double median(std::vector<double> values);

// Calls call(0) once untimed, to fault in code and data, then times
// call(1), call(2), ... one by one as `policy` says. The index lets the
// caller cycle through weight sets. Stops at the first error.
absl::StatusOr<Timing> timeCalls(const RepPolicy &policy,
                                 absl::FunctionRef<absl::Status(int64_t)> call);

} // namespace kf::bench
