// kf-bench's command line, as a function so that tests run it without a
// process.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>

#include "matmul.h"

namespace kf::bench {

// Parses the arguments of `kf-bench matmul` (without the command name) into
// `options`; returns the one-line message of a usage error, if any.
std::optional<std::string> parse_matmul(std::span<const std::string> args,
                                        MatmulOptions &options);

// The command line: `args` without the program name. Returns the exit code,
// 0 on success and 1 on any error, whose one-line message goes to `err`.
int run(std::span<const std::string> args, std::ostream &out,
        std::ostream &err);

} // namespace kf::bench
