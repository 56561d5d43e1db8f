// kf-bench's command line, as a function so that tests run it without a
// process.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>

#include "matmul.h"
#include "model.h"

#include "matmul_kernel.h"
#include "ports.h"

namespace kf::bench {

// Parses the arguments of `kf-bench matmul` (without the command name) into
// `options`; returns the one-line message of a usage error, if any.
std::optional<std::string> parseMatmul(std::span<const std::string> args,
                                       MatmulOptions &options);

struct PortOptions {
  std::string isa; // empty: the best this CPU runs
  int rounds = 5;
  double secondsPerRun = 0.05;
};

// Parses the arguments of `kf-bench ports` (without the command name).
// `kf-bench model`'s options.
std::optional<std::string> parseModel(std::span<const std::string> args,
                                      ModelOptions &o);

std::optional<std::string> parsePorts(std::span<const std::string> args,
                                      PortOptions &options);

// The command line: `args` without the program name. Returns the exit code,
// 0 on success and 1 on any error, whose one-line message goes to `err`.
// The reference kernel is always timed; `compiled` are timed after it.
int run(std::span<const std::string> args, std::ostream &out, std::ostream &err,
        std::span<const MatmulKernel> compiled = {});

} // namespace kf::bench
