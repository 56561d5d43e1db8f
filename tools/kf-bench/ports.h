// `kf-bench ports`: how many of each vector instruction the quantized kernels
// issue one core runs per cycle, alone and in the mixes a K block issues.
//
// A kernel at large M is bound by its vector instructions, not by memory, and
// which of them compete for the same execution ports decides what a block
// costs: whether a block's float scaling or a sub-block's integer scale
// multiply is free beside its vpdpbusd or takes their slots. Vendors' tables
// differ by core and are not at hand for a VM's CPU, so this measures it: each
// case is a loop of 12 (a mix 10, gathers 6) independent instructions (no
// chain longer than the loop), timed against a chain of dependent 512-bit (or
// 256-bit) vpaddd, one cycle each at whatever clock the vector unit runs at.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kf::bench {

struct PortRate {
  std::string name;  // the instructions of one group, e.g. "vpdpbusd zmm"
  int perGroup = 12; // instructions per group (loop iteration)
  double perCycle = 0;
};

struct PortReport {
  std::string isa;      // "avx512vnni" or "avx2"
  double vectorGhz = 0; // the clock under the measured vector work
  double scalarGhz = 0; // the clock from a dependent imul chain
  std::vector<PortRate> rates;
};

// Measures the cases of `isa` ("avx512vnni" or "avx2"; empty: the best this
// CPU runs), each the median of `rounds` runs of about `secondsPerRun`.
// Fails on an ISA this CPU does not run, or off x86-64.
absl::StatusOr<PortReport> measurePorts(std::string_view isa, int rounds,
                                        double secondsPerRun);

// The int8 dot-product peak of one core: the widest multiply-add sequence
// the quantized kernels use (vpdpbusd zmm, 64 multiply-adds; on AVX2 a
// vpmaddubsw + vpmaddwd pair, 32), issued as fast as the core issues it,
// at the clock a dependent vector chain runs at. Medians of `rounds`.
struct Int8Peak {
  std::string instruction;
  int macsPerInstruction = 0;
  double ghz = 0, perCycle = 0;
  double macsPerSecond = 0;
};
absl::StatusOr<Int8Peak> measureInt8Peak(int rounds, double secondsPerRun);

// The report as a table.
void printPorts(const PortReport &report, std::ostream &out);

} // namespace kf::bench
