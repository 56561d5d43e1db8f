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
#include "HostIsa.h"

#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/RmsNormKernel.h"
#include "kf/Codegen/StepKernel.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/runtime/executor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

class RmsNormKernelOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(Isa, RmsNormKernelOnIsa,
                         testing::Values(KernelIsa::Scalar, KernelIsa::Avx2,
                                         KernelIsa::Avx512),
                         isaParamName);

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

// A plan of one step: rows of x (run buffer 0), the weight, rows of y (run
// buffer 1, or 0 in place).
Plan planFor(const RmsNormKernelSpec &spec, bool inPlace) {
  const int64_t rowBytes = 4 * spec.d;
  Plan plan;
  plan.maxRows = kRows;
  plan.kernels = {spec.getSymbolName()};
  plan.weights = {{"w", Format::F32, {spec.d}, std::nullopt}};
  plan.inputs = {{"x", {0, rowBytes}}, {"y", {0, rowBytes}}};
  PlanStep step{"rms_norm", 0, {}, {0, 1}, WorkSplit::Blocks, 1, false};
  step.operands.push_back({OperandKind::Input, 0, 0, {0, rowBytes}});
  if (spec.weighted)
    step.operands.push_back({OperandKind::Weight, 0, 0, {rowBytes, 0}});
  step.operands.push_back(
      {OperandKind::Input, inPlace ? 0u : 1u, 0, {0, rowBytes}});
  plan.steps.push_back(step);
  return plan;
}

// Whether a and b (bf16 values held as floats) are at most one bf16 ulp
// apart: their bit patterns, of one sign, differ by at most 1 << 16.
bool withinOneBf16Ulp(float a, float b) {
  uint32_t x = std::bit_cast<uint32_t>(a), y = std::bit_cast<uint32_t>(b);
  if ((x ^ y) >> 31)
    return a == b; // +0 and -0
  return (x > y ? x - y : y - x) <= (1u << 16);
}

TEST_P(RmsNormKernelOnIsa, EqualsReference) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<RmsNormKernelSpec> specs = {
      {16, 1e-6f, true, false},   {192, 1e-6f, true, false},
      {256, 1e-6f, false, false}, {4096, 1e-6f, true, false},
      {192, 1e-6f, false, true},  {512, 1e-6f, false, true},
  };
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (const RmsNormKernelSpec &spec : specs) {
    llvm::Expected<mlir::func::FuncOp> fn =
        buildRmsNormKernel(*module, spec, target);
    ASSERT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
  }
  llvm::Expected<JitKernelModule> jit = jitKernelModule(*module, target);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());

  for (const RmsNormKernelSpec &spec : specs) {
    SCOPED_TRACE(spec.describe());
    llvm::Expected<void *> fn = jit->lookup(spec.getSymbolName());
    ASSERT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
    const std::vector<float> x = rowsOf(spec.d), w = weightOf(spec.d);
    const std::vector<float> want = expected(spec, x, w);
    for (bool inPlace : {false, true})
      for (int threads : {1, 2}) {
        absl::StatusOr<Executor> executor = Executor::create(
            planFor(spec, inPlace), {reinterpret_cast<StepKernelFn>(*fn)},
            {std::span(reinterpret_cast<const uint8_t *>(w.data()),
                       w.size() * 4)});
        ASSERT_TRUE(executor.ok()) << executor.status();
        std::vector<float> in = x, out(x.size(), -1.0f);
        std::vector<std::span<uint8_t>> buffers = {
            {reinterpret_cast<uint8_t *>(in.data()), in.size() * 4},
            {reinterpret_cast<uint8_t *>(out.data()), out.size() * 4}};
        ThreadPool pool(threads);
        ASSERT_TRUE(executor->run(pool, kRows, buffers).ok());
        const std::vector<float> &got = inPlace ? in : out;
        int64_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::bit_cast<uint32_t>(got[i]) ==
              std::bit_cast<uint32_t>(want[i]))
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
