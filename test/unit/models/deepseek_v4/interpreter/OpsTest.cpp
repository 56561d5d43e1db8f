// Each kf op run by the interpreter on chosen values gives exactly what the
// reference kernel it stands for gives on the same values: the interpreter
// adds no arithmetic of its own, so every comparison is for equality.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "kf/deepseek_v4/reference/hadamard.h"
#include "kf/deepseek_v4/reference/hyper_connections.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/moe.h"
#include "kf/deepseek_v4/reference/quant_sim.h"
#include "kf/deepseek_v4/reference/rope.h"
#include "kf/deepseek_v4/reference/routing.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

/// Parses `source`, binds `weights` and calls @f on `arguments`.
class OpRunner {
public:
  OpRunner(std::string_view source, InMemoryWeights weights = {})
      : context(makeContext()), module(parse(*context, source)) {
    if (module)
      interpreter = makeInterpreter(*module, std::move(weights));
  }

  std::vector<Tensor> call(std::vector<Tensor> arguments) {
    if (!interpreter)
      return {};
    absl::StatusOr<std::vector<Tensor>> results =
        interpreter->call("f", std::move(arguments));
    EXPECT_TRUE(results.ok()) << results.status();
    return results.ok() ? *std::move(results) : std::vector<Tensor>{};
  }

  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<Interpreter> interpreter;
};

std::vector<float> floatsOf(const Tensor &t) {
  return {t.getFloats().begin(), t.getFloats().end()};
}

std::vector<float> rowOf(const std::vector<float> &v, size_t r, size_t n) {
  return {v.begin() + r * n, v.begin() + (r + 1) * n};
}

TEST(Ops, LinearAndGroupedLinear) {
  OpRunner runner(R"mlir(
module {
  kf.weight @w : !kf.qweight<f32, [32, 64]>
  kf.weight @g : !kf.qweight<f32, [32, 16]>
  func.func @f(%x: tensor<?x64xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
    %w = kf.get_weight @w : !kf.qweight<f32, [32, 64]>
    %g = kf.get_weight @g : !kf.qweight<f32, [32, 16]>
    %a = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<f32, [32, 64]> -> tensor<?x32xf32>
    %b = kf.linear %x, %w precision(f32) : tensor<?x64xf32>, !kf.qweight<f32, [32, 64]> -> tensor<?x32xf32>
    %c = kf.grouped_linear %x, %g groups(4) : tensor<?x64xf32>, !kf.qweight<f32, [32, 16]> -> tensor<?x32xf32>
    return %a, %b, %c : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
  }
}
)mlir",
                  {.floats = {{"w", randomValues(32 * 64, 1, 0.125f)},
                              {"g", randomValues(32 * 16, 2, 0.25f)}}});
  std::vector<float> x = randomValues(3 * 64, 3);
  std::vector<Tensor> results = runner.call({Tensor({3, 64}, x)});
  ASSERT_EQ(results.size(), 3u);
  std::vector<float> w = randomValues(32 * 64, 1, 0.125f);
  std::vector<float> g = randomValues(32 * 16, 2, 0.25f);
  std::vector<float> bf16(3 * 32), fp32(3 * 32), grouped(3 * 32);
  for (size_t t = 0; t < 3; ++t) {
    std::span<const float> row = std::span<const float>(x).subspan(t * 64, 64);
    reference::linearBf16(row, w, std::span<float>(bf16).subspan(t * 32, 32));
    reference::linearFp32(row, w, std::span<float>(fp32).subspan(t * 32, 32));
    for (size_t q = 0; q < 4; ++q)
      reference::linearBf16(
          row.subspan(q * 16, 16),
          std::span<const float>(g).subspan(q * 128, 128),
          std::span<float>(grouped).subspan(t * 32 + q * 8, 8));
  }
  EXPECT_EQ(floatsOf(results[0]), bf16);
  EXPECT_EQ(floatsOf(results[1]), fp32);
  EXPECT_EQ(floatsOf(results[2]), grouped);
  EXPECT_NE(bf16, fp32); // the precisions differ, so both were exercised
}

TEST(Ops, RmsNormForms) {
  OpRunner runner(R"mlir(
module {
  kf.weight @n : !kf.qweight<f32, [64]>
  func.func @f(%x: tensor<?x2x64xf32>, %n2: tensor<64xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
    %n = kf.get_weight @n : !kf.qweight<f32, [64]>
    %a = kf.rms_norm %x, %n eps(1.0e-06) : tensor<?x2x64xf32>, !kf.qweight<f32, [64]>
    %b = kf.rms_norm %x, %n2 eps(1.0e-06) : tensor<?x2x64xf32>, tensor<64xf32>
    %c = kf.rms_norm %x eps(1.0e-06) : tensor<?x2x64xf32>
    %d = kf.rms_norm %x eps(1.0e-06) compute(bf16) : tensor<?x2x64xf32>
    return %a, %b, %c, %d : tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
  }
}
)mlir",
                  {.floats = {{"n", randomValues(64, 4)}}});
  std::vector<float> x = randomValues(3 * 2 * 64, 5, 3.0f);
  std::vector<float> n = randomValues(64, 4), n2 = randomValues(64, 6);
  std::vector<Tensor> results =
      runner.call({Tensor({3, 2, 64}, x), Tensor({64}, n2)});
  ASSERT_EQ(results.size(), 4u);
  std::vector<float> ones(64, 1.0f);
  for (size_t r = 0; r < 6; ++r) {
    std::vector<float> row = rowOf(x, r, 64), y(64);
    reference::rmsNorm(row, n, 1e-6f, y);
    EXPECT_EQ(rowOf(floatsOf(results[0]), r, 64), y) << r;
    reference::rmsNorm(row, n2, 1e-6f, y);
    EXPECT_EQ(rowOf(floatsOf(results[1]), r, 64), y) << r;
    reference::rmsNorm(row, ones, 1e-6f, y);
    EXPECT_EQ(rowOf(floatsOf(results[2]), r, 64), y) << r;
    reference::rmsScale(row, 1e-6f);
    EXPECT_EQ(rowOf(floatsOf(results[3]), r, 64), row) << r;
  }
}

TEST(Ops, RopeAndItsInverse) {
  OpRunner runner(R"mlir(
module {
  func.func @f(%x: tensor<?x2x64xf32>, %pos: tensor<?xi64>) -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
    %r = kf.rope %x, %pos, <dim = 32, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 65536> : tensor<?x2x64xf32>, tensor<?xi64>
    %i = kf.rope %x, %pos, <dim = 32, base = 1.000000e+04> inverse : tensor<?x2x64xf32>, tensor<?xi64>
    return %r, %i : tensor<?x2x64xf32>, tensor<?x2x64xf32>
  }
}
)mlir");
  std::vector<float> x = randomValues(3 * 2 * 64, 7);
  std::vector<int64_t> pos = {5, 6, 70000};
  std::vector<Tensor> results =
      runner.call({Tensor({3, 2, 64}, x), Tensor({3}, pos)});
  ASSERT_EQ(results.size(), 2u);
  reference::RopeConfig yarn{.ropeDim = 32,
                             .base = 160000,
                             .yarn = true,
                             .yarnFactor = 16,
                             .betaFast = 32,
                             .betaSlow = 1,
                             .originalLen = 65536};
  reference::RopeConfig plain{.ropeDim = 32, .base = 10000};
  std::vector<float> f1(16), f2(16);
  reference::ropeFrequencies(yarn, f1);
  reference::ropeFrequencies(plain, f2);
  std::vector<float> rotated = x, inverse = x;
  for (size_t r = 0; r < 6; ++r) {
    reference::rope(std::span<float>(rotated).subspan(r * 64 + 32, 32),
                    pos[r / 2], f1);
    reference::inverseRope(std::span<float>(inverse).subspan(r * 64 + 32, 32),
                           pos[r / 2], f2);
  }
  EXPECT_EQ(floatsOf(results[0]), rotated);
  EXPECT_EQ(floatsOf(results[1]), inverse);
}

TEST(Ops, HadamardAndSimulations) {
  OpRunner runner(R"mlir(
module {
  func.func @f(%x: tensor<?x2x128xf32>, %y: tensor<?x192xf32>)
      -> (tensor<?x2x128xf32>, tensor<?x2x128xf32>, tensor<?x192xf32>, tensor<?x192xf32>) {
    %h = kf.hadamard %x : tensor<?x2x128xf32>
    %q = kf.fp4_sim %x block(32) : tensor<?x2x128xf32>
    %a = kf.fp8_sim %y block(64) leading(128) : tensor<?x192xf32>
    %b = kf.fp8_sim %y block(64) : tensor<?x192xf32>
    return %h, %q, %a, %b : tensor<?x2x128xf32>, tensor<?x2x128xf32>, tensor<?x192xf32>, tensor<?x192xf32>
  }
}
)mlir");
  std::vector<float> x = randomValues(3 * 2 * 128, 8);
  std::vector<float> y = randomValues(3 * 192, 9, 10.0f);
  std::vector<Tensor> results =
      runner.call({Tensor({3, 2, 128}, x), Tensor({3, 192}, y)});
  ASSERT_EQ(results.size(), 4u);
  std::vector<float> h = x, q = x, a = y, b = y;
  for (size_t r = 0; r < 6; ++r) {
    reference::hadamard(std::span<float>(h).subspan(r * 128, 128));
    reference::fp4Sim(std::span<float>(q).subspan(r * 128, 128), 32);
  }
  for (size_t r = 0; r < 3; ++r) {
    reference::fp8Sim(std::span<float>(a).subspan(r * 192, 128), 64);
    reference::fp8Sim(std::span<float>(b).subspan(r * 192, 192), 64);
  }
  EXPECT_EQ(floatsOf(results[0]), h);
  EXPECT_EQ(floatsOf(results[1]), q);
  EXPECT_EQ(floatsOf(results[2]), a);
  EXPECT_EQ(floatsOf(results[3]), b);
  EXPECT_NE(a, b); // leading() left the last 64 values of each row alone
}

TEST(Ops, EmbedAndHyperConnections) {
  constexpr int64_t kVocab = 10, kDim = 64, kMult = 4;
  std::vector<float> table = randomValues(kVocab * kDim, 10);
  // Values off the bf16 grid, which embed must round.
  for (float &v : table)
    v *= 1.0f + 1.0f / 1024;
  std::vector<float> fn = randomValues(24 * kMult * kDim, 11, 0.05f);
  std::vector<float> base = randomValues(24, 12, 0.1f);
  std::vector<float> scale = {0.3f, 0.2f, 0.5f};
  std::vector<float> headFn = randomValues(kMult * kMult * kDim, 13, 0.05f);
  std::vector<float> headBase = randomValues(kMult, 14, 0.1f);
  std::vector<float> headScale = {0.4f};
  OpRunner runner(R"mlir(
module {
  kf.weight @e : !kf.qweight<f32, [10, 64]>
  kf.weight @fn : !kf.qweight<f32, [24, 256]>
  kf.weight @base : !kf.qweight<f32, [24]>
  kf.weight @scale : !kf.qweight<f32, [3]>
  kf.weight @hfn : !kf.qweight<f32, [4, 256]>
  kf.weight @hbase : !kf.qweight<f32, [4]>
  kf.weight @hscale : !kf.qweight<f32, [1]>
  func.func @f(%tokens: tensor<?xi32>, %f: tensor<?x64xf32>)
      -> (tensor<?x4x64xf32>, tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>, tensor<?x4x64xf32>, tensor<?x64xf32>) {
    %e = kf.get_weight @e : !kf.qweight<f32, [10, 64]>
    %fn = kf.get_weight @fn : !kf.qweight<f32, [24, 256]>
    %base = kf.get_weight @base : !kf.qweight<f32, [24]>
    %scale = kf.get_weight @scale : !kf.qweight<f32, [3]>
    %hfn = kf.get_weight @hfn : !kf.qweight<f32, [4, 256]>
    %hbase = kf.get_weight @hbase : !kf.qweight<f32, [4]>
    %hscale = kf.get_weight @hscale : !kf.qweight<f32, [1]>
    %x = kf.embed %tokens, %e : tensor<?xi32>, !kf.qweight<f32, [10, 64]> -> tensor<?x64xf32>
    %s = kf.hc_expand %x : tensor<?x64xf32> -> tensor<?x4x64xf32>
    %in, %post, %comb = kf.hc_pre %s, %fn, %base, %scale sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
        : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
        -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
    %n = kf.hc_post %f, %s, %post, %comb : tensor<?x64xf32>, tensor<?x4x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x64xf32>
    %y = kf.hc_head %n, %hfn, %hbase, %hscale eps(1.0e-06) norm_eps(1.0e-06)
        : tensor<?x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<?x64xf32>
    return %s, %in, %post, %comb, %n, %y : tensor<?x4x64xf32>, tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>, tensor<?x4x64xf32>, tensor<?x64xf32>
  }
}
)mlir",
                  {.floats = {{"e", table},
                              {"fn", fn},
                              {"base", base},
                              {"scale", scale},
                              {"hfn", headFn},
                              {"hbase", headBase},
                              {"hscale", headScale}}});
  std::vector<int32_t> tokens = {3, 9, 0};
  std::vector<float> f = randomValues(3 * kDim, 15);
  std::vector<Tensor> results =
      runner.call({Tensor({3}, tokens), Tensor({3, kDim}, f)});
  ASSERT_EQ(results.size(), 6u);
  reference::HcConfig hc{};
  for (size_t t = 0; t < 3; ++t) {
    std::vector<float> streams;
    for (int64_t j = 0; j < kMult; ++j)
      for (int64_t d = 0; d < kDim; ++d)
        streams.push_back(reference::roundBf16(table[tokens[t] * kDim + d]));
    EXPECT_EQ(rowOf(floatsOf(results[0]), t, kMult * kDim), streams);
    std::vector<float> x(kDim), post(kMult), comb(kMult * kMult);
    reference::hcPre(streams, {fn, base, scale}, hc, x, post, comb);
    EXPECT_EQ(rowOf(floatsOf(results[1]), t, kDim), x);
    EXPECT_EQ(rowOf(floatsOf(results[2]), t, kMult), post);
    EXPECT_EQ(rowOf(floatsOf(results[3]), t, kMult * kMult), comb);
    std::vector<float> next(kMult * kDim), y(kDim);
    reference::hcPost(rowOf(f, t, kDim), streams, post, comb, kMult, next);
    EXPECT_EQ(rowOf(floatsOf(results[4]), t, kMult * kDim), next);
    reference::hcHead(next, {headFn, headBase, headScale}, hc, y);
    EXPECT_EQ(rowOf(floatsOf(results[5]), t, kDim), y);
  }
}

// The router, the gate and the experts together are reference::moe for
// the hash-routed and the learned layer, with and without the FP8
// activation simulation.
TEST(Ops, MoeEqualsTheReferenceMoe) {
  Config config = tinyConfig();
  config.nEmbd = 128;
  config.nFfExp = 128;
  config.nExpert = 8;
  config.nExpertUsed = 3;
  config.nVocab = 16;
  config.hashLayers = 1;
  config.swigluClampExp = {2.0f, 2.0f};
  config.swigluClampShexp = {1.5f, 1.5f};
  constexpr size_t kD = 128, kF = 128, kE = 8, kK = 3, kV = 16;
  std::vector<float> router = randomValues(kE * kD, 20, 0.09f);
  std::vector<float> bias = randomValues(kE, 21, 0.05f);
  std::vector<float> gate = randomValues(kE * kF * kD, 22, 0.09f);
  std::vector<float> up = randomValues(kE * kF * kD, 23, 0.09f);
  std::vector<float> down = randomValues(kE * kD * kF, 24, 0.09f);
  std::vector<float> sgate = randomValues(kF * kD, 25, 0.09f);
  std::vector<float> sup = randomValues(kF * kD, 26, 0.09f);
  std::vector<float> sdown = randomValues(kD * kF, 27, 0.09f);
  std::vector<int32_t> tid2eid;
  for (size_t v = 0; v < kV; ++v)
    for (size_t j = 0; j < kK; ++j)
      tid2eid.push_back(static_cast<int32_t>((v * 5 + j * 3) % kE));
  reference::LayerWeights lw;
  lw.ffnGateInp = router;
  lw.expProbsB = bias;
  lw.tid2eid = tid2eid;
  lw.ffnGateExps = gate;
  lw.ffnUpExps = up;
  lw.ffnDownExps = down;
  lw.ffnGateShexp = sgate;
  lw.ffnUpShexp = sup;
  lw.ffnDownShexp = sdown;

  for (bool simulate : {true, false}) {
    std::string sim = simulate ? " fp8_activations" : "";
    std::string experts = R"(experts(%g, %u, %d) shared(%sg, %su, %sd))";
    std::string types =
        ": tensor<?x128xf32>, tensor<?x3xi32>, tensor<?x3xf32>, "
        "!kf.qweight<f32, [8, 128, 128]>, !kf.qweight<f32, [8, 128, 128]>, "
        "!kf.qweight<f32, [8, 128, 128]>, !kf.qweight<f32, [128, 128]>, "
        "!kf.qweight<f32, [128, 128]>, !kf.qweight<f32, [128, 128]> -> "
        "tensor<?x128xf32>";
    std::string source = R"mlir(
module {
  kf.weight @router : !kf.qweight<f32, [8, 128]>
  kf.weight @bias : !kf.qweight<f32, [8]>
  kf.weight @tid2eid : !kf.qweight<i32, [16, 3]>
  kf.weight @gate : !kf.qweight<f32, [8, 128, 128]>
  kf.weight @up : !kf.qweight<f32, [8, 128, 128]>
  kf.weight @down : !kf.qweight<f32, [8, 128, 128]>
  kf.weight @sgate : !kf.qweight<f32, [128, 128]>
  kf.weight @sup : !kf.qweight<f32, [128, 128]>
  kf.weight @sdown : !kf.qweight<f32, [128, 128]>
  func.func @f(%x: tensor<?x128xf32>, %tokens: tensor<?xi32>) -> (tensor<?x128xf32>, tensor<?x128xf32>) {
    %r = kf.get_weight @router : !kf.qweight<f32, [8, 128]>
    %b = kf.get_weight @bias : !kf.qweight<f32, [8]>
    %t = kf.get_weight @tid2eid : !kf.qweight<i32, [16, 3]>
    %g = kf.get_weight @gate : !kf.qweight<f32, [8, 128, 128]>
    %u = kf.get_weight @up : !kf.qweight<f32, [8, 128, 128]>
    %d = kf.get_weight @down : !kf.qweight<f32, [8, 128, 128]>
    %sg = kf.get_weight @sgate : !kf.qweight<f32, [128, 128]>
    %su = kf.get_weight @sup : !kf.qweight<f32, [128, 128]>
    %sd = kf.get_weight @sdown : !kf.qweight<f32, [128, 128]>
    %l = kf.linear %x, %r precision(f32) : tensor<?x128xf32>, !kf.qweight<f32, [8, 128]> -> tensor<?x8xf32>
    %hi, %hw = kf.moe_gate %l hash(%t : !kf.qweight<i32, [16, 3]>[%tokens : tensor<?xi32>]) k(3) route_scale(1.5)
        : tensor<?x8xf32> -> tensor<?x3xi32>, tensor<?x3xf32>
    %li, %lw = kf.moe_gate %l bias(%b : !kf.qweight<f32, [8]>) k(3) route_scale(1.5)
        : tensor<?x8xf32> -> tensor<?x3xi32>, tensor<?x3xf32>
    %h = kf.moe %x, %hi, %hw )mlir" +
                         experts + " limit(2.0) shared_limit(1.5)" + sim +
                         "\n        " + types + R"mlir(
    %m = kf.moe %x, %li, %lw )mlir" +
                         experts + " limit(2.0) shared_limit(1.5)" + sim +
                         "\n        " + types + R"mlir(
    return %h, %m : tensor<?x128xf32>, tensor<?x128xf32>
  }
}
)mlir";
    OpRunner runner(source, {.floats = {{"router", router},
                                        {"bias", bias},
                                        {"gate", gate},
                                        {"up", up},
                                        {"down", down},
                                        {"sgate", sgate},
                                        {"sup", sup},
                                        {"sdown", sdown}},
                             .ints = {{"tid2eid", tid2eid}}});
    std::vector<float> x = randomValues(4 * kD, 28);
    std::vector<int32_t> tokens = {1, 7, 15, 1};
    std::vector<Tensor> results =
        runner.call({Tensor({4, 128}, x), Tensor({4}, tokens)});
    ASSERT_EQ(results.size(), 2u);
    reference::Options options{.simulateQuantization = simulate};
    for (size_t t = 0; t < 4; ++t) {
      std::vector<float> row = rowOf(x, t, kD);
      EXPECT_EQ(rowOf(floatsOf(results[0]), t, kD),
                reference::moe(config, lw, 0, row, tokens[t], 0, options))
          << "hash-routed, token " << t << ", simulate " << simulate;
      EXPECT_EQ(rowOf(floatsOf(results[1]), t, kD),
                reference::moe(config, lw, 1, row, tokens[t], 0, options))
          << "learned, token " << t << ", simulate " << simulate;
    }
  }
}

TEST(Ops, ArgmaxAndTheLastToken) {
  OpRunner runner(R"mlir(
module {
  func.func @f(%x: tensor<?x2x3xf32>) -> (tensor<1x2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<1x2xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %x, %c0 : tensor<?x2x3xf32>
    %last = arith.subi %n, %c1 : index
    %s = tensor.extract_slice %x[%last, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<?x2x3xf32> to tensor<1x2x3xf32>
    %r = tensor.extract_slice %x[%last, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<?x2x3xf32> to tensor<2x3xf32>
    %c = tensor.collapse_shape %r [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
    %e = tensor.expand_shape %c [[0, 1, 2]] output_shape [1, 2, 3] : tensor<6xf32> into tensor<1x2x3xf32>
    %a = kf.argmax %e : tensor<1x2x3xf32> -> tensor<1x2xi32>
    return %s, %r, %c, %a : tensor<1x2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<1x2xi32>
  }
}
)mlir");
  float nan = std::nanf("");
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 0, 7, 7, nan, -1, nan};
  std::vector<Tensor> results = runner.call({Tensor({2, 2, 3}, x)});
  ASSERT_EQ(results.size(), 4u);
  std::vector<float> last(x.begin() + 6, x.end());
  auto same = [](std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  EXPECT_TRUE(same(results[0].getFloats(), last));
  EXPECT_EQ(results[0].getShape().size(), 3u);
  EXPECT_TRUE(same(results[1].getFloats(), last));
  EXPECT_TRUE(same(results[2].getFloats(), last));
  // The first of two equal maxima; NaN never wins.
  std::vector<int32_t> argmax(results[3].getInts().begin(),
                              results[3].getInts().end());
  EXPECT_EQ(argmax, (std::vector<int32_t>{1, 1}));
}

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
