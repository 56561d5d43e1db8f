// The compiled kf.swiglu against the DeepSeek-V4 golden's swiglu, run as a
// plan step by the runtime's executor on 1 and 2 threads, weighted (the
// routed experts' rows, a routing weight each) and not (the shared expert),
// writing a row of its own or over the gate or the up, per x86 ISA level.
// The rows: Gaussian gates and ups at scales below and beyond the clamp,
// signed zeros, subnormal gates, gates so negative that e^-g overflows
// (-FLT_MAX included), a sweep of gates over [-120, 12], and products that
// lie exactly on a bf16 rounding tie.
//
// Tolerance (docs/engine.md, "Op kernels"): the kernel's e^-g is fdlibm's
// algorithm, below one fp64 ulp, where the reference calls glibc's exp (below
// 0.52 ulp): they differ by at most ~1.5 fp64 ulps, so silu = fp32(g / (1 +
// e^-g)) can differ only where that quotient lies within a few fp64 ulps of
// an fp32 rounding boundary, about 2^-27 of all gates (none of the floats in
// [-120, 12] in an offline check), and then by one fp32 ulp, which moves h =
// bf16(silu · u · w) by at most one bf16 ulp. Every other operation is the
// reference's. So: every element within one bf16 ulp, and at most one of the
// test's ~18 000 values not bit for bit (on the glibc here, none is).
#include "StepKernelTestUtil.h"

#include "kf/Codegen/SwigluKernel.h"
#include "kf/deepseek_v4/reference/routing.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(SwigluKernelOnIsa);

constexpr int64_t kRows = 14;

// The reference's silu, the fp32 it rounds to.
float silu(float g) {
  return static_cast<float>(g / (1.0 + std::exp(-static_cast<double>(g))));
}

// Gates in (-2, 2) whose silu has its low 16 bits 0x8000: times a power of
// two, exactly halfway between two bf16 values (ties to even decides). One
// gate in 2^16 qualifies; found once.
const std::vector<float> &tieGates() {
  static const std::vector<float> gates = [] {
    std::vector<float> found;
    for (int i = 1; found.size() < 16; ++i) {
      float g = static_cast<float>(i % 2 ? i : -i) * 0x1p-20f;
      if ((std::bit_cast<uint32_t>(silu(g)) & 0xffff) == 0x8000)
        found.push_back(g);
    }
    return found;
  }();
  return gates;
}

struct Rows {
  std::vector<float> gate, up, weights;
};

Rows rowsOf(const SwigluKernelSpec &spec) {
  const int64_t f = spec.f;
  std::mt19937 rng(static_cast<unsigned>(f));
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::uniform_real_distribution<float> share(0.01f, 1.0f);
  const std::vector<float> &ties = tieGates();
  Rows rows{std::vector<float>(kRows * f), std::vector<float>(kRows * f),
            std::vector<float>(kRows)};
  for (int64_t r = 0; r < kRows; ++r) {
    rows.weights[r] = share(rng);
    for (int64_t i = 0; i < f; ++i) {
      float &g = rows.gate[r * f + i], &u = rows.up[r * f + i];
      g = unit(rng);
      u = unit(rng);
      switch (r) {
      case 1:
        g *= 4.0f;
        u *= 4.0f;
        break;
      case 2:
        // Beyond the clamp, both ways.
        g *= 30.0f;
        u *= 30.0f;
        break;
      case 3:
        g = i % 2 ? 0.0f : -0.0f;
        break;
      case 4:
        g *= 1e-40f;
        u *= 1e-3f;
        break;
      case 5: {
        // e^-g beyond fp64's range, near it and far; -FLT_MAX.
        const float negative[] = {-100.0f, -110.0f, -745.0f, -1e4f,
                                  -std::numeric_limits<float>::max()};
        g = negative[i % 5] * (1.0f + 0.01f * std::fabs(unit(rng)));
        if (i % 5 == 4)
          g = negative[4];
        break;
      }
      case 6:
      case 7:
      case 8:
      case 9: {
        // A sweep over [-120, 12], up 1 and weight 1: h = bf16(silu(g)).
        int64_t k = (r - 6) * f + i;
        g = -120.0f + 132.0f * static_cast<float>(k) / (4.0f * f);
        u = 1.0f;
        rows.weights[r] = 1.0f;
        break;
      }
      case 10:
        // Ties: silu(g) · ±2^j · 2^-1.
        g = ties[i % ties.size()];
        u = std::ldexp(i % 2 ? -1.0f : 1.0f, static_cast<int>(i % 3) - 1);
        rows.weights[r] = 0.5f;
        break;
      default:
        break;
      }
    }
  }
  return rows;
}

std::vector<float> expected(const SwigluKernelSpec &spec, const Rows &rows) {
  std::vector<float> h(rows.gate.size());
  for (int64_t r = 0; r < kRows; ++r) {
    auto row = [&](const std::vector<float> &v) {
      return std::span<const float>(v.data() + r * spec.f, spec.f);
    };
    reference::swiglu(row(rows.gate), row(rows.up), spec.limit,
                      spec.weighted ? rows.weights[r] : 1.0f,
                      std::span<float>(h.data() + r * spec.f, spec.f));
  }
  return h;
}

// Runs the kernel of `spec` on the test rows, 1 and 2 threads, into its own
// rows and over the gate's or the up's, against the reference; counts the
// values not bit for bit in `differ`.
void checkKernel(const SwigluKernelSpec &spec, kf_step_fn kernel,
                 int64_t &differ) {
  const Rows rows = rowsOf(spec);
  const std::vector<float> want = expected(spec, rows);
  // Into h, over the gate, over the up.
  for (int output : {3, 0, 1})
    for (int threads : {1, 2}) {
      Rows in = rows;
      std::vector<float> h(want.size(), -1.0f);
      std::vector<float> &got =
          output == 3 ? h : (output == 0 ? in.gate : in.up);
      std::vector<StepOperand> operands = {rowOperand(in.gate, spec.f),
                                           rowOperand(in.up, spec.f)};
      if (spec.weighted)
        operands.push_back(rowOperand(in.weights, 1));
      operands.push_back(rowOperand(got, spec.f));
      ASSERT_EQ(runRowStep(kernel, kRows, 1, operands, threads),
                absl::OkStatus());
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i]))
          continue;
        ++differ;
        ASSERT_TRUE(withinOneBf16Ulp(got[i], want[i]))
            << "row " << i / spec.f << ", element " << i % spec.f << " (gate "
            << rows.gate[i] << ", up " << rows.up[i] << "): " << got[i]
            << " vs " << want[i];
      }
    }
}

TEST_P(SwigluKernelOnIsa, EqualsReference) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<SwigluKernelSpec> specs = {
      {512, 10.0f, true},
      {512, 10.0f, false},
      {16, 7.0f, true},
      {256, 1e30f, false}, // no clamp reached: every gate's silu
  };
  int64_t differ = 0;
  forEachStepKernel(target, specs, buildSwigluKernel,
                    [&](const SwigluKernelSpec &spec, kf_step_fn kernel) {
                      checkKernel(spec, kernel, differ);
                    });
  // Counted over all runs: one value near a boundary shows in each of the
  // 6 runs of its spec.
  EXPECT_LE(differ, 6);
}

TEST(SwigluKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifySwigluKernel({100, 10.0f, true})),
            "swiglu kernel [F = 100, weighted, limit = 10]: expected F a "
            "positive multiple of 16");
  EXPECT_EQ(llvm::toString(verifySwigluKernel({64, 0.0f, false})),
            "swiglu kernel [F = 64, unweighted, limit = 0]: expected a finite "
            "limit > 0");
  EXPECT_EQ(llvm::toString(verifySwigluKernel({64, INFINITY, true})),
            "swiglu kernel [F = 64, weighted, limit = inf]: expected a finite "
            "limit > 0");
  EXPECT_EQ(llvm::toString(verifySwigluKernel({64, -1.0f, true})),
            "swiglu kernel [F = 64, weighted, limit = -1]: expected a finite "
            "limit > 0");
  EXPECT_FALSE(static_cast<bool>(verifySwigluKernel({2048, 10.0f, true})));
}

TEST(SwigluKernel, NamesEachVariantApart) {
  SwigluKernelSpec a{2048, 10.0f, true};
  EXPECT_EQ(a.getSymbolName(), "kf_swiglu_f2048_w_l41200000");
  SwigluKernelSpec b{2048, 10.0f, false};
  EXPECT_EQ(b.getSymbolName(), "kf_swiglu_f2048_nw_l41200000");
  SwigluKernelSpec c{2048, 7.0f, true};
  EXPECT_NE(a.getSymbolName(), c.getSymbolName());
  EXPECT_EQ(a.describe(), "swiglu kernel [F = 2048, weighted, limit = 10]");
}

} // namespace
} // namespace kf::codegen
