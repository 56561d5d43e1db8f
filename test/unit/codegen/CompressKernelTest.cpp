// The compiled kf.compress (its entries kernel, then its state kernel, as a
// plan runs them after the projections' matmuls) against the DeepSeek-V4
// golden's Compressor (Options{Model, simulateQuantization = post != none},
// as the interpreter makes it), run as plan steps by the runtime's executor
// on 1 and 2 threads, per x86 ISA level, the cache bound as writable state.
// A sequence of random tokens x [N, 256] goes through the golden (a prefill
// of the first call's tokens, then a decode of each token) and, projected
// by reference::linearFp32 as the golden projects them, through the
// kernels in calls from position 0: the first call, then calls of one token
// and of several, ending mid-block, at a block's end and past one or more;
// a second sequence of other tokens then runs on the same cache from
// position 0 again (the state of the first is never read). Every entry the
// sequence completes is compared with the golden's as the interpreter's
// kf.cache_read returns it (rounded to the element), bit for bit; every
// entry row past them must keep the cache's initial random bits, and after
// every call the ring must hold the projections of the last S positions.
// Shapes: the tiny model's (ratio 4 with overlap, D = 192 with fp8 and the
// indexer's D = 128 with hadamard_fp4; ratio 128 without overlap, D = 192;
// rope dim 64, the compressed layers' YaRN frequencies), the full model's
// D = 512 at ratios 4 and 128 for a few blocks, and smaller ones of other
// ratios (1, 2, 8), posts (none) and elements (f16, f32). The tokens: unit
// Gaussians, a token scaled by 40 (its gates dominate the softmax, the
// others' e^x underflow to 0) and a token of zeros. A call of one block past
// the capacity, which the runtime refuses, must write nothing.
//
// Tolerance: none. Every operation is the golden's IEEE operation in its
// order (CompressEmitter.cpp) but two: e^x, of which only fp32(e^x) is used,
// which equals glibc's for every float argument (HcKernelTest,
// ExpTermsEqualGolden); and the rope's sin and cos at position c · ratio,
// fdlibm's where the golden calls glibc's, which agree in fp32 but where the
// fp64 value lies within ~1.5 fp64 ulps of an fp32 rounding boundary (about
// 2^-28 of all angles; none of this test's, so it compares bit for bit). At
// such an angle (with another libm) the entry's rope part would differ from
// the golden's by RopeKernelTest's bound (one bf16 ulp, or 3 · 2^-24 · (|a|
// + |b|) plus one where a·c and b·s cancel); the main compressor's fp8 part
// does not see it, the indexer's Hadamard spreads it over the whole entry,
// whose fp4 values could then each move by one e2m1 step at twice their
// block's scale (a code crossing a rounding boundary, or the scale doubling
// with the block's amax).
#include "StepKernelTestUtil.h"

#include "kf/Codegen/CompressKernel.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/deepseek_v4/reference/compressor.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/rope.h"
#include "kf/runtime/half.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <map>
#include <numeric>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(CompressKernelOnIsa);

constexpr int64_t kInputWidth = 256; // the tiny model's D
constexpr float kEps = 1e-6f;

std::vector<float> frequenciesOf(int64_t ropeDim) {
  reference::RopeConfig config = reference::kCompressedRope;
  config.ropeDim = static_cast<int>(ropeDim);
  std::vector<float> freqs(static_cast<size_t>(ropeDim / 2));
  reference::ropeFrequencies(config, freqs);
  return freqs;
}

CompressEntriesKernelSpec entriesSpec(int64_t ratio, bool overlap, int64_t dim,
                                      int64_t ropeDim, EntryPost post,
                                      kf::Format element, int64_t capacity) {
  return {ratio, overlap, dim,     ropeDim, frequenciesOf(ropeDim),
          kEps,  post,    element, capacity};
}

CompressStateKernelSpec stateSpecOf(const CompressEntriesKernelSpec &spec) {
  return {spec.ratio, spec.overlap, spec.getLayout().getStateWidth(),
          spec.capacity};
}

// One compressor's test: its spec and its calls' token counts.
struct Case {
  CompressEntriesKernelSpec spec;
  std::vector<int64_t> calls;

  int64_t tokens() const {
    return std::accumulate(calls.begin(), calls.end(), int64_t{0});
  }
};

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

// A sequence's tokens as the kernels take them, and what the golden makes of
// them.
struct Sequence {
  std::vector<float> values, gates; ///< [N, w]: x · Wkvᵀ, x · Wgateᵀ
  std::vector<float> ape, norm;
  std::vector<float> entries; ///< the golden's, as cache_read gives them
};

Sequence makeSequence(const Case &test, unsigned seed) {
  const CompressEntriesKernelSpec &spec = test.spec;
  const int64_t w = spec.getLayout().getStateWidth();
  const int64_t tokens = test.tokens();
  std::mt19937 rng(seed);
  auto gaussians = [&](size_t count, float mean, float sigma) {
    std::normal_distribution<float> dist(mean, sigma);
    std::vector<float> v(count);
    for (float &e : v)
      e = dist(rng);
    return v;
  };
  std::vector<float> x = gaussians(tokens * kInputWidth, 0.0f, 1.0f);
  // Token 5's gates dominate its blocks' softmax; token 9 is all zeros.
  for (int64_t t : {5, 9})
    if (t < tokens)
      for (int64_t k = 0; k < kInputWidth; ++k)
        x[t * kInputWidth + k] *= t == 5 ? 40.0f : 0.0f;
  const std::vector<float> wkv = gaussians(w * kInputWidth, 0.0f, 1.0f / 16);
  const std::vector<float> wgate = gaussians(w * kInputWidth, 0.0f, 2.0f / 16);
  Sequence seq{{},
               {},
               gaussians(spec.ratio * w, 0.0f, 0.5f),
               gaussians(spec.dim, 1.0f, 0.2f),
               {}};
  seq.values.resize(tokens * w);
  seq.gates.resize(tokens * w);
  for (int64_t t = 0; t < tokens; ++t) {
    std::span<const float> token(x.data() + t * kInputWidth, kInputWidth);
    reference::linearFp32(token, wkv, std::span(seq.values.data() + t * w, w));
    reference::linearFp32(token, wgate, std::span(seq.gates.data() + t * w, w));
  }

  // The interpreter's kf.compress: the golden's compressor, fed by a prefill
  // and then token by token.
  reference::Compressor golden(
      {wkv, wgate, seq.ape, seq.norm},
      {static_cast<int>(spec.ratio), spec.overlap, static_cast<int>(spec.dim),
       static_cast<int>(spec.ropeDim), spec.eps},
      spec.post == EntryPost::HadamardFp4 ? reference::CompressorKind::Indexer
                                          : reference::CompressorKind::Main,
      spec.frequencies,
      reference::Options{.simulateQuantization = spec.post != EntryPost::None});
  const int64_t first = test.calls.front();
  golden.prefill(std::span<const float>(x).first(first * kInputWidth));
  for (int64_t t = first; t < tokens; ++t)
    golden.decode(
        std::span<const float>(x).subspan(t * kInputWidth, kInputWidth), t);
  for (float v : golden.entries())
    seq.entries.push_back(storedAs(spec.element, v));
  EXPECT_EQ(golden.size(), tokens / spec.ratio);
  return seq;
}

// The sequences of a case (the first and the second), made once for every
// ISA's test.
const std::pair<Sequence, Sequence> &sequencesOf(const Case &test) {
  static std::map<std::string, std::pair<Sequence, Sequence>> made;
  const std::string key = test.spec.getSymbolName() + "/" +
                          std::to_string(test.tokens()) + "/" +
                          std::to_string(test.calls.front());
  auto it = made.find(key);
  if (it == made.end())
    it = made.emplace(key,
                      std::pair(makeSequence(test, 1), makeSequence(test, 2)))
             .first;
  return it->second;
}

StepOperand positionsOperand(std::vector<int64_t> &positions) {
  return {std::span(reinterpret_cast<uint8_t *>(positions.data()),
                    positions.size() * sizeof(int64_t)),
          sizeof(int64_t)};
}

void expectBitForBit(std::span<const float> got, std::span<const float> want,
                     const char *what, int64_t rowLength) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << ": row " << i / rowLength << ", value " << i % rowLength
        << ": " << got[i] << " != " << want[i];
}

// The compiled kernels of a case: entries, then state.
struct CaseKernels {
  kf_step_fn entries, state;
};

// Runs the entries and the state kernels on the call of `count` tokens from
// position `first` of `seq`.
void runCall(const Case &test, CaseKernels kernels, const Sequence &seq,
             int64_t first, int64_t count, std::vector<float> &cache,
             int threads) {
  const int64_t w = test.spec.getLayout().getStateWidth();
  std::vector<float> values(seq.values.begin() + first * w,
                            seq.values.begin() + (first + count) * w);
  std::vector<float> gates(seq.gates.begin() + first * w,
                           seq.gates.begin() + (first + count) * w);
  std::vector<int64_t> positions(count);
  std::iota(positions.begin(), positions.end(), first);
  ASSERT_EQ(runRowStep(kernels.entries, count, 1,
                       {rowOperand(values, w), rowOperand(gates, w),
                        positionsOperand(positions), weightOperand(seq.ape),
                        weightOperand(seq.norm), weightOperand(cache)},
                       threads),
            absl::OkStatus());
  ASSERT_EQ(runRowStep(kernels.state, count, 1,
                       {rowOperand(values, w), rowOperand(gates, w),
                        positionsOperand(positions), weightOperand(cache)},
                       threads),
            absl::OkStatus());
}

// Runs `seq` through the kernels in the case's calls on `cache`, checking
// the ring after every call and the entries at the end.
void checkSequence(const Case &test, CaseKernels kernels, const Sequence &seq,
                   std::vector<float> &cache, int threads) {
  const CompressedCacheLayout layout = test.spec.getLayout();
  const int64_t w = layout.getStateWidth(), d = layout.dim;
  const int64_t slots = layout.getRingSlots();
  const std::vector<float> initial = cache;
  int64_t first = 0;
  for (int64_t count : test.calls) {
    SCOPED_TRACE(testing::Message() << "the call of positions " << first
                                    << " .. " << first + count - 1);
    runCall(test, kernels, seq, first, count, cache, threads);
    if (testing::Test::HasFatalFailure())
      return;
    first += count;
    // The ring: the last S positions' projections.
    for (int64_t q = std::max<int64_t>(0, first - slots); q < first; ++q)
      for (auto [ring, projections] :
           {std::pair(layout.getValuesOffset(), &seq.values),
            std::pair(layout.getGatesOffset(), &seq.gates)}) {
        std::span<const float> slot(cache.data() + ring / 4 + (q % slots) * w,
                                    w);
        expectBitForBit(slot,
                        std::span<const float>(*projections).subspan(q * w, w),
                        "the ring's projections", w);
        if (testing::Test::HasFatalFailure())
          return;
      }
  }
  // The entries built, and the rows after them as they were.
  const int64_t built = static_cast<int64_t>(seq.entries.size());
  expectBitForBit(std::span<const float>(cache).first(built), seq.entries,
                  "the entries", d);
  expectBitForBit(
      std::span<const float>(cache).subspan(built, layout.capacity * d - built),
      std::span<const float>(initial).subspan(built,
                                              layout.capacity * d - built),
      "the entry rows not built", d);
}

void checkCase(const Case &test, CaseKernels kernels) {
  SCOPED_TRACE(test.spec.describe());
  const auto &[seq, other] = sequencesOf(test);
  std::mt19937 rng(3);
  std::vector<float> initial(test.spec.getLayout().getBytes() / 4);
  for (float &v : initial)
    v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<float> cache = initial;
    checkSequence(test, kernels, seq, cache, threads);
    if (testing::Test::HasFatalFailure())
      return;
    // A new sequence on the first one's state.
    SCOPED_TRACE("the second sequence");
    checkSequence(test, kernels, other, cache, threads);
    if (testing::Test::HasFatalFailure())
      return;
  }
}

// Compiles the cases' kernels for `isa` in one module and checks each case.
void checkCases(KernelIsa isa, const std::vector<Case> &cases) {
  std::vector<std::string> symbols;
  for (const Case &test : cases) {
    symbols.push_back(test.spec.getSymbolName());
    symbols.push_back(stateSpecOf(test.spec).getSymbolName());
  }
  const target::TargetInfo target = isaTestTarget(isa);
  llvm::Expected<CompiledStepKernels> compiled = compileStepKernels(
      target,
      [&](mlir::ModuleOp module) -> llvm::Error {
        for (const Case &test : cases) {
          if (!module.lookupSymbol(test.spec.getSymbolName()))
            if (llvm::Expected<mlir::func::FuncOp> fn =
                    buildCompressEntriesKernel(module, test.spec, target);
                !fn)
              return fn.takeError();
          const CompressStateKernelSpec state = stateSpecOf(test.spec);
          if (!module.lookupSymbol(state.getSymbolName()))
            if (llvm::Expected<mlir::func::FuncOp> fn =
                    buildCompressStateKernel(module, state, target);
                !fn)
              return fn.takeError();
        }
        return llvm::Error::success();
      },
      symbols);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  for (size_t i = 0; i < cases.size() && !testing::Test::HasFatalFailure(); ++i)
    checkCase(cases[i],
              {compiled->kernels[2 * i], compiled->kernels[2 * i + 1]});
}

TEST_P(CompressKernelOnIsa, TinyModelEqualsGoldenBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  // Ratio 4: from a call ending mid-block, one ending at a block's end
  // (position 3), and one of position 0 alone; then calls of 1, 1, 2 (to a
  // block's end), 3, 5, more than S, and 12.
  const std::vector<int64_t> shortCalls = {6, 1, 1, 3, 5, 9, 1, 2, 4, 12};
  checkCases(
      GetParam(),
      {{entriesSpec(4, true, 192, 64, EntryPost::Fp8, kf::Format::BF16, 16),
        shortCalls},
       {entriesSpec(4, true, 128, 64, EntryPost::HadamardFp4, kf::Format::BF16,
                    16),
        {4, 1, 1, 1, 1, 2, 6, 9, 3, 1, 11}},
       {entriesSpec(4, true, 192, 64, EntryPost::Fp8, kf::Format::BF16, 16),
        {1, 3, 2, 2, 8, 1, 9, 1}},
       // Ratio 128: a first call past one block's end, single tokens, a
       // call to a block's end (255), one past the next (383).
       {entriesSpec(128, false, 192, 64, EntryPost::Fp8, kf::Format::BF16, 4),
        {130, 1, 1, 124, 1, 130, 2}}});
}

TEST_P(CompressKernelOnIsa, FullModelDimsEqualGoldenBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  checkCases(
      GetParam(),
      {{entriesSpec(4, true, 512, 64, EntryPost::Fp8, kf::Format::BF16, 8),
        {7, 1, 2, 6, 1, 5}},
       {entriesSpec(4, true, 128, 64, EntryPost::HadamardFp4, kf::Format::BF16,
                    8),
        {2, 2, 9, 1, 8}},
       {entriesSpec(128, false, 512, 64, EntryPost::Fp8, kf::Format::BF16, 3),
        {129, 127, 1, 130}}});
}

TEST_P(CompressKernelOnIsa, OtherShapesEqualGoldenBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  checkCases(
      GetParam(),
      {{entriesSpec(4, true, 192, 64, EntryPost::None, kf::Format::F16, 16),
        {6, 1, 1, 3, 5, 9, 1}},
       {entriesSpec(4, false, 192, 64, EntryPost::Fp8, kf::Format::F32, 12),
        {6, 1, 1, 3, 5, 9, 1}},
       {entriesSpec(2, true, 80, 16, EntryPost::Fp8, kf::Format::F16, 20),
        {1, 1, 3, 5, 2, 1, 4}},
       {entriesSpec(1, true, 64, 32, EntryPost::HadamardFp4, kf::Format::F32,
                    16),
        {1, 1, 5, 3}},
       {entriesSpec(8, false, 48, 16, EntryPost::None, kf::Format::BF16, 4),
        {3, 5, 1, 7, 15}}});
}

// A block past the capacity (which the runtime refuses) writes no entry.
TEST_P(CompressKernelOnIsa, WritesNothingPastTheCapacity) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const Case test{entriesSpec(4, true, 128, 64, EntryPost::HadamardFp4,
                              kf::Format::BF16, 2),
                  {4}};
  const target::TargetInfo target = isaTestTarget(GetParam());
  llvm::Expected<CompiledStepKernels> compiled =
      compileStepKernels<CompressEntriesKernelSpec>(target, {test.spec},
                                                    buildCompressEntriesKernel);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const Sequence &seq = sequencesOf(test).first;
  const int64_t w = test.spec.getLayout().getStateWidth();
  std::vector<float> cache(test.spec.getLayout().getBytes() / 4, 1.5f);
  const std::vector<float> initial = cache;
  std::vector<float> values(seq.values.begin(), seq.values.begin() + 4 * w);
  std::vector<float> gates(seq.gates.begin(), seq.gates.begin() + 4 * w);
  std::vector<int64_t> positions = {8, 9, 10, 11}; // entry 2 of 2
  ASSERT_EQ(runRowStep(compiled->kernels[0], 4, 1,
                       {rowOperand(values, w), rowOperand(gates, w),
                        positionsOperand(positions), weightOperand(seq.ape),
                        weightOperand(seq.norm), weightOperand(cache)},
                       2),
            absl::OkStatus());
  expectBitForBit(cache, initial, "the cache", test.spec.dim);
}

TEST(CompressKernel, RefusesBadSpecs) {
  auto error = [](CompressEntriesKernelSpec spec) {
    return llvm::toString(verifyCompressEntriesKernel(spec));
  };
  const CompressEntriesKernelSpec good =
      entriesSpec(4, true, 512, 64, EntryPost::Fp8, kf::Format::BF16, 1024);
  EXPECT_FALSE(static_cast<bool>(verifyCompressEntriesKernel(good)));
  CompressEntriesKernelSpec bad = good;
  bad.ratio = 0;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 0, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]: expected a ratio in "
            "[1, 1024]");
  bad = good;
  bad.dim = 500;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 500, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]: expected D a positive "
            "multiple of 16 up to 4096");
  bad = good;
  bad.dim = 64;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 64, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]: expected the rope dim "
            "a positive multiple of 16 below D");
  bad = good;
  bad.frequencies.pop_back();
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]: expected 32 "
            "frequencies, got 31");
  bad = good;
  bad.frequencies[3] = INFINITY;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]: expected finite "
            "frequencies, got f_3 = inf");
  bad = good;
  bad.eps = -1.0f;
  EXPECT_EQ(
      error(bad),
      "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
      "eps = -1, fp8, bf16, capacity = 1024]: expected a finite eps >= 0");
  bad = entriesSpec(4, true, 192, 32, EntryPost::Fp8, kf::Format::BF16, 8);
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 192, rope = 32, "
            "eps = 1e-06, fp8, bf16, capacity = 8]: expected D - rope dim a "
            "multiple of the fp8 block (64)");
  bad = entriesSpec(4, true, 192, 64, EntryPost::HadamardFp4, kf::Format::BF16,
                    8);
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 192, rope = 64, "
            "eps = 1e-06, hadamard_fp4, bf16, capacity = 8]: expected D a "
            "power of two, at least the fp4 block (32)");
  bad = good;
  bad.element = kf::Format::Q8_0;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, q8_0, capacity = 1024]: expected an f32, f16 "
            "or bf16 element");
  bad = good;
  bad.capacity = 0;
  EXPECT_EQ(error(bad),
            "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 0]: expected a capacity of at "
            "least one entry whose bytes fit an i64");
  EXPECT_FALSE(static_cast<bool>(verifyCompressEntriesKernel(
      entriesSpec(128, false, 512, 64, EntryPost::None, kf::Format::F32, 1))));

  EXPECT_FALSE(
      static_cast<bool>(verifyCompressStateKernel({4, true, 1024, 1024})));
  EXPECT_EQ(llvm::toString(verifyCompressStateKernel({4, true, 48, 1024})),
            "compress_state kernel [ratio = 4, overlap, w = 48, capacity = "
            "1024]: expected w a positive multiple of 32 up to 8192");
  EXPECT_EQ(llvm::toString(verifyCompressStateKernel({0, false, 512, 1024})),
            "compress_state kernel [ratio = 0, w = 512, capacity = 1024]: "
            "expected a ratio in [1, 1024]");
  EXPECT_EQ(llvm::toString(verifyCompressStateKernel({128, false, 512, 0})),
            "compress_state kernel [ratio = 128, w = 512, capacity = 0]: "
            "expected a capacity of at least one entry whose bytes fit an i64");
}

TEST(CompressKernel, NamesEachVariantApart) {
  const CompressEntriesKernelSpec spec =
      entriesSpec(4, true, 512, 64, EntryPost::Fp8, kf::Format::BF16, 1024);
  const std::string name = spec.getSymbolName();
  EXPECT_EQ(name.rfind("kf_compress_entries_r4_o_d512_rd64_f", 0), 0u) << name;
  EXPECT_TRUE(llvm::StringRef(name).ends_with("_e358637bd_fp8_bf16_c1024"))
      << name;
  EXPECT_EQ(name.size(),
            std::string("kf_compress_entries_r4_o_d512_rd64_f").size() + 16 +
                std::string("_e358637bd_fp8_bf16_c1024").size())
      << name;
  EXPECT_EQ(spec.describe(),
            "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, "
            "eps = 1e-06, fp8, bf16, capacity = 1024]");
  auto differs = [&](auto change) {
    CompressEntriesKernelSpec other = spec;
    change(other);
    return other.getSymbolName() != name;
  };
  EXPECT_TRUE(differs([](auto &s) { s.ratio = 128; }));
  EXPECT_TRUE(differs([](auto &s) { s.overlap = false; }));
  EXPECT_TRUE(differs([](auto &s) { s.dim = 448; }));
  EXPECT_TRUE(differs([](auto &s) { s.frequencies[0] *= 2; }));
  EXPECT_TRUE(differs([](auto &s) { s.eps = 1e-5f; }));
  EXPECT_TRUE(differs([](auto &s) { s.post = EntryPost::None; }));
  EXPECT_TRUE(differs([](auto &s) { s.element = kf::Format::F16; }));
  EXPECT_TRUE(differs([](auto &s) { s.capacity = 512; }));

  const CompressStateKernelSpec state = stateSpecOf(spec);
  EXPECT_EQ(state.getSymbolName(), "kf_compress_state_r4_o_w1024_c1024");
  EXPECT_EQ(state.describe(), "compress_state kernel [ratio = 4, overlap, w = "
                              "1024, capacity = 1024]");
  EXPECT_EQ(CompressStateKernelSpec({128, false, 512, 8}).getSymbolName(),
            "kf_compress_state_r128_w512_c8");

  // The layout: entries, then the ring's values and gates.
  const CompressedCacheLayout layout = spec.getLayout();
  EXPECT_EQ(layout.getStateWidth(), 1024);
  EXPECT_EQ(layout.getRingSlots(), 8);
  EXPECT_EQ(layout.getValuesOffset(), 4 * 1024 * 512);
  EXPECT_EQ(layout.getGatesOffset(), 4 * 1024 * 512 + 4 * 8 * 1024);
  EXPECT_EQ(layout.getBytes(), 4 * 1024 * 512 + 2 * 4 * 8 * 1024);
  EXPECT_EQ(state.getLayout().getBytes(), layout.getBytes());
}

// A kernel calls nothing: no libm's exp, sin, cos or sqrt, no memcpy for
// the copies, no library half conversion, on the portable level and
// AVX-512's.
TEST(CompressKernel, CallsNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"}, {"kf_compress_state_r4_o_w1024_c64"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(static_cast<bool>(buildCompressEntriesKernel(
            module,
            entriesSpec(4, true, 512, 64, EntryPost::Fp8, kf::Format::F16, 64),
            target)));
        ASSERT_TRUE(static_cast<bool>(buildCompressEntriesKernel(
            module,
            entriesSpec(4, true, 128, 64, EntryPost::HadamardFp4,
                        kf::Format::BF16, 64),
            target)));
        ASSERT_TRUE(static_cast<bool>(
            buildCompressStateKernel(module, {4, true, 1024, 64}, target)));
      });
}

} // namespace
} // namespace kf::codegen
