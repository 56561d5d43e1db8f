// Compiled matmul kernels of every format, JIT-compiled for this machine,
// against the reference dot product kf::dot, for every column count m = 1..17
// (every column tile width and run-time decomposition), N not a multiple of
// the row group (a padded, masked last group) and several K: the kernels of
// the table in KernelCases.h, per ISA it derives, compared as each format's
// row says (Tolerance: bit for bit for the int8 family, within a derived
// bound for the float family).
#include "HostIsa.h"
#include "KernelCases.h"
#include "MatmulReference.h"

#include "TestTarget.h"
#include "kf/Codegen/KernelCompiler.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>

namespace kf::codegen {
namespace {

using target::TargetInfo;

INSTANTIATE_TEST_SUITE_P(Isa, MatmulKernelOnIsa,
                         testing::ValuesIn(getKernelIsas(target::Arch::X86_64)),
                         isaParamName);
INSTANTIATE_TEST_SUITE_P(Isa, IntegerKernelOnIsa,
                         testing::ValuesIn(getKernelIsas(target::Arch::X86_64,
                                                         Tolerance::Exact)),
                         isaParamName);
INSTANTIATE_TEST_SUITE_P(Isa, FloatKernelOnIsa,
                         testing::ValuesIn(getKernelIsas(
                             target::Arch::X86_64, Tolerance::FloatBound)),
                         isaParamName);

constexpr int64_t kMaxM = MatmulReference::kMaxM;

// One kernel's check: every m from 1 to kMaxM compared with kf::dot element by
// element.
void checkKernel(const JitKernel &kernel, uint32_t seed) {
  const MatmulKernelSpec &spec = kernel.spec;
  SCOPED_TRACE(spec.describe());
  const int64_t n = spec.n;
  MatmulReference ref;
  buildMatmulReference(spec, seed, ref);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  const std::vector<float> &want = ref.want;
  // Bit for bit where the tolerance is 0, else within it.
  auto agrees = [&](float got, int64_t index) {
    float tol = ref.tolerance[index];
    if (tol == 0)
      return std::bit_cast<uint32_t>(got) ==
             std::bit_cast<uint32_t>(want[index]);
    return std::fabs(got - want[index]) <= tol;
  };

  // y has ldy > N; what lies past N in each column must stay untouched.
  const int64_t ldy = n + 5;
  const float sentinel = -12345.0f;
  for (int64_t m = 1; m <= kMaxM; ++m) {
    std::vector<float> y(m * ldy, sentinel);
    kernel.fn(ref.packedW.data(), ref.kernelX.data(), y.data(), ldy, m, 0, n);
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t r = 0; r < n; ++r)
        ASSERT_TRUE(agrees(y[j * ldy + r], j * n + r))
            << "m = " << m << ", column " << j << ", row " << r << ": "
            << y[j * ldy + r] << " != " << want[j * n + r] << " (tolerance "
            << ref.tolerance[j * n + r] << ")";
      for (int64_t r = n; r < ldy; ++r)
        ASSERT_EQ(y[j * ldy + r], sentinel)
            << "m = " << m << ": written past N at column " << j;
    }
  }

  // A row range, as a thread gets: rows outside it stay untouched.
  if (n > spec.rows) {
    const int64_t m = 5;
    std::vector<float> y(m * ldy, sentinel);
    kernel.fn(ref.packedW.data(), ref.kernelX.data(), y.data(), ldy, m,
              spec.rows, n);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t r = 0; r < ldy; ++r) {
        if (r >= spec.rows && r < n)
          ASSERT_TRUE(agrees(y[j * ldy + r], j * n + r)) << "row " << r;
        else
          ASSERT_EQ(y[j * ldy + r], sentinel) << "row " << r;
      }
  }
}

// The kernels `specs`, compiled together for `target` (one LLVM
// compilation), each checked by checkKernel with its own seed.
void checkKernels(const std::vector<MatmulKernelSpec> &specs,
                  const TargetInfo &target, uint32_t seed) {
  ASSERT_FALSE(specs.empty());
  llvm::Expected<std::vector<JitKernel>> kernels = jitMatmuls(specs, target);
  ASSERT_TRUE(static_cast<bool>(kernels))
      << llvm::toString(kernels.takeError());
  for (const JitKernel &kernel : *kernels)
    checkKernel(kernel, seed += 10);
}

// Each ISA compiled for its test target (isaTestTarget: the portable kernel
// for the x86-64-v2 baseline, SSE only, AVX2 for x86-64-v3 and the float
// kernels on AVX-512 without avx512bf16, BF16 widened by shifts, for
// x86-64-v4, so that no instruction of a wider ISA sneaks in on a wider
// host); the portable kernel with 4 rows per group and with 1.
TEST_P(MatmulKernelOnIsa, EqualsReference) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const TargetInfo target = isaTestTarget(isa);
  if (isa == KernelIsa::Scalar)
    checkKernels(getEqualsReferenceSpecs(isa, {4, 1}, target), target, 1);
  else
    checkKernels(getEqualsReferenceSpecs(isa, {getIsaRows(isa)}, target),
                 target, 1);
}

// Narrower widest tiles exercise the other dispatch tables (the portable
// kernel for x86-64-v2; the AArch64 ISAs' under QEMU).
TEST(MatmulKernel, NarrowColumnTiles) {
  llvm::Expected<std::vector<JitKernel>> kernels = jitMatmuls(
      getNarrowTileSpecs(KernelIsa::Scalar), testTarget("x86-64-v2"));
  ASSERT_TRUE(static_cast<bool>(kernels))
      << llvm::toString(kernels.takeError());
  for (const JitKernel &kernel : *kernels)
    checkKernel(kernel, 99);
}

// Cache blocks (FormatCases::cacheBlocks): the results must stay the same
// bits.
TEST_P(IntegerKernelOnIsa, CacheBlocksKeepTheBits) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  checkKernels(getCacheBlockSpecs(isa, Tolerance::Exact), hostTarget(), 500);
}

// Decoding once (decodeOnce): for m > maxCols each row block's weights are
// decoded once into the kernel's scratch and every column tile reads its
// lanes there; the results must stay the same bits. Every int8 format on
// each ISA, compiled for its own target (the portable kernel for x86-64-v2,
// AVX2 for x86-64-v3), as DecodeOnce says.
TEST_P(IntegerKernelOnIsa, DecodeOnceKeepsTheBits) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  checkKernels(getDecodeOnceSpecs(isa), isaTestTarget(isa), 900);
}

// The float kernels with cache blocks, within the bound, which counts the
// folds of each K block's chains.
TEST_P(FloatKernelOnIsa, CacheBlocksStayWithinTheBound) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  checkKernels(getCacheBlockSpecs(isa, Tolerance::FloatBound), hostTarget(),
               700);
}

} // namespace
} // namespace kf::codegen
