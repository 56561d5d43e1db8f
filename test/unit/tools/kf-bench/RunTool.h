// kf-bench's command line run in process, for the tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace kf::bench::testing {

struct Result {
  int code;
  std::string out, err;
};

inline Result runWith(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

} // namespace kf::bench::testing
