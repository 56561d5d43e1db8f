// The compiled kf.rms_norm against the DeepSeek-V4 golden's rmsNorm and
// rmsScale, run as a plan step by the runtime's executor on 1 and 2 threads,
// for weighted and weightless rows of several lengths and scales (an
// all-zero row and rows where eps dominates included), in place and not,
// per x86 ISA level.
//
// Tolerance (docs/engine.md, "Op kernels"): the bf16 compute is bit for bit
// (its squares' fp64 sum is exact in any order for these rows). The f32
// compute's fp64 sum of squares is reduced in another order than the
// reference's row order, so mean may differ by one fp32 ulp, r then by about
// one more, and the product w · (x · r) by a few fp32 ulps: its bf16
// rounding then differs by at most one bf16 ulp, and only where the product
// lies within those few ulps of a bf16 rounding boundary.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/RmsNormKernel.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(RmsNormKernelOnIsa);

constexpr int64_t kRows = 17;

// kRows rows of d floats: Gaussian rows at several scales, one all zero and
// one so small that eps dominates its mean square.
std::vector<float> rowsOf(int64_t d) {
  std::mt19937 rng(static_cast<unsigned>(d));
  const float scales[] = {1.0f, 1e-3f, 30.0f, 0.0f, 1e-5f, 0.25f};
  std::vector<float> x(kRows * d);
  for (int64_t r = 0; r < kRows; ++r) {
    std::normal_distribution<float> dist(0.0f, scales[r % 6]);
    for (int64_t i = 0; i < d; ++i)
      x[r * d + i] = scales[r % 6] == 0.0f ? 0.0f : dist(rng);
  }
  return x;
}

std::vector<float> weightOf(int64_t d) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> w(d);
  for (float &v : w)
    v = dist(rng);
  return w;
}

std::vector<float> expected(const RmsNormKernelSpec &spec,
                            std::span<const float> x,
                            std::span<const float> w) {
  std::vector<float> y(x.begin(), x.end());
  // The weightless norm is the weighted one with a weight of ones.
  std::vector<float> ones(spec.d, 1.0f);
  if (!spec.weighted)
    w = ones;
  for (int64_t r = 0; r < kRows; ++r) {
    std::span<float> row(y.data() + r * spec.d, spec.d);
    if (spec.bf16Compute)
      reference::rmsScale(row, spec.eps);
    else
      reference::rmsNorm(x.subspan(r * spec.d, spec.d), w, spec.eps, row);
  }
  return y;
}

// Runs the kernel of `spec` on the test rows, 1 and 2 threads, in place and
// not, against the reference.
void checkKernel(const RmsNormKernelSpec &spec, kf_step_fn kernel) {
  const std::vector<float> x = rowsOf(spec.d), w = weightOf(spec.d);
  const std::vector<float> want = expected(spec, x, w);
  for (bool inPlace : {false, true})
    for (int threads : {1, 2}) {
      const std::vector<float> got = runRowToRowStep(
          kernel, x, spec.d,
          spec.weighted ? std::span<const float>(w) : std::span<const float>(),
          inPlace, threads);
      int64_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i]))
          continue;
        ++differ;
        ASSERT_FALSE(spec.bf16Compute)
            << "row " << i / spec.d << ", element " << i % spec.d << ": "
            << got[i] << " != " << want[i];
        ASSERT_TRUE(withinOneBf16Ulp(got[i], want[i]))
            << "row " << i / spec.d << ", element " << i % spec.d << ": "
            << got[i] << " vs " << want[i];
      }
      // A boundary within a few fp32 ulps is rare: a handful of elements
      // at most, not a systematic difference.
      EXPECT_LE(differ, 4) << threads << " threads";
    }
}

TEST_P(RmsNormKernelOnIsa, EqualsReference) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<RmsNormKernelSpec> specs = {
      {16, 1e-6f, true, false},   {192, 1e-6f, true, false},
      {256, 1e-6f, false, false}, {4096, 1e-6f, true, false},
      {192, 1e-6f, false, true},  {512, 1e-6f, false, true},
  };
  forEachStepKernel(target, specs, buildRmsNormKernel, checkKernel);
}

TEST(RmsNormKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyRmsNormKernel({100, 1e-6f, true, false})),
            "rms_norm kernel [D = 100, weighted, eps = 1e-06]: expected D a "
            "positive multiple of 16");
  EXPECT_EQ(
      llvm::toString(verifyRmsNormKernel({64, 1e-6f, true, true})),
      "rms_norm kernel [D = 64, weighted, eps = 1e-06, bf16 compute]: a bf16 "
      "compute is the weightless per-head scaling");
  EXPECT_EQ(llvm::toString(verifyRmsNormKernel({64, NAN, false, false})),
            "rms_norm kernel [D = 64, weightless, eps = nan]: expected a "
            "finite eps >= 0");
  EXPECT_FALSE(
      static_cast<bool>(verifyRmsNormKernel({64, 1e-6f, false, false})));
}

TEST(RmsNormKernel, NamesEachVariantApart) {
  RmsNormKernelSpec a{4096, 1e-6f, true, false};
  EXPECT_EQ(a.getSymbolName(), "kf_rms_norm_d4096_w_e358637bd");
  RmsNormKernelSpec b{4096, 1e-5f, true, false};
  RmsNormKernelSpec c{4096, 1e-6f, false, true};
  EXPECT_NE(a.getSymbolName(), b.getSymbolName());
  EXPECT_EQ(c.getSymbolName(), "kf_rms_norm_d4096_nw_e358637bd_bf16");
}

} // namespace
} // namespace kf::codegen
