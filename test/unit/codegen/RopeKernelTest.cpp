// The compiled kf.rope against the DeepSeek-V4 golden's rope and inverseRope
// (Model precision), run as a plan step by the runtime's executor on 1 and 2
// threads and called directly on item ranges that split tokens anywhere, per
// x86 ISA level: rows of D = 192 with dim 64 (the tiny model's heads) and of
// D = 512 and 128, one row per token and H = 3 and 8, in place and not, the
// sliding-window layers' frequencies and the compressed layers' YaRN ones,
// positions 0..300 and large ones up to 1,000,000. The values before the
// rope part are copied. A second test compares the kernel's sin and cos
// (emitSinCos) with the C library's on ~7 million fp32 angles.
//
// Tolerance (docs/engine.md, "Op kernels"): the angle fl32(fl32(p) · f_i)
// and every fp32 operation after c and s are the golden's, in its order. c
// and s are fp32(cos) and fp32(sin) of the fp64 angle: the kernel's by
// fdlibm's algorithm (below one fp64 ulp), the golden's by glibc's (below
// ~0.5 ulp), so they differ only where the fp64 value lies within ~1.5 fp64
// ulps of an fp32 rounding boundary — about 2^-28 of all values; no angle of
// the dense check here (glibc 2.36) — and then by one fp32 ulp, at most 2^-24
// as |c|, |s| <= 1. Then each of the products a·c, b·s (or a·s, b·c) moves by
// at most 2^-24·|a| plus the two roundings of 2^-24 of the product each, so
// the exact difference of the rounded products (p - q, p' - q') by at most E
// = 3·2^-24·(|a| + |b|). The output bf16(fp32(p - q)) rounds monotonically
// to the bf16 grid (onto one of the two bf16 neighbours of p - q), so two
// outputs whose arguments lie less than one bf16 spacing apart are at most
// one bf16 ulp apart: every output within one bf16 ulp wherever |a·c - b·s|
// is above ~3·2^-16·(|a| + |b|) (a spacing is at least 2^-8 of the value),
// and within E plus one bf16 ulp where the two products cancel below that.
// So: each value within that bound, and the values of at most one angle per
// spec not bit for bit (in every run of it; on the glibc here, none).
#include "StepKernelTestUtil.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/RopeKernel.h"
#include "kf/Codegen/StepKernel.h"
#include "kf/deepseek_v4/reference/rope.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <random>
#include <set>
#include <utility>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(RopeKernelOnIsa);

std::vector<float> frequenciesOf(const reference::RopeConfig &config) {
  std::vector<float> freqs(static_cast<size_t>(config.ropeDim / 2));
  reference::ropeFrequencies(config, freqs);
  return freqs;
}

// The tokens' positions: 0..300, then large ones up to 1,000,000 (powers of
// two and their neighbours, the model's context) and random ones below it.
std::vector<int64_t> positionsOf() {
  std::vector<int64_t> positions;
  for (int64_t p = 0; p <= 300; ++p)
    positions.push_back(p);
  for (int64_t p : {511, 4095, 65535, 65536, 131071, 262144, 500000, 524287,
                    777777, 999999, 1000000})
    positions.push_back(p);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> dist(0, 1000000);
  // 325 tokens: two threads split an item range of H > 1 inside a token.
  for (int i = 0; i < 13; ++i)
    positions.push_back(dist(rng));
  return positions;
}

// One row per (token, head): Gaussian values at a scale that varies by row.
std::vector<float> rowsOf(const RopeKernelSpec &spec, int64_t tokens) {
  std::mt19937 rng(static_cast<unsigned>(spec.d * 31 + spec.rowsPerToken));
  const float scales[] = {1.0f, 1e-3f, 30.0f, 0.25f};
  const int64_t rows = tokens * spec.rowsPerToken;
  std::vector<float> x(rows * spec.d);
  for (int64_t r = 0; r < rows; ++r) {
    std::normal_distribution<float> dist(0.0f, scales[r % 4]);
    for (int64_t i = 0; i < spec.d; ++i)
      x[r * spec.d + i] = dist(rng);
  }
  return x;
}

std::vector<float> expected(const RopeKernelSpec &spec,
                            std::span<const float> x,
                            std::span<const int64_t> positions) {
  std::vector<float> y(x.begin(), x.end());
  const int64_t rows = static_cast<int64_t>(x.size()) / spec.d;
  for (int64_t r = 0; r < rows; ++r) {
    std::span<float> part = std::span<float>(y.data() + r * spec.d, spec.d)
                                .last(static_cast<size_t>(spec.ropeDim));
    int64_t position = positions[r / spec.rowsPerToken];
    if (spec.inverse)
      reference::inverseRope(part, position, spec.frequencies);
    else
      reference::rope(part, position, spec.frequencies);
  }
  return y;
}

// The header's bound for an output whose pair is (a, b).
bool withinBound(float got, float want, float a, float b) {
  if (withinOneBf16Ulp(got, want))
    return true;
  float larger = std::max(std::fabs(got), std::fabs(want));
  double bf16Ulp = std::ldexp(1.0, std::ilogb(larger) - 7);
  double cancelled =
      3 * 0x1p-24 * (std::fabs(static_cast<double>(a)) + std::fabs(b));
  return std::fabs(static_cast<double>(got) - want) <= cancelled + bf16Ulp;
}

// Runs the kernel of `spec` on the test rows, in place and not, on 1 and 2
// threads and called directly on ranges of 5 items (which start and end at
// every row of a token), against the reference; counts the angles (token,
// pair) whose outputs are not bit for bit.
void checkKernel(const RopeKernelSpec &spec, kf_step_fn kernel) {
  std::vector<int64_t> positions = positionsOf();
  const int64_t tokens = static_cast<int64_t>(positions.size());
  const std::vector<float> x = rowsOf(spec, tokens);
  const std::vector<float> want = expected(spec, x, positions);
  const int64_t kept = spec.d - spec.ropeDim;
  std::set<std::pair<int64_t, int64_t>> differ;
  for (bool inPlace : {false, true})
    for (int threads : {0, 1, 2}) {
      std::vector<float> in = x;
      std::vector<float> out(x.size(), -1.0f);
      std::vector<float> &got = inPlace ? in : out;
      std::vector<StepOperand> operands = {
          rowOperand(in, spec.rowsPerToken * spec.d),
          {std::span(reinterpret_cast<uint8_t *>(positions.data()),
                     positions.size() * sizeof(int64_t)),
           sizeof(int64_t)},
          rowOperand(got, spec.rowsPerToken * spec.d)};
      if (threads == 0) {
        void *addresses[] = {in.data(), positions.data(), got.data()};
        const int64_t items = tokens * spec.rowsPerToken;
        for (int64_t begin = 0; begin < items; begin += 5)
          kernel(addresses, tokens, begin, std::min(begin + 5, items));
      } else {
        ASSERT_EQ(
            runRowStep(kernel, tokens, spec.rowsPerToken, operands, threads),
            absl::OkStatus());
      }
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i]))
          continue;
        const int64_t row = static_cast<int64_t>(i) / spec.d;
        const int64_t column = static_cast<int64_t>(i) % spec.d;
        ASSERT_GE(column, kept)
            << "row " << row << ", element " << column
            << " (not rotated): " << got[i] << " != " << want[i];
        const int64_t pair = (column - kept) / 2;
        const float a = x[row * spec.d + kept + 2 * pair];
        const float b = x[row * spec.d + kept + 2 * pair + 1];
        differ.insert({row / spec.rowsPerToken, pair});
        ASSERT_TRUE(withinBound(got[i], want[i], a, b))
            << (inPlace ? "in place, " : "")
            << (threads == 0   ? "direct calls"
                : threads == 1 ? "1 thread"
                               : "2 threads")
            << ", row " << row << ", element " << column << " (position "
            << positions[row / spec.rowsPerToken] << ", pair (" << a << ", "
            << b << ")): " << got[i] << " vs " << want[i];
      }
    }
  EXPECT_LE(differ.size(), 1u);
}

TEST_P(RopeKernelOnIsa, EqualsReference) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const target::TargetInfo target = isaTestTarget(GetParam());
  const std::vector<float> window = frequenciesOf(reference::kSwaRope);
  const std::vector<float> yarn = frequenciesOf(reference::kCompressedRope);
  const std::vector<float> wide =
      frequenciesOf({.ropeDim = 128, .base = 10000});
  const std::vector<RopeKernelSpec> specs = {
      {192, 64, 1, false, window}, {192, 64, 8, true, window},
      {512, 64, 8, false, yarn},   {512, 64, 1, true, yarn},
      {128, 128, 3, false, wide},
  };
  forEachStepKernel(target, specs, buildRopeKernel, checkKernel);
}

// A step kernel of emitSinCos alone: item i takes the fp32 angles 8i ..
// 8i + 7 to fp32(sin) and fp32(cos), as the rope kernel rounds them.
llvm::Error buildSinCosKernel(mlir::ModuleOp module,
                              const target::TargetInfo &target) {
  using namespace mlir;
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, "kf_test_sin_cos", target);
  auto floats = VectorType::get({8}, b.getF32Type());
  auto doubles = VectorType::get({8}, b.getF64Type());
  Type i64 = b.getI64Type();
  Value angles = emitStepOperand(b, loc, args, 0);
  Value sines = emitStepOperand(b, loc, args, 1);
  Value cosines = emitStepOperand(b, loc, args, 2);
  auto items = scf::ForOp::create(b, loc, args.begin, args.end,
                                  arith::ConstantIntOp::create(b, loc, i64, 1));
  b.setInsertionPointToStart(items.getBody());
  Value offset =
      arith::MulIOp::create(b, loc, items.getInductionVar(),
                            arith::ConstantIntOp::create(b, loc, i64, 32));
  Value angle = LLVM::LoadOp::create(
      b, loc, floats, emitByteOffset(b, loc, angles, offset), /*alignment=*/4);
  auto [sinX, cosX] =
      emitSinCos(b, loc, arith::ExtFOp::create(b, loc, doubles, angle));
  LLVM::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, floats, sinX),
                        emitByteOffset(b, loc, sines, offset),
                        /*alignment=*/4);
  LLVM::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, floats, cosX),
                        emitByteOffset(b, loc, cosines, offset),
                        /*alignment=*/4);
  b.setInsertionPointAfter(items);
  func::ReturnOp::create(b, loc);
  return llvm::Error::success();
}

// The rope kernel's fp32 sin and cos against glibc's, rounded to fp32, on
// ~6 million angles in the reduction's range: every 61st fp32 from 1e-3 to
// 1.6e6, the fp32 nearest to each k·π/2 up to 2^20·π/2 (where the reduction
// cancels most), and the model's angles fl32(p) · f_i for both tables and
// every 37th position up to 10^6. The sign of a zero counts.
TEST(RopeSinCos, EqualsLibmOnDenseAngles) {
  const target::TargetInfo &target = hostTarget();
  llvm::Expected<CompiledStepKernels> compiled = compileStepKernels(
      target,
      [&](mlir::ModuleOp module) { return buildSinCosKernel(module, target); },
      {"kf_test_sin_cos"});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  std::vector<float> angles = {0.0f, -0.0f, 0x1p-149f, 1e-30f, -1.0f, -1e6f};
  for (uint32_t bits = std::bit_cast<uint32_t>(1e-3f);
       bits <= std::bit_cast<uint32_t>(1.6e6f); bits += 61)
    angles.push_back(std::bit_cast<float>(bits));
  for (int64_t k = 1; k < (int64_t{1} << 20); ++k)
    angles.push_back(
        static_cast<float>(static_cast<double>(k) * std::numbers::pi / 2));
  for (const reference::RopeConfig &config :
       {reference::kSwaRope, reference::kCompressedRope})
    for (float f : frequenciesOf(config))
      for (int64_t p = 0; p <= 1000000; p += 37)
        angles.push_back(static_cast<float>(p) * f);
  angles.resize((angles.size() + 7) / 8 * 8, 0.5f);

  std::vector<float> sines(angles.size()), cosines(angles.size());
  void *operands[] = {angles.data(), sines.data(), cosines.data()};
  compiled->kernels[0](operands, 0, 0, static_cast<int64_t>(angles.size() / 8));
  int64_t sinDiffer = 0, cosDiffer = 0;
  for (size_t i = 0; i < angles.size(); ++i) {
    const double angle = angles[i];
    const float sinWant = static_cast<float>(std::sin(angle));
    const float cosWant = static_cast<float>(std::cos(angle));
    if (std::bit_cast<uint32_t>(sines[i]) != std::bit_cast<uint32_t>(sinWant)) {
      ++sinDiffer;
      ADD_FAILURE() << "sin(" << angles[i] << "): " << sines[i] << " vs "
                    << sinWant;
    }
    if (std::bit_cast<uint32_t>(cosines[i]) !=
        std::bit_cast<uint32_t>(cosWant)) {
      ++cosDiffer;
      ADD_FAILURE() << "cos(" << angles[i] << "): " << cosines[i] << " vs "
                    << cosWant;
    }
    if (sinDiffer + cosDiffer > 20)
      break;
  }
  EXPECT_EQ(sinDiffer, 0);
  EXPECT_EQ(cosDiffer, 0);
}

TEST(RopeKernel, RefusesBadSpecs) {
  const std::vector<float> freqs(32, 1.0f);
  EXPECT_EQ(llvm::toString(verifyRopeKernel({200, 64, 1, false, freqs})),
            "rope kernel [D = 200, dim = 64, H = 1]: expected D a positive "
            "multiple of 16");
  EXPECT_EQ(llvm::toString(verifyRopeKernel({192, 40, 1, false, freqs})),
            "rope kernel [D = 192, dim = 40, H = 1]: expected dim a positive "
            "multiple of 16, at most D");
  EXPECT_EQ(llvm::toString(verifyRopeKernel({32, 64, 1, false, freqs})),
            "rope kernel [D = 32, dim = 64, H = 1]: expected dim a positive "
            "multiple of 16, at most D");
  EXPECT_EQ(llvm::toString(verifyRopeKernel({192, 64, 0, true, freqs})),
            "rope kernel [D = 192, dim = 64, H = 0, inverse]: expected H, the "
            "rows per token, >= 1");
  EXPECT_EQ(llvm::toString(verifyRopeKernel({192, 64, 8, false, {1.0f}})),
            "rope kernel [D = 192, dim = 64, H = 8]: expected 32 frequencies, "
            "got 1");
  std::vector<float> infinite = freqs;
  infinite[3] = INFINITY;
  EXPECT_EQ(llvm::toString(verifyRopeKernel({192, 64, 8, false, infinite})),
            "rope kernel [D = 192, dim = 64, H = 8]: expected finite "
            "frequencies, got f_3 = inf");
  EXPECT_FALSE(static_cast<bool>(verifyRopeKernel({192, 64, 8, false, freqs})));
  EXPECT_FALSE(static_cast<bool>(verifyRopeKernel({64, 64, 1, true, freqs})));
}

TEST(RopeKernel, NamesEachVariantApart) {
  const std::vector<float> window = frequenciesOf(reference::kSwaRope);
  const std::vector<float> yarn = frequenciesOf(reference::kCompressedRope);
  RopeKernelSpec a{192, 64, 8, false, window};
  // The frequencies' hash is fixed: a plan names its kernels the same in
  // every process.
  EXPECT_EQ(a.getSymbolName(), "kf_rope_d192_r64_h8_f7f64ccca825654d8");
  EXPECT_EQ(a.describe(), "rope kernel [D = 192, dim = 64, H = 8]");
  RopeKernelSpec inverse = a;
  inverse.inverse = true;
  EXPECT_EQ(inverse.getSymbolName(), a.getSymbolName() + "_inv");
  EXPECT_EQ(inverse.describe(),
            "rope kernel [D = 192, dim = 64, H = 8, inverse]");
  RopeKernelSpec other = a;
  other.frequencies = yarn;
  EXPECT_NE(other.getSymbolName(), a.getSymbolName());
  // One frequency's last bit is another kernel.
  other.frequencies = window;
  other.frequencies[31] = std::nextafter(window[31], 1.0f);
  EXPECT_NE(other.getSymbolName(), a.getSymbolName());
  for (RopeKernelSpec shape : {RopeKernelSpec{512, 64, 8, false, window},
                               RopeKernelSpec{192, 64, 1, false, window}})
    EXPECT_NE(shape.getSymbolName(), a.getSymbolName());
}

} // namespace
} // namespace kf::codegen
