// Debian builds Abseil with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW is 0), which std::string_view does not
// convert to; the runtime speaks std::string_view and crosses into Abseil here.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace kf {

inline absl::string_view toAbsl(std::string_view s) {
  return {s.data(), s.size()};
}

} // namespace kf
