// kf-bench matmul's output: a header with the measured machine figures, then
// a table row or a JSON object per case.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bandwidth.h"
#include "machine.h"
#include "matmul.h"

namespace kf::bench {

// What the header says, gathered before the first case.
struct RunInfo {
  const MatmulOptions *options = nullptr;
  uint64_t l3_bytes = 0;
  ColdSet set;
  std::vector<BandwidthSeries> bandwidth; // per thread count, in its order
  std::string onednn_version;
  std::string onednn_isa; // what oneDNN's kernels use
  // oneDNN's second instruction set (MatmulOptions::onednn_also), as the
  // child process found it in effect; empty when none ran.
  std::string onednn_also_isa;
  std::string onednn_also_why;
  // Weight bytes of one matrix per format, for the roofline floors.
  std::vector<std::pair<std::string, uint64_t>> weight_bytes;
};

void write_header(const RunInfo &info, std::ostream &out);
// The table's kernel column: as wide as the longest name in `rows`.
int kernel_column_width(const std::vector<CaseResult> &rows);
void write_table_head(int kernel_width, std::ostream &out);
void write_row(const CaseResult &result, int kernel_width, std::ostream &out);
// After the table: the rounds, and the cases whose cold weights read faster
// than the DRAM probe (probe failures, not results).
void write_footer(const std::vector<CaseResult> &rows, std::ostream &out);
// One line holding one JSON object.
void write_json(const CaseResult &result, const RunInfo &info,
                std::ostream &out);

} // namespace kf::bench
