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
  absl::StatusOr<std::vector<kf::Plan>> plans =
      kf::parsePlans({data, size}, "in.kfp");
  if (!plans.ok()) {
    if (plans.status().message().find('\n') != absl::string_view::npos)
      fail("an error spans lines", plans.status());
    return 0;
  }
  for (const kf::Plan &plan : *plans)
    if (absl::Status s = plan.validate(); !s.ok())
      fail("a parsed plan does not validate", s);
  absl::StatusOr<std::vector<uint8_t>> bytes = kf::serializePlans(*plans);
  if (!bytes.ok())
    fail("parsed plans do not serialize", bytes.status());
  absl::StatusOr<std::vector<kf::Plan>> again =
      kf::parsePlans(*bytes, "again.kfp");
  if (!again.ok())
    fail("serialized plans do not parse", again.status());
  if (!(*again == *plans))
    fail("plans read back changed", absl::OkStatus());
  return 0;
}
