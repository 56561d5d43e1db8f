// The kernel test matrix's table (KernelCases.h) against the project's own
// tables: one row for every format with a matmul emitter, none for another;
// each row's tolerance the one its arithmetic calls for; and every ISA with
// kernels in some suite.
#include "KernelCases.h"

#include "kf/runtime/packed_layout.h"

#include "gtest/gtest.h"

#include <set>

namespace kf::codegen {
namespace {

TEST(KernelCases, HaveOneRowPerFormatWithAnEmitter) {
  std::set<Format> rows;
  for (const FormatCases &row : kFormatCases) {
    EXPECT_TRUE(hasMatmulEmitter(row.format)) << formatInfo(row.format).name;
    EXPECT_TRUE(rows.insert(row.format).second)
        << formatInfo(row.format).name << " has two rows";
  }
  for (const FormatInfo &info : allFormats()) {
    if (hasMatmulEmitter(info.format)) {
      EXPECT_TRUE(rows.count(info.format))
          << info.name << " has an emitter but no row in kFormatCases";
    }
  }
}

// Bit for bit exactly where the kernels' arithmetic is integer dots: every
// format but the float ones.
TEST(KernelCases, ToleranceFollowsTheArithmetic) {
  for (const FormatCases &row : kFormatCases)
    EXPECT_EQ(row.tolerance, isFloatFormat(row.format) ? Tolerance::FloatBound
                                                       : Tolerance::Exact)
        << formatInfo(row.format).name;
}

// Every ISA of KernelIsas.def has kernels that some suite runs: on x86 or
// under QEMU.
TEST(KernelCases, RunEveryIsa) {
  std::set<KernelIsa> run;
  for (target::Arch arch : {target::Arch::X86_64, target::Arch::AArch64})
    for (KernelIsa isa : getKernelIsas(arch))
      run.insert(isa);
  for (KernelIsa isa : target::getIsasByPreference())
    EXPECT_TRUE(run.count(isa)) << getIsaName(isa).str();
  for (KernelIsa isa : getKernelIsas(target::Arch::AArch64))
    EXPECT_FALSE(getCrossSpecs(isa).empty()) << getIsaName(isa).str();
}

} // namespace
} // namespace kf::codegen
