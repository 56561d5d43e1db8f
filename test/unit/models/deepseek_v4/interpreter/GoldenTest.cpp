// The builder's whole graph of the tiny model, run by the interpreter,
// against the reference forward on the same file: a prefill of 200 tokens
// and 20 decode steps, every layer's stream state, the logits and their
// argmax, with the quantization simulations and without; and once with the
// prompt in chunks of 64 tokens (the graph's rings sized for them), each
// continuing the sequence, against the reference's prefill of the whole
// prompt at once.
//
// Tolerance: none — the results must be bit-identical, and are. The graph
// runs the reference's own kernels on the same operands in the same order
// (the interpreter adds no arithmetic: reshapes, slices and index
// bookkeeping move values, they compute none), and both sides decode the
// same file with the same codecs, so every value is the same floating-point
// computation. Any difference is a graph that says something other than the
// reference does. The largest relative difference is printed as well; it is
// 0.
//
// The simulated graph runs a second time carrying the kernel passes'
// decisions (--kf-select-kernels, --kf-tile-columns, --kf-block-caches for
// znver5) as attributes: what that case checks is that every matmul was
// decided and that the interpreter, which runs the reference kernels whatever
// the attributes say, leaves them alone. A wrong decision cannot fail it;
// the decisions are certified where they take effect, in
// CompiledGoldenTest.cpp, which lowers them to compiled kernels and runs
// those against the reference.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "kf/Dialect/KfMatmuls.h"
#include "kf/Passes/Passes.h"
#include "kf/deepseek_v4/builder/graph_builder.h"
#include "kf/deepseek_v4/reference/model.h"
#include "mlir/Pass/PassManager.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

constexpr size_t kPrefill = 200, kDecode = 20;

double maxRelativeDifference(std::span<const float> a,
                             std::span<const float> b) {
  if (a.size() != b.size())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst,
                     std::fabs(static_cast<double>(a[i]) - b[i]) /
                         std::max(std::fabs(static_cast<double>(b[i])), 1e-30));
  return worst;
}

bool bitIdentical(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

int32_t firstArgmax(std::span<const float> values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) -
                              values.begin());
}

/// The layer of an op at loc("blk.L.ffn_hc_post"), the stream state after
/// layer L (docs/graph.md).
std::optional<uint32_t> streamLayer(mlir::Operation *op) {
  auto name = llvm::dyn_cast<mlir::NameLoc>(op->getLoc());
  if (!name)
    return std::nullopt;
  llvm::StringRef text = name.getName().getValue();
  if (!text.consume_front("blk.") || !text.consume_back(".ffn_hc_post"))
    return std::nullopt;
  uint32_t layer = 0;
  if (text.getAsInteger(10, layer))
    return std::nullopt;
  return layer;
}

struct GoldenCase {
  bool simulate;
  /// Run the kernel passes over the graph before interpreting it, so that it
  /// carries their decisions as attributes (which the interpreter ignores).
  bool kernelDecisions;
  /// Tokens of a prefill call (0: the whole prompt in one).
  size_t chunk = 0;
};

void PrintTo(const GoldenCase &c, std::ostream *os) {
  *os << (c.simulate ? "simulated" : "exact")
      << (c.kernelDecisions ? ", carrying kernel decision attributes" : "");
  if (c.chunk)
    *os << ", the prompt in chunks of " << c.chunk;
}

/// Decides every matmul's kernel for znver5 and checks that the graph holds
/// the decisions.
void decideKernels(mlir::ModuleOp graph) {
  mlir::PassManager pm(graph->getContext());
  mlir::kf::KfSetTargetOptions target;
  target.targetName = "znver5";
  pm.addPass(mlir::kf::createKfSetTarget(target));
  pm.addPass(mlir::kf::createKfSelectKernels());
  pm.addPass(mlir::kf::createKfTileColumns());
  pm.addPass(mlir::kf::createKfBlockCaches());
  ASSERT_TRUE(mlir::succeeded(pm.run(graph)));
  int decided = 0;
  graph.walk([&](mlir::Operation *op) {
    for (const mlir::kf::Matmul &matmul : mlir::kf::getMatmuls(op)) {
      mlir::kf::KernelAttr kernel = mlir::kf::getKernel(op, matmul.name);
      EXPECT_TRUE(kernel && kernel.hasColumnTiles() && kernel.getL1K())
          << "an undecided matmul";
      ++decided;
    }
  });
  EXPECT_GT(decided, 0);
}

class Golden : public ::testing::TestWithParam<GoldenCase> {
protected:
  static void SetUpTestSuite() { model = makeTinyModel(5).release(); }
  static void TearDownTestSuite() { delete model; }
  static TinyModel *model;
};

TinyModel *Golden::model = nullptr;

TEST_P(Golden, InterpreterEqualsTheReferenceForward) {
  bool simulate = GetParam().simulate;
  ASSERT_TRUE(model);
  const Config &config = model->config;
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  const size_t chunk = GetParam().chunk;
  GraphOptions options{.name = "tiny", .simulate = simulate};
  if (chunk)
    options.maxRows = static_cast<int64_t>(chunk);
  mlir::OwningOpRef<mlir::ModuleOp> graph =
      buildGraph(*context, config, model->formats, options);
  ASSERT_TRUE(graph);
  if (GetParam().kernelDecisions) {
    ASSERT_NO_FATAL_FAILURE(decideKernels(*graph));
  }
  absl::StatusOr<Interpreter> interpreter =
      Interpreter::create(*graph, *model->file);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  std::map<uint32_t, std::vector<float>> streams;
  interpreter->setObserver(
      [&](mlir::Operation *op, std::span<const Tensor *> results) {
        if (std::optional<uint32_t> layer = streamLayer(op))
          streams[*layer].assign(results[0]->getFloats().begin(),
                                 results[0]->getFloats().end());
      });
  reference::Model reference(
      *model->weights, reference::Options{.simulateQuantization = simulate,
                                          .keepLayerStreams = true});

  const TokenRun run(config, kPrefill, kDecode, 17, chunk);
  double worst = 0;
  double interpreterSeconds = 0, referenceSeconds = 0;
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  for (size_t step = 0; step < run.steps(); ++step) {
    std::string where = run.describe(step);
    streams.clear();
    Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<Tensor>> got = interpreter->run(
        run.function(step), run.stepTokens(step), run.stepPositions(step));
    interpreterSeconds += seconds(start);
    ASSERT_TRUE(got.ok()) << where << ": " << got.status();
    // The reference prefills the whole prompt at once: the last chunk is
    // checked against it, its rows against the prompt's last ones.
    if (run.isPrefill(step) && !run.isLastPrefill(step))
      continue;
    start = Clock::now();
    reference::ForwardResult expected =
        run.isPrefill(step) ? reference.prefill(run.promptTokens())
                            : run.runReference(reference, step);
    referenceSeconds += seconds(start);

    ASSERT_EQ(streams.size(), config.nLayer) << where;
    for (uint32_t l = 0; l < config.nLayer; ++l) {
      std::span<const float> want = expected.layerStreams[l];
      want = want.last(std::min(want.size(), streams[l].size()));
      worst = std::max(worst, maxRelativeDifference(streams[l], want));
      EXPECT_TRUE(bitIdentical(streams[l], want)) << where << ", layer " << l;
    }
    ASSERT_EQ(got->size(), 2u);
    const Tensor &logits = (*got)[0];
    const Tensor &argmax = (*got)[1];
    ASSERT_EQ(logits.getRank(), 2);
    worst = std::max(
        worst, maxRelativeDifference(logits.getFloats(), expected.logits));
    EXPECT_TRUE(bitIdentical(logits.getFloats(), expected.logits)) << where;
    ASSERT_EQ(argmax.getNumElements(), 1);
    EXPECT_EQ(argmax.getInts()[0], firstArgmax(expected.logits)) << where;
  }
  EXPECT_EQ(worst, 0.0);
  std::printf("simulate %d: largest relative difference %.3g; interpreter "
              "%.2f s, reference %.2f s\n",
              simulate, worst, interpreterSeconds, referenceSeconds);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, Golden,
    ::testing::Values(GoldenCase{false, false}, GoldenCase{true, false},
                      GoldenCase{true, true}, GoldenCase{true, false, 64}),
    [](const ::testing::TestParamInfo<GoldenCase> &info) {
      std::string name = info.param.simulate ? "Simulated" : "Exact";
      if (info.param.kernelDecisions)
        name += "WithDecisionAttributes";
      if (info.param.chunk)
        name += "InChunks";
      return name;
    });

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
