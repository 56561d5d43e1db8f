// kf-gguf's command line run in process: the exit code and what went to each
// stream.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "commands.h"

namespace kf::gguf_tool {

struct Ran {
  int code;
  std::string out, err;
};

inline Ran runTool(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = run(args, out, err, /*progressBar=*/false);
  return {code, out.str(), err.str()};
}

} // namespace kf::gguf_tool
