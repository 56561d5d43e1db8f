// Tests that run one kernel ISA's code on this machine are instantiated per
// ISA under the prefix "Isa", so that the name of each ends in the ISA's
// (Isa/MatmulKernelOnIsa.EqualsReference/avx2), and where this machine cannot
// run the ISA they are skipped by KF_SKIP_UNLESS_HOST_RUNS with a reason of
// one form ("ISA avx512vnni not executed: this CPU lacks avx512vnni"). Nothing
// that needs an ISA the host lacks passes silently, and scripts/isa-summary
// reads the names and reasons back from ctest's results to say which ISA
// paths ran (docs/architecture.md, "ISA paths").
#ifndef KF_TEST_UNIT_CODEGEN_HOSTISA_H
#define KF_TEST_UNIT_CODEGEN_HOSTISA_H

#include "kf/Codegen/MatmulKernel.h"
#include "kf/Target/TargetInfo.h"

#include "gtest/gtest.h"

#include <string>

namespace kf::codegen {

/// This machine as the compiler sees it (detected once).
const target::TargetInfo &hostTarget();

/// The target an ISA's tests compile its kernels for: the generic x86-64
/// level that has the ISA (x86-64-v2 for the portable kernels, v3 for AVX2,
/// v4 for AVX-512's float kernels), so that no instruction of a wider ISA
/// sneaks in on a wider host, or the host where the ISA needs features no
/// level has (VNNI, BF16) or the host is not x86.
target::TargetInfo isaTestTarget(KernelIsa isa);

/// Why this machine cannot run `isa`'s code: the features its CPU lacks, or
/// that it is of another architecture; empty when it can.
std::string whyHostCannotRun(KernelIsa isa);

/// Rows per group of an ISA's kernels in tests: the ISA's vector, and 4 for
/// the portable kernel (which takes any).
int64_t testRows(KernelIsa isa);

/// A test parameter's name: its ISA's (avx512vnni, neon_dotprod).
std::string isaParamName(const ::testing::TestParamInfo<KernelIsa> &info);

} // namespace kf::codegen

/// Skips the current test, naming `isa` and the reason, where this machine
/// cannot run its code.
#define KF_SKIP_UNLESS_HOST_RUNS(isa)                                          \
  if (std::string kfWhy = ::kf::codegen::whyHostCannotRun(isa);                \
      !kfWhy.empty())                                                          \
  GTEST_SKIP() << "ISA " << ::kf::codegen::getIsaName(isa).str()               \
               << " not executed: " << kfWhy

#endif // KF_TEST_UNIT_CODEGEN_HOSTISA_H
