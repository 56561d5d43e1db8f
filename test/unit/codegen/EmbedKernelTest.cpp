// The compiled kf.embed against the interpreter's (the token's row of the
// table decoded by the runtime's reference decoder, kf::dequantize, and
// rounded to bf16), run as a plan step by the runtime's executor on 1 and 2
// threads, the table bound as stored, per x86 ISA level: F32, F16, BF16 and
// Q8_0 tables (the tiny model's Q8_0 [32256, 256] among them, and rows of
// 4096), with the ids of the first, the last and repeated rows, and ids
// outside the table (-1, V, INT32_MIN, INT32_MAX), which give rows of +0.
// The tables hold random bits (every value of the format: NaNs with
// payloads, infinities, subnormals, fp16 scales of every kind), a row of
// zero bytes and a row of chosen values: bf16 rounding ties either way,
// FLT_MAX (rounding to inf), signalling NaNs, fp16 subnormals and the
// largest half, Q8_0 blocks whose scale is subnormal, infinite (inf · 0 is
// NaN) or a NaN.
//
// Tolerance: none. Every step is the decoder's exact widening or its one
// IEEE product, and the bf16 rounding is kf::fp32ToBf16's
// (EmbedEmitter.cpp), so every element is compared bit for bit.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/EmbedKernel.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/runtime/quant.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <cstring>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(EmbedKernelOnIsa);

int64_t tableRowBytes(const EmbedKernelSpec &spec) {
  return static_cast<int64_t>(*kf::rowBytes(spec.format, spec.d));
}

void putU16(uint8_t *at, uint16_t v) { std::memcpy(at, &v, 2); }
void putU32(uint8_t *at, uint32_t v) { std::memcpy(at, &v, 4); }

// Row 1's chosen values, in the format's encoding.
void fillChosenRow(const EmbedKernelSpec &spec, uint8_t *row) {
  static constexpr uint32_t kFloats[] = {
      0x3f808000u, // 1 + 2^-8: a tie, to even (down)
      0x3f818000u, // a tie, to even (up)
      0x7f7fffffu, // FLT_MAX: rounds to inf
      0x7f800001u, // a signalling NaN
      0xffc12345u, // a quiet NaN with a payload
      0x80000000u, // -0
      0x00000001u, // the least subnormal
      0xff800000u, // -inf
  };
  static constexpr uint16_t kHalves[] = {
      0x0001u, // the least subnormal
      0x83ffu, // the largest negative subnormal
      0x7bffu, // the largest half
      0x7c00u, // inf
      0x7c01u, // a signalling NaN
      0xfe00u, // a quiet NaN
      0x8000u, // -0
      0x3c00u, // 1
  };
  static constexpr uint16_t kBfloats[] = {
      0x7f81u, // a signalling NaN
      0xffc0u, // a quiet NaN
      0x0001u, // a subnormal
      0xff80u, // -inf
      0x7f7fu, // the largest
      0x8000u, // -0
  };
  switch (spec.format) {
  case kf::Format::F32:
    for (int64_t i = 0; i < spec.d; ++i)
      putU32(row + 4 * i, kFloats[i % std::size(kFloats)]);
    return;
  case kf::Format::F16:
    for (int64_t i = 0; i < spec.d; ++i)
      putU16(row + 2 * i, kHalves[i % std::size(kHalves)]);
    return;
  case kf::Format::BF16:
    for (int64_t i = 0; i < spec.d; ++i)
      putU16(row + 2 * i, kBfloats[i % std::size(kBfloats)]);
    return;
  case kf::Format::Q8_0:
    // Scales of every kind; values of every int8, 0 and -128 included.
    for (int64_t block = 0; block < spec.d / 32; ++block) {
      uint8_t *at = row + 34 * block;
      putU16(at, kHalves[block % std::size(kHalves)]);
      for (int j = 0; j < 32; ++j)
        at[2 + j] = static_cast<uint8_t>(block * 37 + j * 8);
    }
    return;
  default:
    FAIL() << "no chosen values for " << spec.describe();
  }
}

std::vector<uint8_t> tableOf(const EmbedKernelSpec &spec) {
  const int64_t rowBytes = tableRowBytes(spec);
  std::vector<uint8_t> table(spec.vocab * rowBytes);
  std::mt19937 rng(static_cast<unsigned>(spec.vocab + spec.d));
  for (uint8_t &byte : table)
    byte = static_cast<uint8_t>(rng());
  std::fill_n(table.begin(), rowBytes, 0); // row 0: zero bytes
  fillChosenRow(spec, table.data() + rowBytes);
  return table;
}

// The interpreter's execute(EmbedOp): the row decoded, then rounded to
// bf16; +0 for an id outside the table (the kernel's rule: the interpreter
// refuses such ids).
std::vector<float> expected(const EmbedKernelSpec &spec,
                            std::span<const uint8_t> table,
                            std::span<const int32_t> ids) {
  const int64_t rowBytes = tableRowBytes(spec);
  std::vector<float> out(ids.size() * spec.d, 0.0f);
  for (size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] < 0 || ids[t] >= spec.vocab)
      continue;
    std::span<float> row(out.data() + t * spec.d, spec.d);
    absl::Status decoded = kf::dequantize(
        spec.format, table.subspan(ids[t] * rowBytes, rowBytes), row);
    EXPECT_TRUE(decoded.ok()) << decoded;
    for (float &v : row)
      v = reference::roundBf16(v);
  }
  return out;
}

void checkKernel(const EmbedKernelSpec &spec, kf_step_fn kernel) {
  std::vector<uint8_t> table = tableOf(spec);
  const int32_t v = static_cast<int32_t>(spec.vocab);
  std::vector<int32_t> ids = {1,
                              0,
                              v - 1,
                              -1,
                              v,
                              2 % v,
                              std::numeric_limits<int32_t>::min(),
                              1,
                              std::numeric_limits<int32_t>::max(),
                              v / 2,
                              v - 2,
                              0,
                              v + 1};
  const std::vector<float> want = expected(spec, table, ids);
  const int64_t tokens = static_cast<int64_t>(ids.size());
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<int32_t> tokenIds = ids;
    std::vector<float> out(want.size(), -1.0f);
    ASSERT_EQ(
        runRowStep(
            kernel, tokens, 1,
            {StepOperand{std::span(reinterpret_cast<uint8_t *>(tokenIds.data()),
                                   4 * tokenIds.size()),
                         4},
             StepOperand{table, 0}, rowOperand(out, spec.d)},
            threads),
        absl::OkStatus());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(out[i]),
                std::bit_cast<uint32_t>(want[i]))
          << "token " << i / spec.d << " (id " << ids[i / spec.d]
          << "), column " << i % spec.d << ": " << out[i] << " != " << want[i];
  }
}

TEST_P(EmbedKernelOnIsa, EqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<EmbedKernelSpec> specs = {
      {kf::Format::Q8_0, 32256, 256}, {kf::Format::Q8_0, 37, 64},
      {kf::Format::Q8_0, 5, 4096},    {kf::Format::F32, 37, 64},
      {kf::Format::F16, 37, 48},      {kf::Format::F16, 5, 4096},
      {kf::Format::BF16, 37, 32},     {kf::Format::BF16, 129280, 16},
  };
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildEmbedKernel,
                    checkKernel);
}

TEST(EmbedKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyEmbedKernel({kf::Format::Q4_K, 100, 256})),
            "embed kernel [q4_k, V = 100, D = 256]: expected a table of f32, "
            "f16, bf16 or q8_0");
  EXPECT_EQ(llvm::toString(verifyEmbedKernel({kf::Format::F16, 0, 256})),
            "embed kernel [f16, V = 0, D = 256]: expected at least one row");
  EXPECT_EQ(llvm::toString(verifyEmbedKernel({kf::Format::Q8_0, 100, 48})),
            "embed kernel [q8_0, V = 100, D = 48]: expected D a positive "
            "multiple of 32");
  EXPECT_EQ(llvm::toString(verifyEmbedKernel({kf::Format::F32, 100, 40})),
            "embed kernel [f32, V = 100, D = 40]: expected D a positive "
            "multiple of 16");
  EXPECT_FALSE(
      static_cast<bool>(verifyEmbedKernel({kf::Format::Q8_0, 129280, 4096})));
  EXPECT_FALSE(static_cast<bool>(verifyEmbedKernel({kf::Format::BF16, 1, 16})));
}

TEST(EmbedKernel, NamesEachVariantApart) {
  const EmbedKernelSpec spec{kf::Format::Q8_0, 129280, 4096};
  EXPECT_EQ(spec.getSymbolName(), "kf_embed_q8_0_v129280_d4096");
  EXPECT_EQ(spec.describe(), "embed kernel [q8_0, V = 129280, D = 4096]");
  EXPECT_NE(spec.getSymbolName(),
            (EmbedKernelSpec{kf::Format::F16, 129280, 4096}.getSymbolName()));
  EXPECT_NE(spec.getSymbolName(),
            (EmbedKernelSpec{kf::Format::Q8_0, 32256, 4096}.getSymbolName()));
  EXPECT_NE(spec.getSymbolName(),
            (EmbedKernelSpec{kf::Format::Q8_0, 129280, 256}.getSymbolName()));
}

// A kernel calls nothing: no fp16 conversion routine where the target has
// no F16C (x86-64-v2), no memset for a row of zeros.
TEST(EmbedKernel, CallsNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"}, {"kf_embed_f16_v32256_d4096"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        for (kf::Format format : {kf::Format::F32, kf::Format::F16,
                                  kf::Format::BF16, kf::Format::Q8_0})
          ASSERT_TRUE(static_cast<bool>(
              buildEmbedKernel(module, {format, 32256, 4096}, target)));
      });
}

} // namespace
} // namespace kf::codegen
