// The compiled kf.argmax against the interpreter's (the first index of the
// largest value; NaN never wins, a row of NaNs gives 0), run as a plan step
// by the runtime's executor on 1 and 2 threads, one or three rows per token,
// per x86 ISA level: row lengths below one vector, of whole vectors and
// with a tail, the tiny model's vocabulary (32256) and the full model's
// (129280). The rows: Gaussian values, ties (the first wins, in one lane,
// across lanes and between the vectors and the tail), -0 before +0 and +0
// before -0 as the largest, NaNs around the largest and rows of NaNs alone,
// rows of -inf alone and of -infs among NaNs, +inf and FLT_MAX, subnormals
// alone, the largest at the first and the last index, a constant row, and
// random bits (NaNs with payloads included).
//
// Tolerance: none. The kernel only compares and selects (ArgmaxEmitter.cpp),
// so every index is compared exactly.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/ArgmaxKernel.h"
#include "kf/Codegen/KernelCompiler.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

KF_STEP_KERNEL_SUITE(ArgmaxKernelOnIsa);

constexpr int64_t kRows = 18;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Row r of v values, of the kind r names (the file's comment).
void fillRow(int64_t r, std::mt19937 &rng, std::span<float> x) {
  const size_t v = x.size();
  std::normal_distribution<float> unit(0.0f, 1.0f);
  for (float &value : x)
    value = unit(rng) - 8.0f; // below every largest value planted
  // Positions spread over the row: in the first vector, in a later lane,
  // in the tail.
  const size_t early = 3 % v, late = (v * 2) / 3, last = v - 1;
  switch (r) {
  case 0: // Gaussian
    break;
  case 1: // a tie: the first of three
    x[late] = x[early] = x[last] = 5.0f;
    break;
  case 2: // a tie within one lane (16 apart) and across lanes
    x[early] = 5.0f;
    x[(early + 16) % v] = 5.0f;
    x[(early + 1) % v] = 5.0f;
    break;
  case 3: // -0 before +0, every other value negative
    x[early] = -0.0f;
    x[late] = 0.0f;
    break;
  case 4: // +0 before -0
    x[early] = 0.0f;
    x[late] = -0.0f;
    break;
  case 5: // NaNs before and after the largest
    for (size_t i = 0; i < v; i += 2)
      x[i] = kNaN;
    x[(late | 1) % v] = 1.0f;
    break;
  case 6: // NaNs alone: 0
    for (float &value : x)
      value = kNaN;
    break;
  case 7: // -infs alone: 0
    for (float &value : x)
      value = -kInf;
    break;
  case 8: // NaNs, then -infs: the first -inf
    for (float &value : x)
      value = kNaN;
    x[late] = -kInf;
    x[last] = -kInf;
    break;
  case 9: // +inf (twice) above FLT_MAX
    x[early] = std::numeric_limits<float>::max();
    x[late] = kInf;
    x[last] = kInf;
    break;
  case 10: // subnormals alone, the largest in the tail
    for (float &value : x)
      value = std::bit_cast<float>(static_cast<uint32_t>(rng() & 0x807fffffu));
    x[last] = std::bit_cast<float>(0x007fffffu);
    break;
  case 11: // the largest at index 0
    x[0] = 1.0f;
    break;
  case 12: // the largest at the last index
    x[last] = 1.0f;
    break;
  case 13: // a constant row: 0
    for (float &value : x)
      value = 2.5f;
    break;
  case 14: // -FLT_MAX among -infs and NaNs
    for (size_t i = 0; i < v; ++i)
      x[i] = i % 3 ? -kInf : kNaN;
    x[late] = -std::numeric_limits<float>::max();
    break;
  case 15: // a tie between a vector's lane and the tail: the lane
    x[v > 16 ? v / 16 * 16 - 1 : 0] = 7.0f;
    x[last] = 7.0f;
    break;
  default: // random bits
    for (float &value : x)
      value = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    break;
  }
}

// The interpreter's execute(ArgmaxOp) on one row.
int32_t expectedIndex(std::span<const float> x) {
  size_t best = 0;
  bool found = false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isnan(x[i]) && (!found || x[i] > x[best])) {
      best = i;
      found = true;
    }
  return static_cast<int32_t>(best);
}

void checkKernel(const ArgmaxKernelSpec &spec, kf_step_fn kernel) {
  std::mt19937 rng(static_cast<unsigned>(spec.v));
  std::vector<float> x(kRows * spec.v);
  std::vector<int32_t> want(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    std::span<float> row(x.data() + r * spec.v, spec.v);
    fillRow(r, rng, row);
    want[r] = expectedIndex(row);
  }
  // The rows as 18 tokens of one row and as 6 tokens of three.
  for (int64_t rowsPerToken : {1, 3})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << threads << " threads, " << rowsPerToken
                                      << " rows per token");
      std::vector<int32_t> got(kRows, -1);
      ASSERT_EQ(
          runRowStep(
              kernel, kRows / rowsPerToken, rowsPerToken,
              {rowOperand(x, rowsPerToken * spec.v),
               StepOperand{std::span(reinterpret_cast<uint8_t *>(got.data()),
                                     4 * got.size()),
                           4 * rowsPerToken}},
              threads),
          absl::OkStatus());
      for (int64_t r = 0; r < kRows; ++r)
        EXPECT_EQ(got[r], want[r]) << "row " << r;
    }
}

TEST_P(ArgmaxKernelOnIsa, EqualsInterpreter) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<ArgmaxKernelSpec> specs = {{1},   {5},   {16},    {17},
                                               {100}, {256}, {32256}, {129280}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildArgmaxKernel,
                    checkKernel);
}

TEST(ArgmaxKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyArgmaxKernel({0})),
            "argmax kernel [V = 0]: expected V in [1, 2147483647] (an index "
            "is an i32)");
  EXPECT_EQ(llvm::toString(verifyArgmaxKernel({int64_t{1} << 31})),
            "argmax kernel [V = 2147483648]: expected V in [1, 2147483647] "
            "(an index is an i32)");
  EXPECT_FALSE(static_cast<bool>(verifyArgmaxKernel({1})));
  EXPECT_FALSE(static_cast<bool>(verifyArgmaxKernel({129280})));
}

TEST(ArgmaxKernel, NamesEachVariantApart) {
  EXPECT_EQ(ArgmaxKernelSpec{129280}.getSymbolName(), "kf_argmax_v129280");
  EXPECT_EQ(ArgmaxKernelSpec{129280}.describe(), "argmax kernel [V = 129280]");
  EXPECT_NE(ArgmaxKernelSpec{32256}.getSymbolName(),
            ArgmaxKernelSpec{129280}.getSymbolName());
}

// A kernel calls nothing: the lanes' maxnum reduction is no libm fmaxf, for
// the portable level and AVX-512's.
TEST(ArgmaxKernel, CallsNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"}, {"kf_argmax_v129280"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(
            static_cast<bool>(buildArgmaxKernel(module, {129280}, target)));
        ASSERT_TRUE(static_cast<bool>(buildArgmaxKernel(module, {5}, target)));
      });
}

} // namespace
} // namespace kf::codegen
