#include "timing.h"

#include <algorithm>
#include <chrono>

#include "kf/runtime/status_macros.h"

namespace kf::bench {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1)
    return values[mid];
  double upper = values[mid];
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double Timing::median() const { return bench::median(seconds); }

double Timing::min() const {
  return seconds.empty() ? 0
                         : *std::min_element(seconds.begin(), seconds.end());
}

absl::StatusOr<Timing>
timeCalls(const RepPolicy &policy,
          absl::FunctionRef<absl::Status(int64_t)> call) {
  using Clock = std::chrono::steady_clock;
  KF_RETURN_IF_ERROR(call(0));
  Timing timing;
  double total = 0;
  for (int64_t i = 1;; ++i) {
    int done = static_cast<int>(timing.seconds.size());
    if (policy.reps
            ? done >= *policy.reps
            : done >= RepPolicy::kMaxReps ||
                  (done >= RepPolicy::kMinReps && total >= policy.minSeconds))
      break;
    Clock::time_point start = Clock::now();
    KF_RETURN_IF_ERROR(call(i));
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    timing.seconds.push_back(s);
    total += s;
  }
  return timing;
}

} // namespace kf::bench
