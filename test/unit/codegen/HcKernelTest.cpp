// The compiled hyper-connection ops (kf.hc_expand, kf.hc_pre, kf.hc_post,
// kf.hc_head) against the DeepSeek-V4 golden's hyper_connections.cpp (and
// the interpreter's copy for kf.hc_expand), each run as a plan step by the
// runtime's executor on 1 and 2 threads, one work item per token, per x86
// ISA level: the tiny model's D = 256 and the full model's 4096 with 4
// streams and 20 Sinkhorn iterations, and smaller shapes of other stream
// counts, iteration counts and epsilons. kf.hc_pre and kf.hc_head, whose
// mixes run a range's tokens in blocks, run on 1 to 17 tokens, and on item
// ranges cut inside blocks (kMixRuns). The tokens' streams are bf16 values
// at scales 1 and 30, all zero, so small that their mean square underflows
// fp32, 10^j apart between streams, with signed zeros, and all ones; the
// sites' weights give the mixes unit scale, with scales of 1 (sigmoids and
// softmax inside their ranges) and of hundreds (sigmoids saturated, e^-x
// beyond fp64's range, softmax terms that underflow to 0), and fn rows of
// ±2^60 that cancel on the token of ones (as post · f cancels comb[0][k] ·
// stream_0 on kf.hc_post's last token), where the small terms between them
// are kept or lost by the order of the sums: only the golden's order passes.
// kf.hc_post runs in place too; kf.hc_expand copies any bits (NaN payloads
// included).
//
// Tolerance: none; every result is compared bit for bit. kf.hc_expand
// copies. kf.hc_post's and the mixes' and stream sums' arithmetic is the
// golden's IEEE operations in its order (HcMix.cpp, HcPostEmitter.cpp). The
// one operation that is not is e^x (emitExp: fdlibm's algorithm, where the
// golden calls glibc's exp; ~1.5 fp64 ulps apart at most), which reaches the
// results only as fp32 values: the sigmoids fp32(1 / (1 + e^-x)) and the
// softmax terms fp32(e^x). Those equal the golden's for every float argument
// in [-110, 110] (checked exhaustively against glibc 2.36 offline, and on a
// sample by ExpTermsEqualGolden), and beyond it both saturate alike
// (fp32(e^x) is 0 or inf, the sigmoid 0 or 1). So given the same fp32 terms
// everything after is the golden's arithmetic, and the kernels are bit for
// bit. With another libm an fp32 term could differ, by one ulp, where its
// fp64 value lies within ~1.5 fp64 ulps of an fp32 rounding boundary (a
// chance of about 2^-27 per term); the golden's arithmetic then carries
// that ulp on.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/HcExpandKernel.h"
#include "kf/Codegen/HcHeadKernel.h"
#include "kf/Codegen/HcPostKernel.h"
#include "kf/Codegen/HcPreKernel.h"
#include "kf/Codegen/StepKernel.h"
#include "kf/deepseek_v4/reference/hyper_connections.h"
#include "kf/deepseek_v4/reference/primitives.h"

#include "TestTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(HcKernelOnIsa);

constexpr int64_t kTokens = 7;

// `tokens` tokens of mult streams of d bf16 values, token t as the file's
// comment lists the kTokens kinds for t mod kTokens; the last kind all ones.
std::vector<float> streamsOf(int64_t tokens, int64_t mult, int64_t d) {
  std::mt19937 rng(static_cast<unsigned>(mult * d));
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> s(tokens * mult * d);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < mult; ++j)
      for (int64_t i = 0; i < d; ++i) {
        float v = unit(rng);
        switch (t % kTokens) {
        case 1:
          v *= 30.0f;
          break;
        case 2:
          v = 0.0f;
          break;
        case 3:
          v *= 1e-25f;
          break;
        case 4:
          v *= std::pow(10.0f, static_cast<float>(j));
          break;
        case 5:
          if (i % 3 == 0)
            v = i % 2 ? 0.0f : -0.0f;
          break;
        case 6:
          v = 1.0f;
          break;
        default:
          break;
        }
        s[(t * mult + j) * d + i] = reference::roundBf16(v);
      }
  return s;
}

// A site's parameters: `rows` rows of fn whose mixes have unit scale on
// unit streams, Gaussian bases, and `scale`. Where `cancelling`, every
// fourth value of fn's rows is 2^60 and every other fourth -2^60: on the
// token of equal values they cancel, and the small values between them are
// lost or kept by the order of the sums, so that only the golden's order
// gives its mixes.
struct SiteWeights {
  std::vector<float> fn, base, scale;
};

SiteWeights siteWeightsOf(int64_t rows, int64_t width, std::vector<float> scale,
                          bool cancelling) {
  std::mt19937 rng(static_cast<unsigned>(rows * width));
  std::normal_distribution<float> fnDist(
      0.0f, 1.0f / std::sqrt(static_cast<float>(width)));
  std::normal_distribution<float> baseDist(0.0f, 1.0f);
  SiteWeights w{std::vector<float>(rows * width), std::vector<float>(rows),
                std::move(scale)};
  for (size_t i = 0; i < w.fn.size(); ++i) {
    w.fn[i] = fnDist(rng);
    if (cancelling && i % 2 == 0)
      w.fn[i] = i % 4 == 0 ? 0x1p60f : -0x1p60f;
  }
  for (float &v : w.base)
    v = baseDist(rng);
  return w;
}

// A site's weights: the scales of its mixes (pre, post, comb; the head's
// the first) inside the sigmoids' and the softmax's ranges, far beyond
// them, and with fn's cancelling values.
struct SiteCase {
  std::vector<float> scale;
  bool cancelling;
};
const SiteCase kSiteCases[] = {{{1.0f, 0.5f, 2.0f}, false},
                               {{300.0f, 300.0f, 800.0f}, false},
                               {{1.0f, 0.5f, 2.0f}, true}};

// Fails the test, naming the first few values, unless `got` and `want`
// hold the same bits.
void expectBitForBit(std::span<const float> got, std::span<const float> want,
                     const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int64_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i]) &&
        ++differ <= 4)
      ADD_FAILURE() << what << ", value " << i << ": " << got[i]
                    << " != " << want[i];
  EXPECT_EQ(differ, 0) << what;
}

// Token t's n values of `v`.
std::span<float> tokenRow(std::vector<float> &v, int64_t t, int64_t n) {
  return std::span(v).subspan(t * n, n);
}

// The kernels that mix (kf.hc_pre, kf.hc_head) sum a run's tokens in blocks
// of 2, 4 or 8 by ISA, a lone token alone. They run on the first `tokens`
// of kMixTokens tokens: a decode's one, a block short of tokens, whole
// blocks, whole blocks and one, and more; as a plan step on `threads`
// threads or, where `cuts` are given, by one call per range of items
// between them, as threads splitting the items there would, so that ranges
// start inside a block and end with partial blocks and lone tokens.
constexpr int64_t kMixTokens = 17;
struct MixRun {
  int64_t tokens;
  int threads;
  std::vector<int64_t> cuts;
};
const MixRun kMixRuns[] = {
    {1, 1, {}},  {1, 2, {}},   {3, 1, {}},    {3, 2, {}},          {8, 1, {}},
    {8, 2, {}},  {9, 1, {}},   {9, 2, {}},    {17, 1, {}},         {17, 2, {}},
    {9, 1, {3}}, {17, 1, {5}}, {17, 1, {11}}, {17, 1, {1, 2, 13}},
};

std::ostream &operator<<(std::ostream &os, const MixRun &run) {
  os << run.tokens << " tokens, ";
  if (run.cuts.empty())
    return os << run.threads << " threads";
  os << "items cut at";
  for (int64_t cut : run.cuts)
    os << " " << cut;
  return os;
}

// Runs `kernel` on run.tokens token rows of `operands` as `run` says.
void runMix(kf_step_fn kernel, const MixRun &run,
            std::vector<StepOperand> operands) {
  if (run.cuts.empty()) {
    ASSERT_EQ(
        runRowStep(kernel, run.tokens, 1, std::move(operands), run.threads),
        absl::OkStatus());
    return;
  }
  std::vector<void *> addresses;
  for (const StepOperand &operand : operands)
    addresses.push_back(operand.bytes.data());
  int64_t begin = 0;
  for (int64_t end : run.cuts) {
    kernel(addresses.data(), run.tokens, begin, end);
    begin = end;
  }
  kernel(addresses.data(), run.tokens, begin, run.tokens);
}

TEST_P(HcKernelOnIsa, ExpandCopiesBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<HcExpandKernelSpec> specs = {
      {4, 256}, {4, 4096}, {1, 16}, {3, 48}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildHcExpandKernel,
      [&](const HcExpandKernelSpec &spec, kf_step_fn kernel) {
        // Any bits: NaNs with payloads, infinities, subnormals, -0.
        std::mt19937 rng(static_cast<unsigned>(spec.d));
        std::vector<float> x(kTokens * spec.d), want;
        for (float &v : x)
          v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        for (int64_t t = 0; t < kTokens; ++t)
          for (int64_t j = 0; j < spec.mult; ++j)
            for (float v : tokenRow(x, t, spec.d))
              want.push_back(v);
        for (int threads : {1, 2}) {
          std::vector<float> streams(want.size(), -1.0f);
          ASSERT_EQ(runRowStep(kernel, kTokens, 1,
                               {rowOperand(x, spec.d),
                                rowOperand(streams, spec.mult * spec.d)},
                               threads),
                    absl::OkStatus());
          expectBitForBit(streams, want,
                          "streams, " + std::to_string(threads) + " threads");
        }
      });
}

TEST_P(HcKernelOnIsa, PreEqualsReferenceBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<HcPreKernelSpec> specs = {
      {4, 256, 20, 1e-6f, 1e-6f}, {4, 4096, 20, 1e-6f, 1e-6f},
      {4, 16, 1, 1e-6f, 1e-6f},   {2, 32, 3, 1e-3f, 1e-5f},
      {3, 48, 7, 0.0f, 0.0f},     {8, 32, 2, 1e-6f, 1e-6f},
  };
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildHcPreKernel,
      [&](const HcPreKernelSpec &spec, kf_step_fn kernel) {
        const int64_t mult = spec.mult, d = spec.d, width = mult * d;
        const reference::HcConfig config{static_cast<int>(mult),
                                         static_cast<int>(spec.sinkhornIters),
                                         spec.eps, spec.normEps};
        std::vector<float> streams = streamsOf(kMixTokens, mult, d);
        for (const SiteCase &site : kSiteCases) {
          const SiteWeights w = siteWeightsOf((2 + mult) * mult, width,
                                              site.scale, site.cancelling);
          std::vector<float> x(kMixTokens * d), post(kMixTokens * mult),
              comb(kMixTokens * mult * mult);
          for (int64_t t = 0; t < kMixTokens; ++t)
            reference::hcPre(tokenRow(streams, t, width),
                             {w.fn, w.base, w.scale}, config, tokenRow(x, t, d),
                             tokenRow(post, t, mult),
                             tokenRow(comb, t, mult * mult));
          for (const MixRun &run : kMixRuns) {
            SCOPED_TRACE(::testing::Message()
                         << "scale " << site.scale[0]
                         << (site.cancelling ? ", cancelling" : "") << ", "
                         << run);
            const int64_t n = run.tokens;
            std::vector<float> in(streams.begin(), streams.begin() + n * width),
                gotX(n * d, -1.0f), gotPost(n * mult, -1.0f),
                gotComb(n * mult * mult, -1.0f);
            ASSERT_NO_FATAL_FAILURE(
                runMix(kernel, run,
                       {rowOperand(in, width), weightOperand(w.fn),
                        weightOperand(w.base), weightOperand(w.scale),
                        rowOperand(gotX, d), rowOperand(gotPost, mult),
                        rowOperand(gotComb, mult * mult)}));
            expectBitForBit(gotX, std::span(x).first(n * d), "x");
            expectBitForBit(gotPost, std::span(post).first(n * mult), "post");
            expectBitForBit(gotComb, std::span(comb).first(n * mult * mult),
                            "comb");
          }
        }
      });
}

TEST_P(HcKernelOnIsa, PostEqualsReferenceBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<HcPostKernelSpec> specs = {
      {4, 256}, {4, 4096}, {2, 32}, {1, 16}};
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildHcPostKernel,
      [&](const HcPostKernelSpec &spec, kf_step_fn kernel) {
        const int64_t mult = spec.mult, d = spec.d, width = mult * d;
        std::vector<float> streams = streamsOf(kTokens, mult, d);
        // The sublayer's output (bf16), post weights in [0, 2] and the
        // combination's entries in [0, 1], exact zeros and ones among them;
        // on the last token (of ones) post_k · f cancels comb[0][k] ·
        // stream_0 (2^60 each), and the other streams' terms are lost or
        // kept by the order of the sum.
        std::mt19937 rng(static_cast<unsigned>(d));
        std::normal_distribution<float> unit(0.0f, 1.0f);
        std::uniform_real_distribution<float> share(0.0f, 1.0f);
        std::vector<float> f(kTokens * d), post(kTokens * mult),
            comb(kTokens * mult * mult);
        for (float &v : f)
          v = reference::roundBf16(unit(rng) * 3.0f);
        for (size_t i = 0; i < post.size(); ++i)
          post[i] = i % 7 == 0 ? 2.0f : 2.0f * share(rng);
        for (size_t i = 0; i < comb.size(); ++i)
          comb[i] = i % 5 == 0 ? 0.0f : (i % 11 == 0 ? 1.0f : share(rng));
        const int64_t last = kTokens - 1;
        for (float &v : tokenRow(f, last, d))
          v = 0x1p60f;
        for (float &v : tokenRow(streams, last, width).first(d))
          v = -0x1p60f;
        for (int64_t k = 0; k < mult; ++k)
          post[last * mult + k] = comb[last * mult * mult + k] = 1.0f;
        std::vector<float> want(kTokens * width);
        for (int64_t t = 0; t < kTokens; ++t)
          reference::hcPost(tokenRow(f, t, d), tokenRow(streams, t, width),
                            tokenRow(post, t, mult),
                            tokenRow(comb, t, mult * mult),
                            static_cast<int>(mult), tokenRow(want, t, width));
        for (bool inPlace : {false, true})
          for (int threads : {1, 2}) {
            std::vector<float> in = streams, out(want.size(), -1.0f);
            std::vector<float> &got = inPlace ? in : out;
            ASSERT_EQ(runRowStep(kernel, kTokens, 1,
                                 {rowOperand(f, d), rowOperand(in, width),
                                  rowOperand(post, mult),
                                  rowOperand(comb, mult * mult),
                                  rowOperand(got, width)},
                                 threads),
                      absl::OkStatus());
            expectBitForBit(got, want,
                            std::to_string(threads) + " threads" +
                                (inPlace ? ", in place" : ""));
          }
      });
}

TEST_P(HcKernelOnIsa, HeadEqualsReferenceBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<HcHeadKernelSpec> specs = {
      {4, 256, 1e-6f, 1e-6f},
      {4, 4096, 1e-6f, 1e-6f},
      {2, 32, 1e-3f, 1e-5f},
      {1, 16, 0.0f, 0.0f},
  };
  forEachStepKernel(
      isaTestTarget(GetParam()), specs, buildHcHeadKernel,
      [&](const HcHeadKernelSpec &spec, kf_step_fn kernel) {
        const int64_t mult = spec.mult, d = spec.d, width = mult * d;
        const reference::HcConfig config{static_cast<int>(mult), 1, spec.eps,
                                         spec.normEps};
        std::vector<float> streams = streamsOf(kMixTokens, mult, d);
        for (const SiteCase &site : kSiteCases) {
          const SiteWeights w =
              siteWeightsOf(mult, width, {site.scale[0]}, site.cancelling);
          std::vector<float> want(kMixTokens * d);
          for (int64_t t = 0; t < kMixTokens; ++t)
            reference::hcHead(tokenRow(streams, t, width),
                              {w.fn, w.base, w.scale}, config,
                              tokenRow(want, t, d));
          for (const MixRun &run : kMixRuns) {
            SCOPED_TRACE(::testing::Message()
                         << "scale " << site.scale[0]
                         << (site.cancelling ? ", cancelling" : "") << ", "
                         << run);
            const int64_t n = run.tokens;
            std::vector<float> in(streams.begin(), streams.begin() + n * width),
                y(n * d, -1.0f);
            ASSERT_NO_FATAL_FAILURE(
                runMix(kernel, run,
                       {rowOperand(in, width), weightOperand(w.fn),
                        weightOperand(w.base), weightOperand(w.scale),
                        rowOperand(y, d)}));
            expectBitForBit(y, std::span(want).first(n * d), "y");
          }
        }
      });
}

// A step kernel of the fp32 terms the hyper-connection kernels take from
// e^x, on rows of 16 floats x: fp32(e^x) (the softmax's) and fp32(1 / (1 +
// e^-x)) (the sigmoids'), in fp64 with emitExp, as HcMix.cpp and
// HcPreEmitter.cpp compute them.
llvm::Error buildExpTermsKernel(mlir::ModuleOp module,
                                const target::TargetInfo &target) {
  mlir::OpBuilder b(module.getContext());
  mlir::Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, "exp_terms", target);
  auto floats = mlir::VectorType::get({16}, b.getF32Type());
  auto doubles = mlir::VectorType::get({16}, b.getF64Type());
  auto i64 = [&](int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  mlir::Value x = emitStepOperand(b, loc, args, 0);
  mlir::Value exps = emitStepOperand(b, loc, args, 1);
  mlir::Value sigmoids = emitStepOperand(b, loc, args, 2);
  auto rows = mlir::scf::ForOp::create(b, loc, args.begin, args.end, i64(1));
  b.setInsertionPointToStart(rows.getBody());
  mlir::Value offset =
      mlir::arith::MulIOp::create(b, loc, rows.getInductionVar(), i64(64));
  mlir::Value wide = mlir::arith::ExtFOp::create(
      b, loc, doubles,
      mlir::Value(mlir::LLVM::LoadOp::create(
          b, loc, floats, emitByteOffset(b, loc, x, offset), 4)));
  mlir::Value one = mlir::arith::ConstantOp::create(
      b, loc, doubles,
      mlir::DenseElementsAttr::get(doubles, b.getF64FloatAttr(1.0)));
  auto store = [&](mlir::Value v, mlir::Value to) {
    mlir::LLVM::StoreOp::create(
        b, loc, mlir::arith::TruncFOp::create(b, loc, floats, v),
        emitByteOffset(b, loc, to, offset), 4);
  };
  store(emitExp(b, loc, wide), exps);
  store(mlir::arith::DivFOp::create(
            b, loc, one,
            mlir::arith::AddFOp::create(
                b, loc, one,
                emitExp(b, loc, mlir::arith::NegFOp::create(b, loc, wide)))),
        sigmoids);
  b.setInsertionPointAfter(rows);
  mlir::func::ReturnOp::create(b, loc);
  return llvm::Error::success();
}

// A sample of the exhaustive offline check the file's comment cites: one
// float in 4099 of [-110, 110] (about 540 000), and the saturated ends.
TEST_P(HcKernelOnIsa, ExpTermsEqualGolden) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  llvm::Expected<CompiledStepKernels> compiled = compileStepKernels(
      isaTestTarget(GetParam()),
      [&](mlir::ModuleOp module) {
        return buildExpTermsKernel(module, isaTestTarget(GetParam()));
      },
      {"exp_terms"});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  std::vector<float> x;
  for (float sign : {1.0f, -1.0f})
    for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(110.0f);
         bits += 4099)
      x.push_back(sign * std::bit_cast<float>(bits));
  for (float v : {200.0f, 800.0f, 1e30f, INFINITY})
    x.insert(x.end(), {v, -v});
  x.resize((x.size() + 15) / 16 * 16, 0.0f);
  std::vector<float> exps(x.size()), sigmoids(x.size()), wantExps, wantSigmoids;
  // The golden's expF32 and sigmoidF32 (reference/internal.h).
  for (float v : x) {
    wantExps.push_back(static_cast<float>(std::exp(static_cast<double>(v))));
    wantSigmoids.push_back(
        static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v)))));
  }
  ASSERT_EQ(runRowStep(compiled->kernels[0], 1,
                       static_cast<int64_t>(x.size()) / 16,
                       {rowOperand(x, x.size()), rowOperand(exps, x.size()),
                        rowOperand(sigmoids, x.size())},
                       2),
            absl::OkStatus());
  expectBitForBit(exps, wantExps, "fp32(e^x)");
  expectBitForBit(sigmoids, wantSigmoids, "fp32(1 / (1 + e^-x))");
}

TEST(HcKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyHcExpandKernel({0, 256})),
            "hc_expand kernel [mult = 0, D = 256]: expected mult in [1, 8]");
  EXPECT_EQ(llvm::toString(verifyHcPostKernel({4, 100})),
            "hc_post kernel [mult = 4, D = 100]: expected D a positive "
            "multiple of 16");
  EXPECT_EQ(llvm::toString(verifyHcPreKernel({9, 256, 20, 1e-6f, 1e-6f})),
            "hc_pre kernel [mult = 9, D = 256, sinkhorn = 20, eps = 1e-06, "
            "norm_eps = 1e-06]: expected mult in [1, 8]");
  EXPECT_EQ(llvm::toString(verifyHcPreKernel({4, 256, 0, 1e-6f, 1e-6f})),
            "hc_pre kernel [mult = 4, D = 256, sinkhorn = 0, eps = 1e-06, "
            "norm_eps = 1e-06]: expected at least one Sinkhorn iteration");
  EXPECT_EQ(llvm::toString(verifyHcPreKernel({4, 256, 20, -1.0f, 1e-6f})),
            "hc_pre kernel [mult = 4, D = 256, sinkhorn = 20, eps = -1, "
            "norm_eps = 1e-06]: expected a finite eps >= 0");
  EXPECT_EQ(llvm::toString(verifyHcHeadKernel({4, 0, 1e-6f, NAN})),
            "hc_head kernel [mult = 4, D = 0, eps = 1e-06, norm_eps = nan]: "
            "expected D a positive multiple of 16");
  EXPECT_EQ(llvm::toString(verifyHcHeadKernel({4, 256, 1e-6f, INFINITY})),
            "hc_head kernel [mult = 4, D = 256, eps = 1e-06, norm_eps = inf]: "
            "expected a finite norm_eps >= 0");
  EXPECT_FALSE(static_cast<bool>(verifyHcExpandKernel({4, 4096})));
  EXPECT_FALSE(static_cast<bool>(verifyHcPostKernel({8, 16})));
  EXPECT_FALSE(
      static_cast<bool>(verifyHcPreKernel({4, 4096, 20, 1e-6f, 1e-6f})));
  EXPECT_FALSE(static_cast<bool>(verifyHcHeadKernel({1, 16, 0.0f, 0.0f})));
}

TEST(HcKernel, NamesEachVariantApart) {
  EXPECT_EQ((HcExpandKernelSpec{4, 4096}.getSymbolName()),
            "kf_hc_expand_m4_d4096");
  EXPECT_EQ((HcPostKernelSpec{4, 4096}.getSymbolName()), "kf_hc_post_m4_d4096");
  EXPECT_EQ((HcPostKernelSpec{4, 4096}.describe()),
            "hc_post kernel [mult = 4, D = 4096]");
  const HcPreKernelSpec pre{4, 4096, 20, 1e-6f, 1e-6f};
  EXPECT_EQ(pre.getSymbolName(), "kf_hc_pre_m4_d4096_s20_e358637bd_n358637bd");
  EXPECT_NE(pre.getSymbolName(),
            (HcPreKernelSpec{4, 4096, 10, 1e-6f, 1e-6f}.getSymbolName()));
  EXPECT_NE(pre.getSymbolName(),
            (HcPreKernelSpec{4, 4096, 20, 1e-6f, 1e-5f}.getSymbolName()));
  const HcHeadKernelSpec head{4, 256, 1e-6f, 1e-6f};
  EXPECT_EQ(head.getSymbolName(), "kf_hc_head_m4_d256_e358637bd_n358637bd");
  EXPECT_EQ(head.describe(),
            "hc_head kernel [mult = 4, D = 256, eps = 1e-06, norm_eps = "
            "1e-06]");
  EXPECT_NE(head.getSymbolName(),
            (HcHeadKernelSpec{4, 256, 1e-5f, 1e-6f}.getSymbolName()));
}

// A kernel calls nothing (no libm's exp or sqrt, no memcpy for the copies):
// the code of every hyper-connection kernel, for the portable level and
// AVX-512's, has no call.
TEST(HcKernel, CallsNothing) {
  expectKernelsCallNothing(
      {"x86-64-v2", "x86-64-v4"}, {"kf_hc_pre_m4_d4096"},
      [&](mlir::ModuleOp module, const target::TargetInfo &target) {
        ASSERT_TRUE(
            static_cast<bool>(buildHcExpandKernel(module, {4, 4096}, target)));
        ASSERT_TRUE(static_cast<bool>(
            buildHcPreKernel(module, {4, 4096, 20, 1e-6f, 1e-6f}, target)));
        ASSERT_TRUE(
            static_cast<bool>(buildHcPostKernel(module, {4, 4096}, target)));
        ASSERT_TRUE(static_cast<bool>(
            buildHcHeadKernel(module, {4, 4096, 1e-6f, 1e-6f}, target)));
      });
}

} // namespace
} // namespace kf::codegen
