// kf-run: runs a model on a list of tokens. For now one engine, the
// DeepSeek-V4 golden reference (docs/models/deepseek_v4.md), with dumps of
// the logits and of every layer's stream state for comparisons.
#pragma once

#include <ostream>
#include <span>
#include <string>

namespace kf::run_tool {

// The command line: `args` without the program name. Returns the exit code:
// 0 on success, 1 when the run fails, 2 on a usage error.
int run(std::span<const std::string> args, std::ostream &out,
        std::ostream &err);

} // namespace kf::run_tool
