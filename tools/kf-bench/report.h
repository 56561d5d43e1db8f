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
  uint64_t l3Bytes = 0;
  ColdSet set;
  std::vector<BandwidthSeries> bandwidth; // per thread count, in its order
  std::string onednnVersion;
  std::string onednnIsa; // what oneDNN's kernels use
  // oneDNN's second instruction set (MatmulOptions::onednnAlso), as the
  // child process found it in effect; empty when none ran.
  std::string onednnAlsoIsa;
  std::string onednnAlsoWhy;
  // Weight bytes of one matrix per format, for the roofline floors.
  std::vector<std::pair<std::string, uint64_t>> weightBytes;
};

void writeHeader(const RunInfo &info, std::ostream &out);
// The table's kernel column: as wide as the longest name in `rows`.
int kernelColumnWidth(const std::vector<CaseResult> &rows);
void writeTableHead(int kernelWidth, std::ostream &out);
void writeRow(const CaseResult &result, int kernelWidth, std::ostream &out);
// After the table: the rounds, and the cases whose cold weights read faster
// than the DRAM probe (probe failures, not results).
void writeFooter(const std::vector<CaseResult> &rows, std::ostream &out);
// One line holding one JSON object.
void writeJson(const CaseResult &result, const RunInfo &info,
               std::ostream &out);

} // namespace kf::bench
