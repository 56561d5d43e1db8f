// The compiled kf.sparse_attention against the golden's sparseAttention at
// Precision::Model, called as the interpreter's kf.sparse_attention calls it
// (one bank of the window rows then the entries, the entries' indices moved
// past the window's, -1 kept), run as a plan step by the runtime's executor
// on 1 and 2 threads, per x86 ISA level.
//
// Shapes: the tiny model's (H = 8, d = 192, window 16) with no entries
// (sliding-window layers), the indexer's 8 chosen entries and 40 visible
// ones, the window a decode ring or a prefill's fresh rows (positions 0 to
// 19), 4 heads per item (the default) and 1, 2 and 8; the full model's
// (H = 64, d = 512, window 128, 512 entries, 8 heads per item) on 4 tokens,
// and without entries; odd ones (H = 1, 3, 6, 16; d = 16 to 64; only
// entries; 1 to 64 columns, so the blocks of 16 keys end anywhere).
// Tokens: the window before position 0 (-1 at the start) and no entry
// visible; every column valid; -1 first, last and anywhere between in both
// lists, duplicate entries; a single key; no key at all (+0s, whatever the
// sink); only entries; logits of ~1e6 and of ~1e36 (every exp but the
// largest's 0; none overflows) and all of ~-2000 (only the sink's term
// counts, or with a -inf sink equal probabilities); logits of ±inf (an fp32
// dot overflowing: NaN where the golden gives NaN); and three whose results
// depend on the order of an fp64 sum, so that only the golden's order
// passes: dots of (2^60, x, -2^60) against (1, k, 1); outputs summing keys
// of ±2^60 under equal probabilities; and S, crafted (findExpSumOrderDots)
// so that its fp32 value, and with it a probability's bf16, differs when
// the exps are added in another order. The heads' sinks: moderate,
// dominating (30: probabilities ~1e-13; 100: in fp32's subnormals, or 0),
// -inf (no mass), -30. Queries and bank rows are bf16 values, as the
// model's are.
//
// Tolerance: none; every element is compared bit for bit, but a NaN, which
// equals any NaN (the golden's comes out of glibc's exp and scalar code,
// the kernel's out of vector code; a NaN's payload and sign are no part of
// the contract). The kernel runs the golden's IEEE operations in its order
// (SparseAttentionEmitter.cpp): every product of two floats is exact in
// fp64, so fusing it with its sum changes nothing. The one operation that
// is not the golden's is e^x (emitExp, fdlibm's algorithm, where the golden
// calls glibc's exp), which reaches the results only as fp32(e^x) of a
// float x <= 0 (or NaN): those equal glibc's for every float in [-110, 0]
// (HcKernelTest.cpp: ExpTermsEqualGolden and the exhaustive check it
// cites), and below both are 0 (e^x < 2^-150 rounds to fp32 0, and so does
// emitExp's e^-708 below its clamp). So every term, and then every sum,
// equals the golden's. With a libm other than glibc an fp32 term could move
// by one ulp where its fp64 value lies within ~1.5 fp64 ulps of an fp32
// rounding boundary (about 2^-27 of them).
#include "StepKernelTestUtil.h"

#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/SparseAttentionKernel.h"
#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "TestTarget.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(SparseAttentionKernelOnIsa);

constexpr float kInf = std::numeric_limits<float>::infinity();
// What the result holds before the kernel runs: any element it leaves shows.
constexpr float kUnwritten = -1234.5f;
// The heads' sinks, head h taking kSinks[h % 8]: 30 dominates every logit
// of unit scale (probabilities ~1e-13), 100 every logit but Large's and
// Huge's (probabilities in fp32's subnormals, or 0), -inf takes no mass.
constexpr float kSinks[] = {0.5f,   -1.25f, 30.0f,  -kInf,
                            100.0f, 3.5f,   -30.0f, 12.0f};

// What a token attends to and how its query looks.
enum class Kind {
  Prefix,      // the window before position 0, no entry visible yet
  Full,        // every column valid
  Holes,       // -1 first, last and anywhere between; duplicate entries
  Single,      // one window row
  None,        // nothing: zeros
  EntriesOnly, // no window row, every entry
  Large,       // logits of ~1e6
  Huge,        // logits of ~1e36
  Infinite,    // fp32 dots that overflow: logits of ±inf
  Negative,    // every logit ~ -2000: only the sink counts, unless -inf
  DotOrder,    // q = (2^60, x, -2^60, ...) against keys (1, k, 1, ...)
  OutputOrder, // q = 0: equal probabilities over keys of ±2^60
  ExpSumOrder, // exps whose fp32(S) depends on the order of S's terms
};
constexpr Kind kAllKinds[] = {
    Kind::Prefix,     Kind::Full,        Kind::Holes,    Kind::Single,
    Kind::None,       Kind::EntriesOnly, Kind::Large,    Kind::Huge,
    Kind::Infinite,   Kind::Negative,    Kind::DotOrder, Kind::OutputOrder,
    Kind::ExpSumOrder};

// One call's operands. The window is a ring of rows (a weight, read whole)
// or, `fresh`, the call's own rows [T, d] (a run buffer) with token t at
// position t.
struct Inputs {
  int64_t tokens = 0;
  std::vector<Kind> kinds; // of each token
  bool fresh = false;
  std::vector<float> query;           // [T, H, d]
  std::vector<float> window;          // [W, d]
  std::vector<int32_t> windowIndices; // [T, Wi]
  std::vector<float> entries;         // [E, d]
  std::vector<int32_t> entryIndices;  // [T, Ei]
  std::vector<float> sinks;           // [H]
  bool expSumOrderCrafted = false;    // ExpSumOrder's exps were found
};

float bf16Normal(std::mt19937 &rng, float scale = 1.0f) {
  std::normal_distribution<float> unit(0.0f, 1.0f);
  return reference::roundBf16(unit(rng) * scale);
}

// Bank rows of bf16 values whose columns 0 and 2 are 1 (DotOrder's keys)
// and whose last column is ±2^60 on every fifth row and the next
// (OutputOrder's terms; no query has a value there).
std::vector<float> bankRows(std::mt19937 &rng, int64_t rows, int64_t d) {
  std::vector<float> bank(rows * d);
  for (int64_t r = 0; r < rows; ++r) {
    float *row = bank.data() + r * d;
    for (int64_t i = 0; i < d; ++i)
      row[i] = bf16Normal(rng);
    row[0] = row[2] = 1.0f;
    if (r % 5 == 0)
      row[d - 1] = 0x1p60f;
    else if (r % 5 == 1)
      row[d - 1] = -0x1p60f;
  }
  return bank;
}

// Token t's query [H, d] of kind `kind`.
void fillQuery(Kind kind, std::mt19937 &rng, std::span<float> q, int64_t d) {
  const float scale = kind == Kind::Large      ? 0x1p20f
                      : kind == Kind::Huge     ? 0x1p118f
                      : kind == Kind::Infinite ? 0x1p127f
                                               : 1.0f;
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = kind == Kind::OutputOrder || kind == Kind::ExpSumOrder
               ? 0.0f
               : bf16Normal(rng, scale);
  for (size_t h = 0; h < q.size() / d; ++h) {
    float *head = q.data() + h * d;
    head[d - 1] = 0.0f;
    if (kind == Kind::Negative && d >= 3)
      head[0] = head[2] = -0x1p14f;
    if (kind == Kind::DotOrder && d >= 3) {
      head[0] = 0x1p60f;
      head[1] = bf16Normal(rng, 300.0f);
      head[2] = -0x1p60f;
    }
    if (kind == Kind::ExpSumOrder && d >= 6)
      head[3] = head[4] = head[5] = 1.0f;
  }
}

// The golden's fp32(e^l).
float expF32(float l) {
  return static_cast<float>(std::exp(static_cast<double>(l)));
}

// The golden's fp32(S) for a head of sink -inf whose largest logit is 0,
// the terms of the logits `l` added in key order or, `reversed`, in the
// opposite.
float expTotal(std::span<const float> l, bool reversed) {
  double sum = 0; // fp32(e^(-inf - 0))
  for (size_t j = 0; j < l.size(); ++j)
    sum += expF32(l[reversed ? l.size() - 1 - j : j]);
  return static_cast<float>(sum);
}

// ExpSumOrder's dots (logit = scale · dot), for keys a, c, b and `smalls`
// keys t in that order: a's 0 (e = 1, the largest logit); c's with e_c in
// (0.3, 0.5) whose probability bf16(e_c / fp32(S)) moves by a bf16 ulp when
// fp32(S) moves across the fp32 midpoint just above 1 + e_c; b's with e_b
// just short of that midpoint; t's with e_t of a few fp64 ulps of 1, whose
// sum crosses the rest of the way when the golden adds each to S ~ 1, each
// rounded, but not when they come first (the reversed order), or the other
// way round. So with sink -inf the outputs tell S's order apart. None where
// no such dots are near.
std::optional<std::array<float, 4>> findExpSumOrderDots(float scale,
                                                        int64_t smalls) {
  if (smalls < 1)
    return std::nullopt;
  constexpr double kUlp = 0x1p-52;
  float dotC = static_cast<float>(std::log(0.3) / scale);
  for (int i = 0; i < (1 << 20); ++i, dotC = std::nextafter(dotC, kInf)) {
    const float lc = scale * dotC, ec = expF32(lc);
    if (ec >= 0.5f)
      break;
    const double base = 1.0 + ec; // exact
    float below = static_cast<float>(base);
    if (below > base)
      below = std::nextafter(below, 0.0f);
    const float above = std::nextafter(below, kInf);
    const double gap = (static_cast<double>(below) + above) / 2 - base;
    if (gap <= 0 ||
        reference::roundBf16(ec / below) == reference::roundBf16(ec / above))
      continue;
    // The largest e_b below the gap.
    float dotB = static_cast<float>(std::log(gap) / scale);
    while (expF32(scale * dotB) >= gap)
      dotB = std::nextafter(dotB, -kInf);
    const float lb = scale * dotB;
    const double rest = gap - expF32(lb);
    for (int j = 0; j < 64; ++j) {
      const double t = std::max(rest / smalls * (0.25 + j / 16.0), kUlp / 4);
      const float dotT = static_cast<float>(std::log(t) / scale);
      std::vector<float> l = {0.0f, lc, lb};
      l.resize(3 + smalls, scale * dotT);
      if (reference::roundBf16(ec / expTotal(l, false)) !=
          reference::roundBf16(ec / expTotal(l, true)))
        return std::array<float, 4>{0.0f, dotC, dotB, dotT};
    }
  }
  return std::nullopt;
}

// Three bf16 values whose fp64 sum, in order, is v exactly (8 of v's 24
// significant bits each).
std::array<float, 3> splitToBf16(float v) {
  auto truncate = [](float x) {
    return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xffff0000u);
  };
  const float first = truncate(v), second = truncate(v - first);
  return {first, second, v - first - second};
}

// Distinct random rows of [0, rows), as many as `out` holds (rows at least
// that many), or any rows where `repeat`.
void pickRows(std::mt19937 &rng, int64_t rows, bool repeat,
              std::span<int32_t> out) {
  std::vector<int32_t> all(rows);
  for (int64_t r = 0; r < rows; ++r)
    all[r] = static_cast<int32_t>(r);
  std::shuffle(all.begin(), all.end(), rng);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = repeat ? all[rng() % rows] : all[i % all.size()];
}

// -1 at the first and last columns and at about a third of the others.
void punchHoles(std::mt19937 &rng, std::span<int32_t> row) {
  for (size_t i = 0; i < row.size(); ++i)
    if (i == 0 || i + 1 == row.size() || rng() % 3 == 0)
      row[i] = -1;
}

// A ring of Wi rows (or fresh rows) and E entry rows; token t of kinds[t].
Inputs makeInputs(const SparseAttentionKernelSpec &spec,
                  llvm::ArrayRef<Kind> kinds, bool fresh, int64_t entryRows) {
  const int64_t tokens = static_cast<int64_t>(kinds.size());
  const int64_t d = spec.dim, wi = spec.windowWidth, ei = spec.entryWidth;
  std::mt19937 rng(static_cast<unsigned>(spec.heads * 7919 + d * 31 + wi +
                                         ei * 131 + tokens + fresh));
  Inputs in;
  in.tokens = tokens;
  in.kinds = kinds.vec();
  in.fresh = fresh;
  const int64_t windowRows = fresh ? tokens : std::max<int64_t>(wi, 4);
  in.window = bankRows(rng, windowRows, d);
  in.entries = bankRows(rng, std::max<int64_t>(entryRows, 4), d);
  // ExpSumOrder's keys a, c, b, t: rows 0 to 3 of both banks (columns 3 to
  // 5; other tokens see large values there, which do them no harm).
  const bool expSumOrder =
      llvm::is_contained(kinds, Kind::ExpSumOrder) && !fresh && d >= 6;
  if (std::optional<std::array<float, 4>> dots =
          expSumOrder ? findExpSumOrderDots(spec.scale, wi + ei - 3)
                      : std::nullopt) {
    in.expSumOrderCrafted = true;
    for (int64_t r = 0; r < 4; ++r) {
      const std::array<float, 3> parts = splitToBf16((*dots)[r]);
      for (std::vector<float> *bank : {&in.window, &in.entries})
        std::copy(parts.begin(), parts.end(), bank->begin() + r * d + 3);
    }
  }
  in.query.resize(tokens * spec.heads * d);
  in.windowIndices.assign(tokens * wi, -1);
  in.entryIndices.assign(tokens * ei, -1);
  for (int64_t h = 0; h < spec.heads; ++h)
    in.sinks.push_back(kSinks[h % 8]);
  for (int64_t t = 0; t < tokens; ++t) {
    const Kind kind = kinds[t];
    fillQuery(kind, rng,
              std::span(in.query).subspan(t * spec.heads * d, spec.heads * d),
              d);
    std::span<int32_t> w = std::span(in.windowIndices).subspan(t * wi, wi);
    std::span<int32_t> e = std::span(in.entryIndices).subspan(t * ei, ei);
    if (fresh) {
      // The prefill's convention: the window of position t, row = position.
      if (wi > 0)
        reference::windowPositions(t, w);
    } else {
      switch (kind) {
      case Kind::Prefix:
        // Position p < Wi - 1 of a ring of Wi slots: slot = position.
        if (wi > 0)
          reference::windowPositions(t % std::max<int64_t>(wi - 1, 1), w);
        break;
      case Kind::Holes:
        pickRows(rng, windowRows, /*repeat=*/false, w);
        punchHoles(rng, w);
        break;
      case Kind::Single:
        if (wi > 0)
          w[wi / 2] = static_cast<int32_t>(rng() % windowRows);
        break;
      case Kind::None:
      case Kind::EntriesOnly:
        break;
      case Kind::ExpSumOrder:
        // Keys a, c, b, then t: the first three columns, then the rest.
        for (int64_t c = 0; c < wi; ++c)
          w[c] = static_cast<int32_t>(std::min<int64_t>(c, 3));
        break;
      default:
        pickRows(rng, windowRows, /*repeat=*/false, w);
        break;
      }
    }
    switch (kind) {
    case Kind::Prefix:
    case Kind::Single:
    case Kind::None:
      break;
    case Kind::Holes:
      pickRows(rng, entryRows, /*repeat=*/true, e);
      punchHoles(rng, e);
      break;
    case Kind::ExpSumOrder:
      for (int64_t c = 0; c < ei; ++c)
        e[c] = static_cast<int32_t>(std::min<int64_t>(wi + c, 3));
      break;
    default:
      pickRows(rng, entryRows, /*repeat=*/kind == Kind::EntriesOnly, e);
      break;
    }
  }
  return in;
}

// The interpreter's execute(SparseAttentionOp).
std::vector<float> expected(const SparseAttentionKernelSpec &spec,
                            const Inputs &in) {
  const int64_t d = spec.dim, qWidth = spec.heads * d;
  const int64_t windowRows = static_cast<int64_t>(in.window.size()) / d;
  std::vector<float> bank = in.window;
  if (spec.entryWidth > 0)
    bank.insert(bank.end(), in.entries.begin(), in.entries.end());
  std::vector<float> out(in.tokens * qWidth);
  std::vector<int32_t> idx;
  for (int64_t t = 0; t < in.tokens; ++t) {
    idx.clear();
    for (int64_t c = 0; c < spec.windowWidth; ++c)
      idx.push_back(in.windowIndices[t * spec.windowWidth + c]);
    for (int64_t c = 0; c < spec.entryWidth; ++c) {
      const int32_t i = in.entryIndices[t * spec.entryWidth + c];
      idx.push_back(i < 0 ? -1 : static_cast<int32_t>(windowRows + i));
    }
    reference::sparseAttention(
        std::span(in.query).subspan(t * qWidth, qWidth), bank, in.sinks, idx,
        static_cast<int>(spec.heads), static_cast<int>(d), spec.scale,
        std::span(out).subspan(t * qWidth, qWidth));
  }
  return out;
}

StepOperand intRows(std::vector<int32_t> &values, int64_t perRow) {
  return {
      std::span(reinterpret_cast<uint8_t *>(values.data()), 4 * values.size()),
      4 * perRow};
}

// Runs `kernel` on `in` on 1 and 2 threads and compares with the golden.
void checkInputs(const SparseAttentionKernelSpec &spec, kf_step_fn kernel,
                 Inputs in) {
  const std::vector<float> want = expected(spec, in);
  const int64_t qWidth = spec.heads * spec.dim;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<float> got(want.size(), kUnwritten);
    std::vector<StepOperand> operands = {rowOperand(in.query, qWidth)};
    operands.push_back(in.fresh ? rowOperand(in.window, spec.dim)
                                : weightOperand(in.window));
    operands.push_back(intRows(in.windowIndices, spec.windowWidth));
    if (spec.entryWidth > 0) {
      operands.push_back(weightOperand(in.entries));
      operands.push_back(intRows(in.entryIndices, spec.entryWidth));
    }
    operands.push_back(weightOperand(in.sinks));
    operands.push_back(rowOperand(got, qWidth));
    ASSERT_EQ(runRowStep(kernel, in.tokens, spec.getItemsPerToken(), operands,
                         threads),
              absl::OkStatus());
    int64_t mismatches = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]) && std::isnan(got[i]))
        continue;
      if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i]))
        continue;
      const int64_t t = static_cast<int64_t>(i) / qWidth;
      ADD_FAILURE() << "token " << t << " (kind "
                    << static_cast<int>(in.kinds[t]) << "), head "
                    << (i % qWidth) / spec.dim << ", column " << i % spec.dim
                    << ": " << got[i] << " != " << want[i];
      if (++mismatches == 8)
        return;
    }
  }
}

// The tokens of a ring-window call: every kind, then every kind again with
// other values.
std::vector<Kind> everyKindTwice() {
  std::vector<Kind> kinds(std::begin(kAllKinds), std::end(kAllKinds));
  kinds.insert(kinds.end(), std::begin(kAllKinds), std::end(kAllKinds));
  return kinds;
}

constexpr float kTinyScale = 0.0721687824f; // 192^-0.5
constexpr float kFullScale = 0.0441941738f; // 512^-0.5

TEST_P(SparseAttentionKernelOnIsa, TinyModelEqualsGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const int64_t group = SparseAttentionKernelSpec::defaultHeadsPerItem(8);
  const std::vector<SparseAttentionKernelSpec> specs = {
      {8, 192, 16, 0, kTinyScale, group},   // sliding window
      {8, 192, 16, 8, kTinyScale, group},   // the indexer's top 8
      {8, 192, 16, 40, kTinyScale, group}}; // 40 visible entries
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildSparseAttentionKernel,
      [&](const SparseAttentionKernelSpec &spec, kf_step_fn kernel) {
        {
          SCOPED_TRACE("a ring");
          Inputs ring = makeInputs(spec, everyKindTwice(), /*fresh=*/false,
                                   std::max<int64_t>(spec.entryWidth, 12));
          EXPECT_TRUE(ring.expSumOrderCrafted);
          checkInputs(spec, kernel, std::move(ring));
        }
        {
          // A prefill of 20 tokens from position 0: the first 15 windows
          // start with -1.
          SCOPED_TRACE("fresh rows");
          std::vector<Kind> kinds(20, Kind::Full);
          kinds[3] = Kind::Holes;
          kinds[17] = Kind::Large;
          checkInputs(spec, kernel,
                      makeInputs(spec, kinds, /*fresh=*/true,
                                 std::max<int64_t>(spec.entryWidth, 12)));
        }
      });
}

TEST_P(SparseAttentionKernelOnIsa, TinyModelHeadGroupsEqualGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<SparseAttentionKernelSpec> specs = {
      {8, 192, 16, 8, kTinyScale, 1},
      {8, 192, 16, 8, kTinyScale, 2},
      {8, 192, 16, 8, kTinyScale, 8}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildSparseAttentionKernel,
      [&](const SparseAttentionKernelSpec &spec, kf_step_fn kernel) {
        Inputs ring = makeInputs(spec, everyKindTwice(), /*fresh=*/false, 12);
        EXPECT_TRUE(ring.expSumOrderCrafted);
        checkInputs(spec, kernel, std::move(ring));
      });
}

TEST_P(SparseAttentionKernelOnIsa, FullModelEqualsGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const int64_t group = SparseAttentionKernelSpec::defaultHeadsPerItem(64);
  ASSERT_EQ(group, 8);
  const std::vector<SparseAttentionKernelSpec> specs = {
      {64, 512, 128, 512, kFullScale, group},
      {64, 512, 128, 0, kFullScale, group}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildSparseAttentionKernel,
      [&](const SparseAttentionKernelSpec &spec, kf_step_fn kernel) {
        Inputs in = makeInputs(
            spec, {Kind::Full, Kind::Holes, Kind::Prefix, Kind::ExpSumOrder},
            /*fresh=*/false, 600);
        EXPECT_TRUE(in.expSumOrderCrafted);
        checkInputs(spec, kernel, std::move(in));
      });
}

TEST_P(SparseAttentionKernelOnIsa, OddShapesEqualGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<SparseAttentionKernelSpec> specs = {
      {3, 16, 5, 0, 0.25f, 1},  {3, 16, 5, 3, 0.25f, 3},
      {2, 32, 0, 20, 0.5f, 1},  {4, 48, 17, 0, 0.125f, 2},
      {6, 16, 15, 1, 1.0f, 3},  {1, 64, 31, 33, 0.125f, 1},
      {16, 32, 16, 16, 0.2f, 8}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildSparseAttentionKernel,
      [&](const SparseAttentionKernelSpec &spec, kf_step_fn kernel) {
        checkInputs(spec, kernel,
                    makeInputs(spec, everyKindTwice(), /*fresh=*/false,
                               std::max<int64_t>(spec.entryWidth, 7)));
      });
}

TEST(SparseAttentionKernel, DefaultHeadsPerItem) {
  // At least two items per token where H > 1, at most 8 heads.
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(64), 8);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(128), 8);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(16), 8);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(12), 6);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(8), 4);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(6), 3);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(3), 1);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(2), 1);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(1), 1);
  EXPECT_EQ(SparseAttentionKernelSpec::defaultHeadsPerItem(17), 1);
}

TEST(SparseAttentionKernel, RefusesBadSpecs) {
  EXPECT_EQ(
      llvm::toString(verifySparseAttentionKernel({0, 512, 128, 512, 0.5f, 1})),
      "sparse_attention kernel [H = 0, d = 512, window = 128, entries "
      "= 512, heads per item = 1, scale = 0.5]: expected at least one "
      "head");
  EXPECT_EQ(
      llvm::toString(verifySparseAttentionKernel({64, 500, 128, 512, 0.5f, 8})),
      "sparse_attention kernel [H = 64, d = 500, window = 128, entries "
      "= 512, heads per item = 8, scale = 0.5]: expected d a positive "
      "multiple of 16");
  EXPECT_EQ(
      llvm::toString(verifySparseAttentionKernel({64, 512, -1, 512, 0.5f, 8})),
      "sparse_attention kernel [H = 64, d = 512, window = -1, entries "
      "= 512, heads per item = 8, scale = 0.5]: expected index widths "
      "not negative");
  EXPECT_EQ(
      llvm::toString(verifySparseAttentionKernel({64, 512, 128, 512, 0.5f, 6})),
      "sparse_attention kernel [H = 64, d = 512, window = 128, entries "
      "= 512, heads per item = 6, scale = 0.5]: expected heads per item "
      "dividing H");
  EXPECT_EQ(
      llvm::toString(verifySparseAttentionKernel({64, 512, 128, 512, 0.5f, 0})),
      "sparse_attention kernel [H = 64, d = 512, window = 128, entries "
      "= 512, heads per item = 0, scale = 0.5]: expected heads per item "
      "dividing H");
  const SparseAttentionKernelSpec tooMany{64, 512, 128, 1 << 16, 0.5f, 8};
  EXPECT_EQ(llvm::toString(verifySparseAttentionKernel(tooMany)),
            tooMany.describe() +
                ": expected at most 4194304 bytes of stack scratch, not " +
                std::to_string(getSparseAttentionScratchBytes(tooMany)));
  EXPECT_FALSE(static_cast<bool>(
      verifySparseAttentionKernel({64, 512, 128, 512, 0.5f, 8})));
  EXPECT_FALSE(static_cast<bool>(
      verifySparseAttentionKernel({64, 512, 128, 8192, 0.5f, 8})));
  EXPECT_FALSE(
      static_cast<bool>(verifySparseAttentionKernel({1, 16, 0, 0, 0.5f, 1})));
}

TEST(SparseAttentionKernel, NamesEachVariantApart) {
  const SparseAttentionKernelSpec spec{64, 512, 128, 512, kFullScale, 8};
  EXPECT_EQ(spec.getSymbolName(),
            "kf_sparse_attention_h64_d512_w128_e512_g8_s3d3504f3");
  EXPECT_EQ(spec.describe(),
            "sparse_attention kernel [H = 64, d = 512, window = 128, entries "
            "= 512, heads per item = 8, scale = 0.044194173]");
  EXPECT_EQ(spec.getItemsPerToken(), 8);
  for (const SparseAttentionKernelSpec &other :
       {SparseAttentionKernelSpec{32, 512, 128, 512, kFullScale, 8},
        SparseAttentionKernelSpec{64, 256, 128, 512, kFullScale, 8},
        SparseAttentionKernelSpec{64, 512, 64, 512, kFullScale, 8},
        SparseAttentionKernelSpec{64, 512, 128, 0, kFullScale, 8},
        SparseAttentionKernelSpec{64, 512, 128, 512, kFullScale, 4},
        SparseAttentionKernelSpec{64, 512, 128, 512, 0.5f, 8}})
    EXPECT_NE(spec.getSymbolName(), other.getSymbolName());
}

// A kernel calls nothing: e^x is emitExp's, no libm; for the portable level
// and AVX-512's.
TEST(SparseAttentionKernel, CallsNothing) {
  const SparseAttentionKernelSpec full{64, 512, 128, 512, kFullScale, 8};
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v3", "x86-64-v4"}, {full.getSymbolName()},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(static_cast<bool>(
            buildSparseAttentionKernel(module, full, target)));
        ASSERT_TRUE(static_cast<bool>(buildSparseAttentionKernel(
            module, {8, 192, 16, 0, kTinyScale, 4}, target)));
      });
}

} // namespace
} // namespace kf::codegen
