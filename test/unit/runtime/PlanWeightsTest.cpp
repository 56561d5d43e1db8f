// A plan's weights bound from a GGUF file: each packed to its layout,
// byte for byte what kf::packWeights (kf::packExpertWeights for a stack)
// gives, whatever the thread count and however a large tensor is cut into
// parts; weights read as stored are the file's bytes in place; a file that
// does not hold what the plan was compiled for is refused in one line.
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "TempDir.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/plan_weights.h"
#include "kf/runtime/quant.h"
#include "gmock/gmock.h"

namespace kf {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> quantized(Format format, int64_t elements, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> values(elements);
  for (float &v : values)
    v = dist(rng);
  std::vector<uint8_t> bytes(*rowBytes(format, elements));
  EXPECT_TRUE(quantize(format, values, bytes).ok());
  return bytes;
}

// The tensors: a norm's f32 vector, a Q8_0 matrix large enough to be packed
// in two parts, and a Q4_0 expert stack.
struct Model {
  std::vector<uint8_t> g = quantized(Format::F32, 64, 1);
  std::vector<uint8_t> w = quantized(Format::Q8_0, 4096 * 1024, 2);
  std::vector<uint8_t> e = quantized(Format::Q4_0, 3 * 16 * 64, 3);

  std::string write(const testing::TempDir &dir) const {
    gguf::Writer writer;
    writer.addMetadata("general.architecture", "test");
    writer.addTensor("g", Format::F32, {64}, std::span<const uint8_t>(g));
    writer.addTensor("w", Format::Q8_0, {1024, 4096},
                     std::span<const uint8_t>(w));
    writer.addTensor("e", Format::Q4_0, {64, 16, 3},
                     std::span<const uint8_t>(e));
    std::string path = dir.file("model.gguf");
    EXPECT_TRUE(writer.write(path).ok());
    return path;
  }
};

Plan makePlan() {
  Plan plan;
  plan.maxRows = 1;
  plan.weights = {
      {"g", Format::F32, {64}, std::nullopt},
      {"w", Format::Q8_0, {4096, 1024}, PackedLayout{Format::Q8_0, 16}},
      {"e", Format::Q4_0, {3, 16, 64}, PackedLayout{Format::Q4_0, 8}}};
  return plan;
}

TEST(PlanWeights, PacksEachWeightToItsLayout) {
  testing::TempDir dir;
  Model model;
  std::string path = model.write(dir);
  Plan plan = makePlan();
  std::vector<uint8_t> w =
      *packWeights(*plan.weights[1].layout, model.w, 4096, 1024);
  std::vector<uint8_t> e =
      *packExpertWeights(*plan.weights[2].layout, model.e, 3, 16, 64);
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    LoadProgress progress;
    absl::StatusOr<PlanWeights> weights =
        PlanWeights::load(plan, path, pool, &progress);
    ASSERT_TRUE(weights.ok()) << weights.status();
    const auto &spans = weights->spans();
    ASSERT_EQ(spans.size(), 3u);
    EXPECT_TRUE(std::equal(spans[0].begin(), spans[0].end(), model.g.begin(),
                           model.g.end()));
    EXPECT_TRUE(
        std::equal(spans[1].begin(), spans[1].end(), w.begin(), w.end()));
    EXPECT_TRUE(
        std::equal(spans[2].begin(), spans[2].end(), e.begin(), e.end()));
    EXPECT_EQ(weights->packedBytes(), w.size() + e.size());
    EXPECT_EQ(weights->sourceBytes(),
              model.g.size() + model.w.size() + model.e.size());
    // Every packed tensor's file bytes are counted once.
    EXPECT_EQ(progress.done.load(), model.w.size() + model.e.size());
    EXPECT_EQ(progress.total.load(), progress.done.load());
    EXPECT_EQ(*planWeightBytes(plan.weights[2]), e.size());
    // A packed copy of 2 MiB or more starts on a huge-page boundary
    // (kf::PageBuffer): w's 4.25 MiB.
    ASSERT_GE(spans[1].size(), 2u << 20);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(spans[1].data()) % (2 << 20), 0u);
  }
}

// The process's anonymous resident bytes (RssAnon), or none without
// /proc.
std::optional<uint64_t> residentAnonymousBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("RssAnon:"))
      return std::stoull(line.substr(8)) * 1024;
  return std::nullopt;
}

// Loading holds the packed copies and no more: a small weight does not take
// a huge page of its own, nor a large one a huge page for its tail (the
// expert stack here is 3 KiB, the matrix 4.25 MiB).
TEST(PlanWeights, HoldsTheirPackedBytesResidentAndNoMore) {
  testing::TempDir dir;
  Model model;
  std::string path = model.write(dir);
  Plan plan = makePlan();
  ThreadPool pool(2);
  std::optional<uint64_t> before = residentAnonymousBytes();
  if (!before)
    GTEST_SKIP() << "no /proc/self/status RssAnon on this system";
  absl::StatusOr<PlanWeights> weights = PlanWeights::load(plan, path, pool);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const uint64_t grown = *residentAnonymousBytes() - *before;
  EXPECT_LE(grown, weights->packedBytes() + (uint64_t{1} << 20));
}

// A session's memory counts a weight both plans read once, a packed one at
// its packed size, one read in place at its file size, a table an
// embedding step looks up at one row; every plan's arena; the state once.
TEST(PlanWeights, SessionMemoryCountsEachWeightOnce) {
  Plan prefill = makePlan(), decode = makePlan();
  prefill.arenaBytes = 4096;
  decode.arenaBytes = 64;
  prefill.stateBytes = decode.stateBytes = 1000;
  // A Q8_0 table of 8 rows decode looks up by token.
  decode.weights.push_back({"table", Format::Q8_0, {8, 1024}, std::nullopt});
  decode.kernels = {"kf_embed_q8_0_v8_d1024"};
  decode.steps.push_back({"embed",
                          0,
                          {{OperandKind::Weight, 3, 0, {0, 0}}},
                          {1, 0},
                          WorkSplit::Blocks,
                          1,
                          false,
                          StepKind::Kernel,
                          {},
                          0});
  EXPECT_EQ(decode.tokenLookups(),
            (std::vector<bool>{false, false, false, true}));
  const Plan *plans[] = {&prefill, &decode};
  absl::StatusOr<SessionMemory> memory = sessionMemory(plans);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->packedWeights, *planWeightBytes(prefill.weights[1]) +
                                       *planWeightBytes(prefill.weights[2]));
  EXPECT_EQ(memory->mappedWeights, 64 * 4 + *rowBytes(Format::Q8_0, 1024));
  EXPECT_EQ(memory->state, 1000u);
  EXPECT_EQ(memory->arenas, 4096u + 64u);
  EXPECT_EQ(memory->total(),
            memory->packedWeights + memory->mappedWeights + 1000u + 4160u);
  std::vector<std::vector<size_t>> indices;
  Plan merged = mergeWeights(plans, indices);
  EXPECT_EQ(merged.weights.size(), 4u);
  EXPECT_EQ(indices[1], (std::vector<size_t>{0, 1, 2, 3}));
}

std::string loadError(const Plan &plan, const std::string &path) {
  ThreadPool pool(2);
  absl::StatusOr<PlanWeights> weights = PlanWeights::load(plan, path, pool);
  return weights.ok() ? "" : std::string(weights.status().message());
}

TEST(PlanWeights, RefusesAFileThatDoesNotHoldThePlansWeights) {
  testing::TempDir dir;
  std::string path = Model().write(dir);
  Plan plan = makePlan();
  plan.weights[0].name = "gamma";
  EXPECT_EQ(loadError(plan, path),
            path + ": no tensor gamma, which the plan reads");

  plan = makePlan();
  plan.weights[1].format = Format::Q4_0;
  plan.weights[1].layout->format = Format::Q4_0;
  EXPECT_EQ(loadError(plan, path),
            path + ": tensor w is q8_0 [4096, 1024]; the plan was compiled "
                   "for q4_0 [4096, 1024]");

  plan = makePlan();
  plan.weights[2].shape = {4, 16, 64};
  EXPECT_THAT(loadError(plan, path),
              HasSubstr("tensor e is q4_0 [3, 16, 64]; the plan was compiled "
                        "for q4_0 [4, 16, 64]"));

  EXPECT_THAT(loadError(makePlan(), dir.file("absent.gguf")),
              HasSubstr("absent.gguf"));
}

} // namespace
} // namespace kf
