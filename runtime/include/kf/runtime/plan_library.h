// A compiled artifact loaded (docs/engine.md, "Artifacts"): the shared
// object kf-compile --emit=plan writes, opened with dlopen — no LLVM — its
// plan read from the bytes it exports and checked (ABI version, kf::Plan's
// checks, the CPU features its code uses against this machine's) before any
// of its code runs, and its step kernels resolved by name.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/plan.h"
#include "kf/runtime/plan_abi.h"

namespace kf {

class PlanLibrary {
public:
  // Fails, in one line naming `path`, on a file that does not load, carries
  // no plans or plans of another ABI version, a plan the runtime would
  // refuse, code for features this CPU lacks, or a kernel it does not
  // export.
  static absl::StatusOr<PlanLibrary> open(const std::string &path);

  // The model's plans (a prefill's, a decode's), sharing one state layout.
  const std::vector<Plan> &plans() const { return plans_; }
  // Plan `p`'s kernels, in its index order; valid while this object lives.
  const std::vector<kf_step_fn> &kernels(size_t p) const { return kernels_[p]; }
  // The plan named `name` and, in `index`, its position; null if none.
  const Plan *find(std::string_view name, size_t *index = nullptr) const;

private:
  struct Close {
    void operator()(void *handle) const;
  };

  std::vector<Plan> plans_;
  std::vector<std::vector<kf_step_fn>> kernels_;
  std::unique_ptr<void, Close> handle_;
};

} // namespace kf
