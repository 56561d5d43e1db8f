// The compiled kf.moe_gate against the interpreter's (the golden's
// sqrtSoftplus scores, then routeLearned or routeHash), run as a plan step
// by the runtime's executor on 1 and 2 threads, per x86 ISA level.
//
// Learned routing, E = 16 and 256 with k = 4, 6 and 8 (and E = 24, 7, whose
// scores go in vectors of 8 and 1, k = E among them): tokens of random
// logits, of logits from a few values (ties in the biased scores between
// experts of one logit and one bias), of biased scores tied between
// different scores and biases (s + b = 6 exactly for every bias), of one
// logit for all (the experts 0 .. k-1), and of logits past the softplus
// threshold (20, just above and below it), very negative (down to -inf,
// whose score is +0) and tiny; and a token with a NaN logit, which the
// interpreter refuses and the kernel ranks as -inf (MoeGateKernel.h).
// Hash routing, V = 50 and 1000: rows of random experts, two rows naming an
// expert outside [0, E) (E, -1), token ids outside the table (-1, V,
// INT32_MIN, INT32_MAX), which give experts 0 .. k-1 with weights +0, and a
// routed NaN logit, whose token's weights are all NaN.
//
// Tolerance: none; ids and weight bits are compared exactly (NaN with NaN).
// The scores' exp and log1p are fdlibm's in fp64 (within ~1.5 and ~1 fp64
// ulps of glibc's), so the fp64 softplus is within a few fp64 ulps of the
// golden's, and its fp32 sqrt can differ only where the exact value lies
// within ~2^-27 fp32 ulps of a rounding boundary: none of these inputs do
// (a failure here on new data is that, not a wrong kernel). Everything after
// the scores is the golden's IEEE operations in its order.
#include "StepKernelTestUtil.h"

#include "kf/Codegen/MoeGateKernel.h"
#include "kf/deepseek_v4/reference/routing.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kf::codegen {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

KF_STEP_KERNEL_SUITE(MoeGateKernelOnIsa);

constexpr int64_t kTokens = 12;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kBiases[] = {0.0f, 0.125f, -0.25f, 0.5f};

// Token t's logits [E] (the bias of expert e is kBiases[e % 4]).
void fillLogits(int64_t t, std::mt19937 &rng, std::span<float> row) {
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int64_t e = static_cast<int64_t>(row.size());
  for (int64_t i = 0; i < e; ++i) {
    float &v = row[i];
    switch (t % 8) {
    case 0: // random: distinct biased scores
    case 1:
      v = normal(rng);
      break;
    case 2: // a few values: ties within one logit and bias
      v = static_cast<float>(static_cast<int>(rng() % 3)) - 1.0f;
      break;
    case 3: { // s = 6 - b for every b: sqrt(x) past the threshold
      const float s = 6.0f - kBiases[i % 4];
      v = s * s;
      break;
    }
    case 4: // one logit for all
      v = 0.75f;
      break;
    case 5: { // around the softplus threshold, and large
      static constexpr float kValues[] = {20.0f,
                                          std::nextafter(20.0f, 30.0f),
                                          std::nextafter(20.0f, 0.0f),
                                          1e30f,
                                          kInf,
                                          19.0f};
      v = kValues[rng() % 6];
      break;
    }
    case 6: { // very negative and tiny
      static constexpr float kValues[] = {-50.0f, -200.0f, -800.0f, -kInf,
                                          1e-30f, -1e-30f, 0.0f,    -0.0f};
      v = kValues[rng() % 8];
      break;
    }
    default:
      v = normal(rng) * 0.1f;
    }
  }
}

std::span<int32_t> rowOf(std::vector<int32_t> &v, int64_t t, int64_t k) {
  return std::span(v).subspan(t * k, k);
}
std::span<float> rowOf(std::vector<float> &v, int64_t t, int64_t k) {
  return std::span(v).subspan(t * k, k);
}

std::vector<float> scoresOf(std::span<const float> logits) {
  std::vector<float> scores(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    scores[i] = reference::sqrtSoftplus(logits[i]);
  return scores;
}

StepOperand bytesOf(auto &values, int64_t bytesPerRow) {
  return StepOperand{std::span(reinterpret_cast<uint8_t *>(values.data()),
                               sizeof(values[0]) * values.size()),
                     bytesPerRow};
}

void expectEqual(const MoeGateKernelSpec &spec,
                 const std::vector<int32_t> &wantIds,
                 const std::vector<float> &wantWeights,
                 const std::vector<int32_t> &ids,
                 const std::vector<float> &weights) {
  for (size_t i = 0; i < wantIds.size(); ++i) {
    ASSERT_EQ(ids[i], wantIds[i])
        << "token " << i / spec.k << ", slot " << i % spec.k;
    if (std::isnan(wantWeights[i]))
      ASSERT_TRUE(std::isnan(weights[i]))
          << "token " << i / spec.k << ", slot " << i % spec.k;
    else
      ASSERT_EQ(std::bit_cast<uint32_t>(weights[i]),
                std::bit_cast<uint32_t>(wantWeights[i]))
          << "token " << i / spec.k << ", slot " << i % spec.k << ": "
          << weights[i] << " != " << wantWeights[i];
  }
}

void checkLearned(const MoeGateKernelSpec &spec, kf_step_fn kernel) {
  const int64_t e = spec.experts, k = spec.k;
  std::mt19937 rng(static_cast<unsigned>(e * 100 + k));
  std::vector<float> logits(kTokens * e), bias(e);
  for (int64_t i = 0; i < e; ++i)
    bias[i] = kBiases[i % 4];
  for (int64_t t = 0; t < kTokens; ++t)
    fillLogits(t, rng, std::span(logits).subspan(t * e, e));
  // The last token: a NaN, at the last expert unless k = E (then the first).
  const int64_t nanToken = kTokens - 1, nanExpert = k == e ? 0 : e - 1;
  logits[nanToken * e + nanExpert] = kNaN;

  std::vector<int32_t> wantIds(kTokens * k);
  std::vector<float> wantWeights(kTokens * k);
  for (int64_t t = 0; t < kTokens; ++t) {
    std::vector<float> scores = scoresOf(std::span(logits).subspan(t * e, e));
    if (t != nanToken) {
      reference::routeLearned(scores, bias, spec.routeScale,
                              rowOf(wantIds, t, k), rowOf(wantWeights, t, k));
      continue;
    }
    // The golden's routeLearned with the NaN ranked as -inf.
    std::vector<float> biased(e);
    for (int64_t i = 0; i < e; ++i)
      biased[i] = std::isnan(scores[i] + bias[i]) ? -kInf : scores[i] + bias[i];
    reference::topK(biased, rowOf(wantIds, t, k));
    reference::routingWeights(scores, rowOf(wantIds, t, k), spec.routeScale,
                              rowOf(wantWeights, t, k));
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<int32_t> ids(wantIds.size(), -7);
    std::vector<float> weights(wantWeights.size(), -1.0f);
    ASSERT_EQ(runRowStep(kernel, kTokens, 1,
                         {rowOperand(logits, e), weightOperand(bias),
                          bytesOf(ids, 4 * k), rowOperand(weights, k)},
                         threads),
              absl::OkStatus());
    expectEqual(spec, wantIds, wantWeights, ids, weights);
  }
}

void checkHash(const MoeGateKernelSpec &spec, kf_step_fn kernel) {
  const int64_t e = spec.experts, k = spec.k, v = spec.vocab;
  std::mt19937 rng(static_cast<unsigned>(v + k));
  std::vector<int32_t> table(v * k);
  for (int32_t &id : table)
    id = static_cast<int32_t>(rng() % e);
  // Rows 3 and 4 name an expert outside [0, E).
  table[3 * k + k - 1] = static_cast<int32_t>(e);
  table[4 * k] = -1;
  const std::vector<int32_t> tokenIds = {0,
                                         static_cast<int32_t>(v - 1),
                                         7,
                                         7,
                                         3,
                                         4,
                                         -1,
                                         static_cast<int32_t>(v),
                                         std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max(),
                                         11,
                                         12};
  ASSERT_EQ(static_cast<int64_t>(tokenIds.size()), kTokens);
  std::vector<float> logits(kTokens * e);
  for (int64_t t = 0; t < kTokens; ++t)
    fillLogits(t, rng, std::span(logits).subspan(t * e, e));
  // The last token's first expert's logit: a NaN, which the interpreter
  // lets through to every weight of the token.
  logits[(kTokens - 1) * e + table[12 * k]] = kNaN;

  std::vector<int32_t> wantIds(kTokens * k);
  std::vector<float> wantWeights(kTokens * k);
  for (int64_t t = 0; t < kTokens; ++t) {
    const int32_t id = tokenIds[t];
    bool valid = id >= 0 && id < v;
    for (int64_t j = 0; valid && j < k; ++j)
      valid = table[id * k + j] >= 0 && table[id * k + j] < e;
    if (!valid) {
      for (int64_t j = 0; j < k; ++j) {
        wantIds[t * k + j] = static_cast<int32_t>(j);
        wantWeights[t * k + j] = 0.0f;
      }
      continue;
    }
    std::vector<float> scores = scoresOf(std::span(logits).subspan(t * e, e));
    reference::routeHash(scores, table, id, spec.routeScale,
                         rowOf(wantIds, t, k), rowOf(wantWeights, t, k));
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::vector<int32_t> ids(wantIds.size(), -7), tokens = tokenIds;
    std::vector<float> weights(wantWeights.size(), -1.0f);
    ASSERT_EQ(runRowStep(kernel, kTokens, 1,
                         {rowOperand(logits, e), bytesOf(table, 0),
                          bytesOf(tokens, 4), bytesOf(ids, 4 * k),
                          rowOperand(weights, k)},
                         threads),
              absl::OkStatus());
    expectEqual(spec, wantIds, wantWeights, ids, weights);
  }
}

TEST_P(MoeGateKernelOnIsa, LearnedEqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<MoeGateKernelSpec> specs = {{16, 4, 1.0f},  {256, 6, 1.5f},
                                                {256, 8, 2.5f}, {16, 8, 1.5f},
                                                {24, 5, 1.0f},  {7, 7, 1.5f}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildMoeGateKernel,
                    checkLearned);
}

TEST_P(MoeGateKernelOnIsa, HashEqualsInterpreterBitForBit) {
  KF_SKIP_UNLESS_HOST_RUNS(GetParam());
  const std::vector<MoeGateKernelSpec> specs = {{16, 4, 1.0f, 50},
                                                {256, 6, 1.5f, 1000}};
  forEachStepKernel(isaTestTarget(GetParam()), specs, buildMoeGateKernel,
                    checkHash);
}

TEST(MoeGateKernel, RefusesBadSpecs) {
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({0, 1, 1.0f})),
            "moe_gate kernel [learned, E = 0, k = 1, route_scale = 1]: "
            "expected E in [1, 1024]");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({2048, 6, 1.0f})),
            "moe_gate kernel [learned, E = 2048, k = 6, route_scale = 1]: "
            "expected E in [1, 1024]");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({16, 17, 1.0f})),
            "moe_gate kernel [learned, E = 16, k = 17, route_scale = 1]: "
            "expected k in [1, E]");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({16, 0, 1.0f})),
            "moe_gate kernel [learned, E = 16, k = 0, route_scale = 1]: "
            "expected k in [1, E]");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({16, 4, 0.0f, 10})),
            "moe_gate kernel [hash, V = 10, E = 16, k = 4, route_scale = 0]: "
            "expected a positive, finite route scale");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({16, 4, kInf})),
            "moe_gate kernel [learned, E = 16, k = 4, route_scale = inf]: "
            "expected a positive, finite route scale");
  EXPECT_EQ(llvm::toString(verifyMoeGateKernel({16, 4, 1.0f, -1})),
            "moe_gate kernel [hash, V = -1, E = 16, k = 4, route_scale = 1]: "
            "expected V not negative");
  EXPECT_FALSE(static_cast<bool>(verifyMoeGateKernel({256, 6, 1.5f})));
  EXPECT_FALSE(static_cast<bool>(verifyMoeGateKernel({256, 6, 1.5f, 129280})));
  EXPECT_FALSE(static_cast<bool>(verifyMoeGateKernel({1, 1, 1.0f})));
}

TEST(MoeGateKernel, NamesEachVariantApart) {
  const MoeGateKernelSpec learned{256, 6, 1.5f};
  const MoeGateKernelSpec hash{256, 6, 1.5f, 129280};
  EXPECT_EQ(learned.getSymbolName(), "kf_moe_gate_e256_k6_s3fc00000");
  EXPECT_EQ(hash.getSymbolName(), "kf_moe_gate_hash_v129280_e256_k6_s3fc00000");
  EXPECT_EQ(learned.describe(),
            "moe_gate kernel [learned, E = 256, k = 6, route_scale = 1.5]");
  EXPECT_EQ(hash.describe(), "moe_gate kernel [hash, V = 129280, E = 256, k = "
                             "6, route_scale = 1.5]");
  EXPECT_NE(learned.getSymbolName(),
            (MoeGateKernelSpec{256, 8, 1.5f}.getSymbolName()));
  EXPECT_NE(learned.getSymbolName(),
            (MoeGateKernelSpec{128, 6, 1.5f}.getSymbolName()));
  EXPECT_NE(learned.getSymbolName(),
            (MoeGateKernelSpec{256, 6, 2.5f}.getSymbolName()));
  EXPECT_NE(hash.getSymbolName(),
            (MoeGateKernelSpec{256, 6, 1.5f, 1000}.getSymbolName()));
}

} // namespace
} // namespace kf::codegen
