// kf-bench matmul: quantized matmul kernels timed against the DRAM roofline
// and oneDNN, all measured in one run.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kf/runtime/format.h"
#include "matmul_kernel.h"
#include "timing.h"

namespace kf::bench {

struct MatmulOptions {
  std::vector<Format> formats;
  std::vector<int64_t> m;
  int64_t k = 4096, n = 2048;
  std::vector<int> threads;
  // Cold: every call reads its weights from DRAM, cycling through copies
  // that together exceed the caches, as MoE experts do. Hot: one matrix.
  bool cold = true;
  RepPolicy reps;
  // Every case runs once per round, the rounds one after another over all
  // cases, with the DRAM probe measured again after each; a case's figure is
  // the median of its rounds. Fixed before the run, so that no figure is
  // taken by adding rounds until it looks good.
  int rounds = 3;
  bool json = false;
  // The cold set and the bandwidth buffer; defaultColdSet() when unset.
  std::optional<uint64_t> setBytes;
  uint64_t seed = 1;
  // Limits oneDNN's instruction set (onednnIsaNames()).
  std::optional<std::string> onednnIsa;
  // oneDNN timed again, limited to this instruction set, in a child process
  // (oneDNN takes one limit per process): its figure beside the best one.
  // Unset: avx512_core_vnni where the CPU has AMX, none elsewhere; "none":
  // never.
  std::optional<std::string> onednnAlso;
  // Only the kernels of these names (MatmulKernel::name); empty: all.
  std::vector<std::string> kernels;
};

// One timed case: a kernel (or oneDNN) on one format, M and thread count.
struct CaseResult {
  // A MatmulKernel's name, "onednn", or "onednn@ISA" for oneDNN limited to
  // ISA (MatmulOptions::onednnAlso).
  std::string kernel;
  std::string format;         // a kf format, or oneDNN's "u8s8s32" / "f32"
  std::string implementation; // what oneDNN chose; empty for kernels
  int64_t m = 0, k = 0, n = 0;
  int threads = 0;
  bool cold = true;
  uint64_t weightBytes = 0; // read by one call
  // The roofline's bytes: the weights in their file format (a kernel's
  // packed layout may hold more, e.g. IQ1's ternary codes), or oneDNN's.
  uint64_t floorBytes = 0;
  int64_t copies = 0;         // weight matrices cycled through
  std::vector<Timing> rounds; // the timed calls of each round
  // The DRAM probe on `threads` threads: the median of its measurements over
  // the run (the roofline) and the fastest of them.
  double dramGbps = 0, dramMaxGbps = 0;
  // CPUs other processes kept busy while the calls were timed (LoadMeter),
  // the most in any round.
  double otherCpus = 0;
  // oneDNN's medians on the same M and threads; 0 in oneDNN's own rows.
  double onednnInt8Seconds = 0, onednnF32Seconds = 0;

  // The median over the rounds of each round's median.
  double seconds() const;
  // How far the rounds' medians lie apart: (slowest - fastest) / seconds().
  double spread() const;
  double minCallSeconds() const; // the fastest call of any round
  int64_t reps() const;          // timed calls per round
  double gflops() const;         // 2·M·N·K / time
  double weightGbps() const;     // weight bytes / time
  double floorSeconds() const;   // floor bytes / DRAM bandwidth
  double rooflinePercent() const;
  // Cold weights read faster than the fastest DRAM probe: the probe has
  // failed to find what the machine can do, and the figure is no result.
  bool beatsProbe() const;
  // This case's throughput over oneDNN's (0 when not known).
  double vsOnednnInt8() const;
  double vsOnednnF32() const;
};

// Checks every option that does not need the machine: formats, K against
// their blocks, M, N and thread counts. Returns the one-line problem.
std::optional<std::string> validate(const MatmulOptions &options);

// Runs every case with `kernels`, writing a table (or, with options.json,
// one JSON object per line per case) to `out` as cases finish.
absl::Status runMatmul(const MatmulOptions &options,
                       std::span<const MatmulKernel> kernels,
                       std::ostream &out);

} // namespace kf::bench
