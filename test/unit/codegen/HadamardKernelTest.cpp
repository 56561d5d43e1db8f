// The compiled kf.hadamard against the DeepSeek-V4 golden's hadamard, run as
// a plan step by the runtime's executor on 1 and 2 threads, in place and
// not, per x86 ISA level, for rows of 1 to 1024 values (128, the indexer's,
// among them): Gaussian rows at several scales, an all-zero row, subnormal
// and huge rows (whose outputs overflow to inf), a row whose outputs lie
// exactly on bf16 rounding ties, and rows mixing magnitudes 2^70 apart (one
// built so that the two orders of summation lose different values).
//
// Tolerance (docs/engine.md, "Op kernels"; the derivation heads
// HadamardEmitter.cpp): the kernel's butterflies and the reference's row sums
// add the same floats in other orders, both in fp64. Where the row's nonzero
// exponents span at most 29 - log2(n) binades every addition is exact and the
// outputs are compared bit for bit; that is every row here but the mixed
// ones. Those are held to the bound: the two sums differ by at most (n - 1 +
// log2 n) · 2^-53 · Σ|x| (first order, with a margin), times n^-1/2, plus one
// bf16 ulp of the larger output from the monotone roundings after.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/HadamardKernel.h"
#include "kf/deepseek_v4/reference/hadamard.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(HadamardKernelOnIsa);

constexpr int64_t kRows = 9;

std::vector<float> rowsOf(int64_t n) {
  std::mt19937 rng(static_cast<unsigned>(n));
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> x(kRows * n);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      float &v = x[r * n + i];
      v = unit(rng);
      switch (r) {
      case 1:
        v *= 1e-3f;
        break;
      case 2:
        v *= 300.0f;
        break;
      case 3:
        v = 0.0f;
        break;
      case 4:
        v *= 1e-42f; // subnormals (and signed zeros)
        break;
      case 5:
        // Sums beyond the largest float: inf outputs where they add up.
        v = (v < 0 ? -1.0f : 1.0f) * std::numeric_limits<float>::max();
        break;
      case 6:
        // a, b and zeros: the outputs are (a ± b) · n^-1/2, where n is a
        // power of 4 exactly 1 + 2^-8 and 1 + 3 · 2^-8, halfway between two
        // bf16 values (ties to even: down to 1, up to 1 + 2^-6). A row of
        // one value (n = 1) takes a alone: 1 + 2^-7, a bf16 value.
        v = i == 0   ? (1.0f + 0x1p-7f) * std::sqrt(static_cast<float>(n))
            : i == 1 ? -0x1p-8f * std::sqrt(static_cast<float>(n))
                     : 0.0f;
        break;
      case 7:
        // Magnitudes 2^70 apart: the sums round, in different orders.
        if (i % 5 == 0)
          v *= 0x1p70f;
        break;
      case 8:
        // B, v, -B, v', ...: the reference's (B + v) - B loses v where the
        // butterflies' (B + v) + (-B + v') loses both, so the outputs differ.
        if (i % 2 == 0)
          v = i % 4 == 0 ? 0x1p70f : -0x1p70f;
        break;
      default:
        break;
      }
    }
  return x;
}

std::vector<float> expected(int64_t n, std::span<const float> x) {
  std::vector<float> y(x.begin(), x.end());
  for (int64_t r = 0; r < kRows; ++r)
    reference::hadamard(std::span<float>(y.data() + r * n, n));
  return y;
}

// How far an output of row `row` may lie from the reference's: 0 where the
// row's sums are exact (its nonzero exponents span at most 29 - log2 n
// binades), else the rounding bound of the two sums, scaled, plus one bf16
// ulp of the larger output.
double allowedError(std::span<const float> row, float got, float want) {
  const int64_t n = static_cast<int64_t>(row.size());
  const int logN = std::countr_zero(static_cast<uint64_t>(n));
  int minExponent = std::numeric_limits<int>::max();
  int maxExponent = std::numeric_limits<int>::min();
  double sumAbs = 0;
  for (float v : row) {
    if (v == 0)
      continue;
    // Subnormals share the smallest normal's ulp.
    int e = std::max(std::ilogb(v), -126);
    minExponent = std::min(minExponent, e);
    maxExponent = std::max(maxExponent, e);
    sumAbs += std::fabs(static_cast<double>(v));
  }
  if (minExponent > maxExponent || maxExponent - minExponent <= 29 - logN)
    return 0;
  double sums = 1.001 * static_cast<double>(n - 1 + logN) * 0x1p-53 * sumAbs /
                std::sqrt(static_cast<double>(n));
  float larger = std::max(std::fabs(got), std::fabs(want));
  double bf16Ulp = larger == 0 ? 0 : std::ldexp(1.0, std::ilogb(larger) - 7);
  return sums + 1.01 * bf16Ulp;
}

// Runs the kernel of `spec` on the test rows, 1 and 2 threads, in place and
// not, against the reference.
void checkKernel(const HadamardKernelSpec &spec, kf_step_fn kernel) {
  const std::vector<float> x = rowsOf(spec.n);
  const std::vector<float> want = expected(spec.n, x);
  for (bool inPlace : {false, true})
    for (int threads : {1, 2}) {
      const std::vector<float> got =
          runRowToRowStep(kernel, x, spec.n, {}, inPlace, threads);
      for (size_t i = 0; i < got.size(); ++i) {
        std::span<const float> row(x.data() + i / spec.n * spec.n, spec.n);
        double allowed = allowedError(row, got[i], want[i]);
        if (allowed == 0) {
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                    std::bit_cast<uint32_t>(want[i]))
              << "row " << i / spec.n << ", element " << i % spec.n << ": "
              << got[i] << " != " << want[i];
        } else {
          ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), allowed)
              << "row " << i / spec.n << ", element " << i % spec.n << ": "
              << got[i] << " vs " << want[i];
        }
      }
    }
}

TEST_P(HadamardKernelOnIsa, EqualsReference) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<HadamardKernelSpec> specs = {{1}, {4}, {16}, {128}, {1024}};
  forEachStepKernel(target, specs, buildHadamardKernel, checkKernel);
}

TEST(HadamardKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyHadamardKernel({96})),
            "hadamard kernel [n = 96]: expected n a power of two up to 4096");
  EXPECT_EQ(llvm::toString(verifyHadamardKernel({0})),
            "hadamard kernel [n = 0]: expected n a power of two up to 4096");
  EXPECT_EQ(llvm::toString(verifyHadamardKernel({8192})),
            "hadamard kernel [n = 8192]: expected n a power of two up to "
            "4096");
  EXPECT_FALSE(static_cast<bool>(verifyHadamardKernel({128})));
  EXPECT_FALSE(static_cast<bool>(verifyHadamardKernel({1})));
}

TEST(HadamardKernel, NamesEachVariantApart) {
  EXPECT_EQ(HadamardKernelSpec{128}.getSymbolName(), "kf_hadamard_n128");
  EXPECT_EQ(HadamardKernelSpec{128}.describe(), "hadamard kernel [n = 128]");
  EXPECT_NE(HadamardKernelSpec{64}.getSymbolName(),
            HadamardKernelSpec{128}.getSymbolName());
}

} // namespace
} // namespace kf::codegen
