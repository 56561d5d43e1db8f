// The compiled kf.moe_combine against the interpreter's (the golden moe's
// combine: the k slots summed in fp64 in slot order from +0, the shared
// expert's row added, then fp32, then bf16), run as a plan step by the
// runtime's executor on 1 and 2 threads, writing rows of its own or over
// the shared expert's, per x86 ISA level: the tiny model's k = 4, D = 256,
// the full model's k = 6, D = 4096, and other slot counts and widths. The
// columns: bf16 values at unit scale, sums that overflow fp32 (and cancel
// back inside it), subnormals, signed zeros (a column of -0s sums to +0),
// infinities (inf - inf is NaN), one NaN with a payload, terms whose fp64
// sum depends on the slot order (2^60 + 1 - 2^60), sums on bf16 rounding
// ties, and random float bits of any finite value.
//
// Tolerance: none. Each lane runs the interpreter's IEEE operations in its
// order on the same operands (MoeCombineEmitter.cpp), so every element is
// compared bit for bit.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/MoeCombineKernel.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(MoeCombineKernelOnIsa);

constexpr int64_t kTokens = 9;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();

// The routed slots [T, k, D] and the shared rows [T, D] of one test.
struct Inputs {
  std::vector<float> routed, shared;
};

// Column (t, i)'s k routed values and shared value, of the kind `kind`.
void fillColumn(int kind, std::mt19937 &rng, std::span<float> slots,
                float &shared) {
  std::normal_distribution<float> unit(0.0f, 1.0f);
  auto bf16 = [](float v) { return reference::roundBf16(v); };
  auto fill = [&](float v) {
    for (float &s : slots)
      s = v;
  };
  switch (kind) {
  case 0: // bf16 values at unit scale, as the experts give them
    for (float &s : slots)
      s = bf16(unit(rng));
    shared = bf16(unit(rng));
    return;
  case 1: // overflows fp32
    fill(2e38f);
    shared = kMax;
    return;
  case 2: // exceeds fp32 in fp64 (k > 2), then comes back inside it
    for (size_t j = 0; j < slots.size(); ++j)
      slots[j] = j < (slots.size() + 1) / 2 ? 3e38f : -3e38f;
    shared = 1.5f;
    return;
  case 3: // subnormals, exact in fp64
    for (float &s : slots)
      s = std::bit_cast<float>(static_cast<uint32_t>(rng() & 0x807fffffu));
    shared = std::numeric_limits<float>::denorm_min();
    return;
  case 4: // -0s everywhere: +0, as the reference's sum from +0
    fill(-0.0f);
    shared = -0.0f;
    return;
  case 5: // -0 slots, a -0 shared expert or a +0 one
    fill(-0.0f);
    shared = (rng() & 1) ? 0.0f : -0.0f;
    slots[0] = 0.0f;
    return;
  case 6: // infinities: inf, or inf - inf = NaN
    fill(1.0f);
    slots[0] = kInf;
    shared = (rng() & 1) ? -kInf : 2.0f;
    return;
  case 7: // one NaN, with a payload
    fill(0.5f);
    shared = std::bit_cast<float>(0x7fa12345u);
    return;
  case 8: // 2^60 + 1 - 2^60: the 1 is lost in fp64 in slot order only
    fill(0.0f);
    slots[0] = 0x1p60f;
    if (slots.size() > 1)
      slots[1] = 1.0f;
    if (slots.size() > 2)
      slots[2] = -0x1p60f;
    shared = 0x1p-20f;
    return;
  case 9: // a bf16 rounding tie: 1 + 2^-8 rounds to even (1)
    fill(0.0f);
    slots[0] = 1.0f;
    shared = 0x1p-8f;
    return;
  case 10: // a tie that rounds up: 1 + 3 · 2^-8
    fill(0.0f);
    slots[0] = 1.0f + 0x1p-7f;
    shared = 0x1p-8f;
    return;
  default: // random finite bits of any magnitude
    for (float &s : slots) {
      do
        s = std::bit_cast<float>(static_cast<uint32_t>(rng()));
      while (!std::isfinite(s));
    }
    shared = std::bit_cast<float>(static_cast<uint32_t>(rng()) & 0xbfffffffu);
    return;
  }
}

constexpr int kKinds = 12;

Inputs inputsOf(const MoeCombineKernelSpec &spec) {
  std::mt19937 rng(static_cast<unsigned>(spec.k * 1000 + spec.d));
  Inputs in{std::vector<float>(kTokens * spec.k * spec.d),
            std::vector<float>(kTokens * spec.d)};
  std::vector<float> slots(spec.k);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t i = 0; i < spec.d; ++i) {
      // Every token sees every kind, in other columns.
      fillColumn(static_cast<int>((t + i) % kKinds), rng, slots,
                 in.shared[t * spec.d + i]);
      for (int64_t j = 0; j < spec.k; ++j)
        in.routed[(t * spec.k + j) * spec.d + i] = slots[j];
    }
  return in;
}

// The interpreter's execute(MoeCombineOp).
std::vector<float> expected(const MoeCombineKernelSpec &spec,
                            const Inputs &in) {
  std::vector<float> out(kTokens * spec.d);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t i = 0; i < spec.d; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < spec.k; ++j)
        sum += in.routed[(t * spec.k + j) * spec.d + i];
      out[t * spec.d + i] = reference::roundBf16(
          static_cast<float>(sum + in.shared[t * spec.d + i]));
    }
  return out;
}

void checkKernel(const MoeCombineKernelSpec &spec, kf_step_fn kernel) {
  Inputs in = inputsOf(spec);
  const std::vector<float> want = expected(spec, in);
  for (bool inPlace : {false, true})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message()
                   << threads << " threads" << (inPlace ? ", in place" : ""));
      std::vector<float> routed = in.routed, shared = in.shared;
      std::vector<float> own(want.size(), -1.0f);
      std::vector<float> &out = inPlace ? shared : own;
      ASSERT_EQ(
          runRowStep(kernel, kTokens, 1,
                     {rowOperand(routed, spec.k * spec.d),
                      rowOperand(shared, spec.d), rowOperand(out, spec.d)},
                     threads),
          absl::OkStatus());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(out[i]),
                  std::bit_cast<uint32_t>(want[i]))
            << "token " << i / spec.d << ", column " << i % spec.d << ": "
            << out[i] << " != " << want[i];
    }
}

TEST_P(MoeCombineKernelOnIsa, EqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<MoeCombineKernelSpec> specs = {
      {4, 256}, {6, 4096}, {1, 16}, {2, 48}, {3, 32}, {8, 64}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildMoeCombineKernel,
                    checkKernel);
}

TEST(MoeCombineKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyMoeCombineKernel({0, 256})),
            "moe_combine kernel [k = 0, D = 256]: expected at least one "
            "routed slot");
  EXPECT_EQ(llvm::toString(verifyMoeCombineKernel({6, 100})),
            "moe_combine kernel [k = 6, D = 100]: expected D a positive "
            "multiple of 16");
  EXPECT_EQ(llvm::toString(verifyMoeCombineKernel({6, 0})),
            "moe_combine kernel [k = 6, D = 0]: expected D a positive "
            "multiple of 16");
  EXPECT_FALSE(static_cast<bool>(verifyMoeCombineKernel({6, 4096})));
  EXPECT_FALSE(static_cast<bool>(verifyMoeCombineKernel({1, 16})));
}

TEST(MoeCombineKernel, NamesEachVariantApart) {
  const MoeCombineKernelSpec spec{6, 4096};
  EXPECT_EQ(spec.getSymbolName(), "kf_moe_combine_k6_d4096");
  EXPECT_EQ(spec.describe(), "moe_combine kernel [k = 6, D = 4096]");
  EXPECT_NE(spec.getSymbolName(),
            (MoeCombineKernelSpec{8, 4096}.getSymbolName()));
  EXPECT_NE(spec.getSymbolName(),
            (MoeCombineKernelSpec{6, 2048}.getSymbolName()));
}

} // namespace
} // namespace kf::codegen
