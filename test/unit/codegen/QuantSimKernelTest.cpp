// The compiled kf.fp8_sim and kf.fp4_sim against the DeepSeek-V4 golden's
// fp8Sim and fp4Sim, run as a plan step by the runtime's executor on 1 and 2
// threads, in place and not, per x86 ISA level: whole rows and rows with a
// leading span (the KV latent's 448 of 512), on Gaussian rows at several
// scales, all-zero rows, rows below the scale floors (subnormals included),
// rows near the largest float (whose product with the scale overflows), and
// rows of values exactly on the grids' rounding ties.
//
// Tolerance: none. Every float operation of the kernel is one of the
// reference's or exact (docs/engine.md, "Op kernels"; the derivation heads
// QuantSimEmitter.cpp), so the results are compared bit for bit, the sign of
// zero included.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/QuantSimKernel.h"
#include "kf/deepseek_v4/reference/quant_sim.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(QuantSimKernelOnIsa);

constexpr int64_t kRows = 9;

// The grid's rounding ties, as codes: e4m3's halfway points between
// neighbouring codes in every binade and among the subnormals (steps of
// 2^-9), e2m1's listed in quant_sim.h.
std::vector<float> tiesOf(QuantSimFormat format) {
  std::vector<float> ties;
  if (format == QuantSimFormat::E2m1)
    return {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  for (int i = 0; i < 8; ++i)
    ties.push_back(std::ldexp(2.0f * i + 1, -10));
  for (int e = -6; e <= 7; ++e)
    for (int i = 0; i < 8; ++i)
      ties.push_back(std::ldexp(1.0f + (2.0f * i + 1) / 16, e));
  return ties;
}

// Row r of kRows: Gaussian at three scales, zeros, values below the scale
// floor, values near the largest float, and ties: a block whose amax sets
// the scale 2^j, then ± tie · 2^j.
std::vector<float> rowsOf(const QuantSimKernelSpec &spec) {
  const int64_t n = spec.rowLength;
  std::mt19937 rng(static_cast<unsigned>(n + spec.block));
  std::vector<float> x(kRows * n);
  const std::vector<float> ties = tiesOf(spec.format);
  const bool fp4 = spec.format == QuantSimFormat::E2m1;
  for (int64_t r = 0; r < kRows; ++r) {
    float *row = x.data() + r * n;
    std::normal_distribution<float> unit(0.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i) {
      float g = unit(rng);
      switch (r) {
      case 0:
        row[i] = g;
        break;
      case 1:
        row[i] = g * 1e-3f;
        break;
      case 2:
        row[i] = g * 300.0f;
        break;
      case 3:
        row[i] = 0.0f;
        break;
      case 4:
        // Below fp8's floor (1e-4) and fp4's (6 · 2^-126), subnormals and
        // signed zeros included.
        row[i] = fp4 ? g * 1e-38f : g * 1e-6f;
        if (i % 7 == 3)
          row[i] = g * 1e-42f;
        if (i % 11 == 5)
          row[i] = -0.0f;
        break;
      case 5:
        row[i] = g * 1e38f;
        if (i % 16 == 1)
          row[i] = std::numeric_limits<float>::max();
        if (i % 16 == 2)
          row[i] = -std::numeric_limits<float>::max();
        break;
      case 6:
        // Magnitudes that put max(amax) · fl32(1/maxCode) on both sides of
        // a power of two: the scale's ceil_log2 and the clamp at ±maxCode.
        row[i] = fp4 ? 6.0f : 448.0f;
        if (i % 3 != 2)
          row[i] = std::nextafter(row[i], i % 3 ? 0.0f : 1000.0f);
        row[i] *= (i % 2 ? -1.0f : 1.0f) *
                  std::ldexp(1.0f, static_cast<int>(i % 5) - 2);
        break;
      default: {
        // Ties, scaled by 2^j where block b's amax 0.9 · maxCode · 2^j
        // makes s = 2^j.
        int j = static_cast<int>(((r - 7) * 5 + i / spec.block) % 9) - 4;
        float scale = std::ldexp(1.0f, j);
        if (i % spec.block == 0)
          row[i] = (fp4 ? 5.5f : 400.0f) * scale;
        else
          row[i] = (i % 2 ? -1.0f : 1.0f) * ties[i % ties.size()] * scale;
        break;
      }
      }
    }
  }
  return x;
}

std::vector<float> expected(const QuantSimKernelSpec &spec,
                            std::span<const float> x) {
  std::vector<float> y(x.begin(), x.end());
  for (int64_t r = 0; r < kRows; ++r) {
    std::span<float> part(y.data() + r * spec.rowLength, spec.getSpan());
    if (spec.format == QuantSimFormat::E4m3)
      reference::fp8Sim(part, static_cast<size_t>(spec.block));
    else
      reference::fp4Sim(part, static_cast<size_t>(spec.block));
  }
  return y;
}

// Runs the kernel of `spec` on the test rows, 1 and 2 threads, in place and
// not, against the reference bit for bit.
void checkKernel(const QuantSimKernelSpec &spec, kf_step_fn kernel) {
  const std::vector<float> x = rowsOf(spec);
  const std::vector<float> want = expected(spec, x);
  for (bool inPlace : {false, true})
    for (int threads : {1, 2}) {
      const std::vector<float> got =
          runRowToRowStep(kernel, x, spec.rowLength, {}, inPlace, threads);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                  std::bit_cast<uint32_t>(want[i]))
            << "row " << i / spec.rowLength << ", element "
            << i % spec.rowLength << " (x = " << x[i] << "): " << got[i]
            << " != " << want[i] << ", " << threads << " threads"
            << (inPlace ? ", in place" : "");
      }
    }
}

TEST_P(QuantSimKernelOnIsa, EqualsReferenceBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<QuantSimKernelSpec> specs = {
      {QuantSimFormat::E4m3, 1024, 128, 0},
      {QuantSimFormat::E4m3, 512, 64, 448},
      {QuantSimFormat::E4m3, 64, 16, 0},
      {QuantSimFormat::E2m1, 128, 32, 0},
      {QuantSimFormat::E2m1, 512, 32, 448},
  };
  forEachStepKernel(target, specs, buildQuantSimKernel, checkKernel);
}

TEST(QuantSimKernel, RefusesBadSpecs) {
  EXPECT_EQ(
      llvm::toString(verifyQuantSimKernel({QuantSimFormat::E4m3, 100, 16, 0})),
      "fp8_sim kernel [row = 100, block = 16]: expected a row length that is "
      "a positive multiple of 16");
  EXPECT_EQ(
      llvm::toString(verifyQuantSimKernel({QuantSimFormat::E2m1, 128, 8, 0})),
      "fp4_sim kernel [row = 128, block = 8]: expected a block that is a "
      "positive multiple of 16");
  EXPECT_EQ(llvm::toString(
                verifyQuantSimKernel({QuantSimFormat::E4m3, 512, 64, 576})),
            "fp8_sim kernel [row = 512, block = 64, leading = 576]: expected "
            "leading within the row (0: none)");
  EXPECT_EQ(llvm::toString(
                verifyQuantSimKernel({QuantSimFormat::E4m3, 512, 64, 480})),
            "fp8_sim kernel [row = 512, block = 64, leading = 480]: expected "
            "the simulated span (leading, or the row) to be a multiple of "
            "the block");
  EXPECT_EQ(
      llvm::toString(verifyQuantSimKernel({QuantSimFormat::E2m1, 96, 64, 0})),
      "fp4_sim kernel [row = 96, block = 64]: expected the simulated span "
      "(leading, or the row) to be a multiple of the block");
  EXPECT_FALSE(static_cast<bool>(
      verifyQuantSimKernel({QuantSimFormat::E4m3, 512, 64, 448})));
  EXPECT_FALSE(static_cast<bool>(
      verifyQuantSimKernel({QuantSimFormat::E2m1, 128, 32, 0})));
}

TEST(QuantSimKernel, NamesEachVariantApart) {
  QuantSimKernelSpec a{QuantSimFormat::E4m3, 4096, 128, 0};
  QuantSimKernelSpec b{QuantSimFormat::E4m3, 512, 64, 448};
  QuantSimKernelSpec c{QuantSimFormat::E2m1, 4096, 128, 0};
  EXPECT_EQ(a.getSymbolName(), "kf_fp8_sim_n4096_b128");
  EXPECT_EQ(b.getSymbolName(), "kf_fp8_sim_n512_b64_l448");
  EXPECT_EQ(c.getSymbolName(), "kf_fp4_sim_n4096_b128");
  EXPECT_EQ(b.describe(),
            "fp8_sim kernel [row = 512, block = 64, leading = 448]");
  // A leading span of the whole row is the whole row: one function.
  QuantSimKernelSpec d{QuantSimFormat::E4m3, 4096, 128, 4096};
  EXPECT_EQ(d.getSymbolName(), a.getSymbolName());
}

} // namespace
} // namespace kf::codegen
