// A compiled artifact loaded (docs/engine.md, "Artifacts"): the shared
// object kf-compile --emit=plan writes, opened with dlopen — no LLVM — its
// plan read from the bytes it exports and checked (ABI version, kf::Plan's
// checks, the CPU features its code uses against this machine's) before any
// of its code runs, and its step kernels resolved by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/plan.h"
#include "kf/runtime/plan_abi.h"

namespace kf {

class PlanLibrary {
public:
  // Fails, in one line naming `path`, on a file that does not load, carries
  // no plan or one of another ABI version, a plan the runtime would refuse,
  // code for features this CPU lacks, or a kernel it does not export.
  static absl::StatusOr<PlanLibrary> open(const std::string &path);

  const Plan &plan() const { return plan_; }
  // The plan's kernels, in its index order; valid while this object lives.
  const std::vector<kf_step_fn> &kernels() const { return kernels_; }

private:
  struct Close {
    void operator()(void *handle) const;
  };

  Plan plan_;
  std::vector<kf_step_fn> kernels_;
  std::unique_ptr<void, Close> handle_;
};

} // namespace kf
