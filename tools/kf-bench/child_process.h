// Work run in a child process: for what a process can do only once, such as
// limiting oneDNN's instruction set, which oneDNN accepts once per process.
#pragma once

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace kf::bench {

// Forks, runs `work` in the child and returns the text it returned (or its
// error). The child ends with _exit, so nothing this process buffered is
// written twice. Call it before this process starts threads: a child forked
// while another thread holds a lock (OpenMP's, the allocator's) may wait for
// it forever.
absl::StatusOr<std::string>
runInChild(absl::FunctionRef<absl::StatusOr<std::string>()> work);

} // namespace kf::bench
