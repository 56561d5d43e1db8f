// The compiled kf.cache_append against the interpreter's (slot positions[t]
// mod R of the ring takes storedAs(element, row t), tokens in order, so a
// later position wins), run as plan steps by the runtime's executor on 1 and
// 2 threads, per x86 ISA level, the ring bound as writable state: the tiny
// model's ring (R = 16, D = 192, bf16) and the full model's (R = 128, D =
// 512, bf16), and f16 and f32 rings of other shapes. Each ring takes a
// sequence of calls: a first call from position 0 longer than the ring (its
// first tokens overwritten by its last ones in the same call), calls of one
// token, of a few, of exactly R, of more than 2R, wrapping around the ring
// at every offset; one sequence starts at position 1,000,003. The ring
// starts as random bits (so a slot never written must stay as it was) and is
// compared whole, bit for bit, after every call. The rows: Gaussian values,
// bf16 rounding ties either way, fp16 ties, the largest half and values that
// round past it to inf, fp16 subnormals (2^-25 rounding to 0 as a tie, 3 ·
// 2^-25 rounding up to 2^-23) and the smallest half normal's neighbours,
// fp32 subnormals, signed zeros, infinities, NaNs with payloads (signalling
// and quiet), and random bits.
//
// Tolerance: none. The kernel copies with the element's rounding, integer
// operations or the target's conversion that kf::fp32ToFp16 mirrors
// (CacheAppendEmitter.cpp), so the ring is compared bit for bit.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/CacheKernels.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/runtime/half.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(CacheAppendKernelOnIsa);

// The interpreter's storedAs.
float storedAs(kf::Format element, float v) {
  switch (element) {
  case kf::Format::BF16:
    return reference::roundBf16(v);
  case kf::Format::F16:
    return kf::fp16ToFp32(kf::fp32ToFp16(v));
  default:
    return v;
  }
}

// Values whose rounding is a case of its own (the file's comment).
constexpr uint32_t kChosen[] = {
    0x3f808000u, // 1 + 2^-8: a bf16 tie, to even (down)
    0x3f818000u, // 1 + 3 · 2^-8: a bf16 tie, to even (up)
    0x3f801000u, // 1 + 2^-11: an fp16 tie, down
    0x3f803000u, // 1 + 3 · 2^-11: an fp16 tie, up
    0x477fe000u, // 65504, the largest half
    0x477fefffu, // just below 65520: 65504
    0x477ff000u, // 65520: inf as a half
    0xc7c35000u, // -100000: -inf as a half
    0x7f7fffffu, // FLT_MAX: inf in bf16 and f16
    0x33000000u, // 2^-25: a tie between 0 and the least half, to 0
    0x33c00000u, // 3 · 2^-25: a tie, up to 2^-23
    0x33400000u, // 3 · 2^-26: up to the least half, 2^-24
    0x33000001u, // just above 2^-25: the least half
    0x387fe000u, // 2^-14 - 2^-25: a tie, up to the least half normal
    0x387fc000u, // 2^-14 - 2^-24: the largest half subnormal
    0x38800000u, // 2^-14, the least half normal
    0x00000001u, // the least fp32 subnormal
    0x807fffffu, // the largest negative fp32 subnormal
    0x80000000u, // -0
    0x00000000u, // +0
    0x7f800000u, // inf
    0xff800000u, // -inf
    0x7f800001u, // a signalling NaN
    0xffc12345u, // a quiet NaN with a payload
    0x7fa01fffu, // a signalling NaN whose payload is in its low bits
};

// Token t's row: Gaussian values, the chosen values at a column that moves
// with t, and random bits in every third row.
std::vector<float> rowsOf(int64_t tokens, int64_t dim, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> rows(tokens * dim);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < dim; ++i) {
      float &v = rows[t * dim + i];
      v = t % 3 == 2 ? std::bit_cast<float>(static_cast<uint32_t>(rng()))
                     : unit(rng);
      const int64_t chosen = (i + t) % 40;
      if (chosen < static_cast<int64_t>(std::size(kChosen)))
        v = std::bit_cast<float>(kChosen[chosen]);
    }
  return rows;
}

StepOperand positionsOperand(std::vector<int64_t> &positions) {
  return {std::span(reinterpret_cast<uint8_t *>(positions.data()),
                    positions.size() * sizeof(int64_t)),
          sizeof(int64_t)};
}

void expectBitForBit(std::span<const float> got, std::span<const float> want,
                     int64_t dim) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "slot " << i / dim << ", value " << i % dim << ": " << got[i]
        << " != " << want[i];
}

// Runs the calls of `calls` tokens each, from position `start`, through the
// kernel and the interpreter's loop, comparing the rings after each.
void checkSequence(const CacheAppendKernelSpec &spec, kf_step_fn kernel,
                   int64_t start, llvm::ArrayRef<int64_t> calls) {
  int64_t tokens = 0;
  for (int64_t count : calls)
    tokens += count;
  const std::vector<float> rows =
      rowsOf(tokens, spec.dim, static_cast<unsigned>(spec.rows + spec.dim));
  std::mt19937 rng(7);
  std::vector<float> initial(spec.rows * spec.dim);
  for (float &v : initial)
    v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<float> ring = initial, want = initial;
    int64_t first = 0;
    for (int64_t count : calls) {
      SCOPED_TRACE(testing::Message()
                   << "the call of positions " << start + first << " .. "
                   << start + first + count - 1);
      std::vector<float> callRows(rows.begin() + first * spec.dim,
                                  rows.begin() + (first + count) * spec.dim);
      std::vector<int64_t> positions(count);
      for (int64_t t = 0; t < count; ++t)
        positions[t] = start + first + t;
      ASSERT_EQ(runRowStep(kernel, count, 1,
                           {rowOperand(callRows, spec.dim),
                            positionsOperand(positions), weightOperand(ring)},
                           threads),
                absl::OkStatus());
      // The interpreter's execute(CacheAppendOp).
      for (int64_t t = 0; t < count; ++t) {
        const int64_t slot = positions[t] % spec.rows;
        for (int64_t i = 0; i < spec.dim; ++i)
          want[slot * spec.dim + i] =
              storedAs(spec.element, callRows[t * spec.dim + i]);
      }
      expectBitForBit(ring, want, spec.dim);
      if (testing::Test::HasFatalFailure())
        return;
      first += count;
    }
  }
}

TEST_P(CacheAppendKernelOnIsa, EqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<CacheAppendKernelSpec> specs = {
      {16, 192, kf::Format::BF16},  // the tiny model's
      {128, 512, kf::Format::BF16}, // the full model's
      {16, 192, kf::Format::F16},   {8, 48, kf::Format::F32},
      {1, 16, kf::Format::F16},     {5, 32, kf::Format::BF16}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildCacheAppendKernel,
      [&](const CacheAppendKernelSpec &spec, kf_step_fn kernel) {
        const int64_t r = spec.rows;
        // From 0: longer than the ring, then 1, 1, a few, exactly R, more
        // than 2R, and a few.
        checkSequence(spec, kernel, 0, {r + 4, 1, 1, 3, r, 2 * r + 5, 2});
        // Far into a sequence: every call wraps at its own offset.
        checkSequence(spec, kernel, 1000003,
                      {3, std::max<int64_t>(r - 1, 2), 1, r + 1});
      });
}

TEST(CacheAppendKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyCacheAppendKernel({0, 512})),
            "cache_append kernel [rows = 0, D = 512, bf16]: expected at least "
            "one row");
  EXPECT_EQ(llvm::toString(verifyCacheAppendKernel({128, 500})),
            "cache_append kernel [rows = 128, D = 500, bf16]: expected D a "
            "positive multiple of 16");
  EXPECT_EQ(
      llvm::toString(verifyCacheAppendKernel({128, 512, kf::Format::Q8_0})),
      "cache_append kernel [rows = 128, D = 512, q8_0]: expected an f32, f16 "
      "or bf16 element");
  EXPECT_EQ(llvm::toString(verifyCacheAppendKernel({int64_t{1} << 60, 512})),
            "cache_append kernel [rows = 1152921504606846976, D = 512, bf16]: "
            "the ring's bytes overflow an i64");
  EXPECT_FALSE(static_cast<bool>(verifyCacheAppendKernel({128, 512})));
  EXPECT_FALSE(
      static_cast<bool>(verifyCacheAppendKernel({1, 16, kf::Format::F32})));
}

TEST(CacheAppendKernel, NamesEachVariantApart) {
  const CacheAppendKernelSpec spec{128, 512, kf::Format::BF16};
  EXPECT_EQ(spec.getSymbolName(), "kf_cache_append_r128_d512_bf16");
  EXPECT_EQ(spec.describe(), "cache_append kernel [rows = 128, D = 512, bf16]");
  EXPECT_EQ(spec.getRingBytes(), 128 * 512 * 4);
  EXPECT_NE(spec.getSymbolName(),
            (CacheAppendKernelSpec{128, 512, kf::Format::F16}.getSymbolName()));
  EXPECT_NE(spec.getSymbolName(),
            (CacheAppendKernelSpec{64, 512, kf::Format::BF16}.getSymbolName()));
  EXPECT_NE(
      spec.getSymbolName(),
      (CacheAppendKernelSpec{128, 192, kf::Format::BF16}.getSymbolName()));
}

// A kernel calls nothing: the half rounding is no library conversion, on
// the portable level (integer arithmetic) and AVX-512's (vcvtps2ph).
TEST(CacheAppendKernel, CallsNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"}, {"kf_cache_append_r128_d512_f16"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        for (kf::Format element :
             {kf::Format::BF16, kf::Format::F16, kf::Format::F32})
          ASSERT_TRUE(static_cast<bool>(
              buildCacheAppendKernel(module, {128, 512, element}, target)));
      });
}

} // namespace
} // namespace kf::codegen
