#include "kf/runtime/plan_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "kf/runtime/host_cpu.h"
#include "kf/runtime/plan_file.h"

namespace kf {

void PlanLibrary::Close::operator()(void *handle) const { dlclose(handle); }

absl::StatusOr<PlanLibrary> PlanLibrary::open(const std::string &path) {
  PlanLibrary library;
  // Loading runs none of the artifact's code: kernels have no constructors.
  // A name without a slash is the file here, not one dlopen looks up on the
  // library path.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  library.handle_.reset(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library.handle_) {
    const char *error = dlerror();
    return absl::NotFoundError(absl::StrCat(
        path, ": cannot load it as a compiled plan: ", error ? error : "?"));
  }
  void *handle = library.handle_.get();
  auto *data = static_cast<const uint8_t *>(dlsym(handle, KF_PLAN_DATA_SYMBOL));
  auto *size =
      static_cast<const uint64_t *>(dlsym(handle, KF_PLAN_SIZE_SYMBOL));
  if (!data || !size)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a compiled plan (it exports no ",
                     KF_PLAN_DATA_SYMBOL, ")"));
  absl::StatusOr<std::vector<Plan>> plans =
      parsePlans(std::span<const uint8_t>(data, *size), path);
  if (!plans.ok())
    return plans.status();
  // The plans share one target: its features are checked once.
  if (absl::Status s =
          checkCpuFeatures(plans->front().features, hostCpuFeatures(),
                           absl::StrCat(path, " (compiled for target ",
                                        plans->front().target, ")"));
      !s.ok())
    return s;
  for (const Plan &plan : *plans) {
    std::vector<kf_step_fn> kernels;
    for (const std::string &name : plan.kernels) {
      void *kernel = dlsym(handle, name.c_str());
      if (!kernel)
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": exports no kernel ", name));
      kernels.push_back(reinterpret_cast<kf_step_fn>(kernel));
    }
    library.kernels_.push_back(std::move(kernels));
  }
  library.plans_ = *std::move(plans);
  return library;
}

const Plan *PlanLibrary::find(std::string_view name, size_t *index) const {
  for (size_t p = 0; p < plans_.size(); ++p)
    if (plans_[p].name == name) {
      if (index)
        *index = p;
      return &plans_[p];
    }
  return nullptr;
}

} // namespace kf
