// Internal: the status of a failed system call on a file.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"

namespace kf {

// "<path>: <what>: <strerror(err)>", with the code errno implies. Callers
// pass errno as `err` before anything else can change it.
inline absl::Status systemError(int err, std::string_view path,
                                std::string_view what) {
  return absl::ErrnoToStatus(err,
                             absl::StrCat(toAbsl(path), ": ", toAbsl(what)));
}

} // namespace kf
