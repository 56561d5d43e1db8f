// The tiny model compiled into plans and run by the runtime's executor
// against the interpreter running the same lowered graph: kf-compile's
// pipeline for this machine (its matmuls lowered to JIT-compiled kernels),
// then, for the plans, --kf-bound-context, --kf-lower-ops (every other op
// to its step kernel) and --kf-build-plan (a prefill plan and a decode plan
// sharing the model's state). A prefill of kPrefill tokens and kDecode
// decode steps, teacher-forced; the logits and the greedy token of every
// step are compared, on 1 and 2 threads, and on 2 threads again for the
// same plans written as one artifact (kf-compile's) and run by a session.
//
// Both sides call the same matmul kernels on the same inputs, and every op
// kernel is certified against the interpreter's op bit for bit on its test
// values (docs/engine.md, "Op kernels"); where an op kernel's agreement is
// "by construction within one bf16 ulp" (kf.rms_norm's f32 compute,
// kf.hadamard's fast transform beyond 29 − log2 n binades, the fdlibm e^x,
// sin and cos against glibc's near rounding boundaries) a model's values
// could meet the difference, and the random tiny model amplifies any
// difference chaotically. The test therefore demands bit-for-bit logits
// (what the certification promises on the values met here, and what the
// plans give) and reports the first step where they differ and by how
// much: a difference is a bug to explain, not a tolerance to widen. The
// state starts as 0xff bytes, NaNs wherever read as floats, so a kernel
// reading what the sequence has not written shows too.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "PlanSupport.h"
#include "kf/runtime/session.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

constexpr size_t kPrefill = 48, kDecode = 12;
// The prefill plan takes 16 rows a run: the prompt runs in three chunks, the
// later ones continuing the sequence through the window rings.
constexpr size_t kChunk = 16;
// The plans hold sequences of this many tokens: the prefill and the decode
// steps, and more, so that the ratio-128 compressor has entries.
constexpr int64_t kMaxContext = 512;

class PlanGolden : public ::testing::TestWithParam<int> {};

TEST_P(PlanGolden, PlansRunTheGraphAsTheInterpreterDoes) {
  const int threads = GetParam();
  std::unique_ptr<TinyModel> model = makeTinyModel(5);
  ASSERT_TRUE(model);
  const Config &config = model->config;
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> graph =
      lowerTinyGraph(*context, *model,
                     GraphOptions{.name = "tiny",
                                  .simulate = true,
                                  .maxRows = static_cast<int64_t>(kChunk)});
  ASSERT_TRUE(graph);
  std::unique_ptr<TinyPlans> plans =
      buildTinyPlans(*graph, static_cast<int64_t>(kChunk), kMaxContext);
  ASSERT_TRUE(plans);

  // The interpreter's kernels, JIT-compiled for this machine.
  llvm::Expected<codegen::JitKernelModule> graphJit = codegen::jitKernelModule(
      graph->lookupSymbol<mlir::ModuleOp>("kernels"),
      mlir::kf::TargetAttr::lookup(*graph).getTargetInfo());
  ASSERT_TRUE(static_cast<bool>(graphJit))
      << llvm::toString(graphJit.takeError());

  std::string path = writeTinyModel(
      *model, "plan_golden_" + std::to_string(threads) + ".gguf");
  ThreadPool pool(threads);
  std::unique_ptr<BoundPlans> bound = BoundPlans::bind(*plans, path, pool);
  ASSERT_TRUE(bound);

  absl::StatusOr<Interpreter> interpreter =
      Interpreter::create(*graph, *model->file);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  interpreter->setKernelResolver(
      [&](std::string_view symbol) -> absl::StatusOr<void *> {
        llvm::Expected<void *> address = graphJit->lookup(symbol);
        if (!address)
          return absl::NotFoundError(llvm::toString(address.takeError()));
        return *address;
      });

  const TokenRun run(config, kPrefill, kDecode, 17, kChunk);
  const size_t vocab = static_cast<size_t>(config.nVocab);
  std::vector<std::vector<float>> wanted; // the interpreter's logits
  for (size_t step = 0; step < run.steps(); ++step) {
    SCOPED_TRACE(run.describe(step));
    absl::StatusOr<std::vector<Tensor>> want = interpreter->run(
        run.function(step), run.stepTokens(step), run.stepPositions(step));
    ASSERT_TRUE(want.ok()) << want.status();

    std::vector<int32_t> tokens(run.stepTokens(step).begin(),
                                run.stepTokens(step).end());
    std::vector<int64_t> positions(run.stepPositions(step).begin(),
                                   run.stepPositions(step).end());
    std::vector<float> logits(vocab, -1.0f);
    std::vector<int32_t> argmax(1, -1);
    std::vector<std::span<uint8_t>> buffers = {
        bytesOf(tokens), bytesOf(positions), bytesOf(logits), bytesOf(argmax)};
    Executor &executor = run.isPrefill(step) ? *bound->prefill : *bound->decode;
    absl::Status ran =
        executor.run(pool, static_cast<int64_t>(tokens.size()), buffers);
    ASSERT_TRUE(ran.ok()) << ran;

    std::span<const float> expected = (*want)[0].getFloats();
    ASSERT_EQ(expected.size(), vocab);
    wanted.emplace_back(expected.begin(), expected.end());
    size_t differing = 0;
    double worst = 0;
    for (size_t i = 0; i < vocab; ++i)
      if (std::memcmp(&logits[i], &expected[i], 4) != 0) {
        ++differing;
        worst = std::max(
            worst, std::fabs(static_cast<double>(logits[i]) - expected[i]));
      }
    EXPECT_EQ(differing, 0u)
        << "logits differ from the interpreter's, by " << worst << " at most";
    EXPECT_EQ(argmax[0], (*want)[1].getInts()[0]);
    if (::testing::Test::HasFailure())
      return;
  }

  // The same plans as one artifact (the kernels compiled ahead of time,
  // loaded without LLVM) in a session on the model file: the same logits.
  // Once, on two threads: it compiles every kernel again.
  if (threads != 2)
    return;
  std::string artifact = ::testing::TempDir() + "plan_golden.kfp";
  ASSERT_TRUE(plans->writeArtifact(artifact));
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::open(artifact, path, pool);
  ASSERT_TRUE(session.ok()) << session.status();
  // The session takes the whole prompt and runs it in the plan's chunks.
  for (size_t step = 0; step < run.steps(); ++step) {
    if (run.isPrefill(step) && !run.isLastPrefill(step))
      continue;
    SCOPED_TRACE("artifact, " + run.describe(step));
    absl::StatusOr<std::span<const float>> logits =
        run.isPrefill(step) ? (*session)->prefill(run.promptTokens())
                            : (*session)->decode(run.stepTokens(step)[0]);
    ASSERT_TRUE(logits.ok()) << logits.status();
    ASSERT_EQ(logits->size(), vocab);
    EXPECT_EQ(std::memcmp(logits->data(), wanted[step].data(), vocab * 4), 0)
        << "the artifact's logits differ from the interpreter's";
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, PlanGolden, ::testing::Values(1, 2));

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
