// libFuzzer target for plan files (docs/engine.md, "Plan files"), which an
// artifact carries and the runtime reads before it runs any of the
// artifact's code. Any bytes are either refused with one line or parsed into
// a plan that validates, and the plan's bytes parse back to the same plan.
#include <cstdio>
#include <cstdlib>

#include "kf/runtime/plan_file.h"

namespace {

[[noreturn]] void fail(const char *what, const absl::Status &status) {
  std::fprintf(stderr, "plan_fuzzer: %s: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  absl::StatusOr<kf::Plan> plan = kf::parsePlan({data, size}, "in.kfp");
  if (!plan.ok()) {
    if (plan.status().message().find('\n') != absl::string_view::npos)
      fail("an error spans lines", plan.status());
    return 0;
  }
  if (absl::Status s = plan->validate(); !s.ok())
    fail("a parsed plan does not validate", s);
  absl::StatusOr<std::vector<uint8_t>> bytes = kf::serializePlan(*plan);
  if (!bytes.ok())
    fail("a parsed plan does not serialize", bytes.status());
  absl::StatusOr<kf::Plan> again = kf::parsePlan(*bytes, "again.kfp");
  if (!again.ok())
    fail("a serialized plan does not parse", again.status());
  if (!(*again == *plan))
    fail("a plan reads back changed", absl::OkStatus());
  return 0;
}
