// Plans as bytes: a plan reads back equal to itself, and bytes that are not
// a plan this runtime runs are refused in one line naming them and what is
// wrong; and the host CPU's features as /proc/cpuinfo lists them.
#include <vector>

#include "absl/strings/str_cat.h"
#include "kf/runtime/host_cpu.h"
#include "kf/runtime/plan_file.h"
#include "gmock/gmock.h"

namespace kf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Plan makePlan() {
  Plan plan;
  plan.name = "prefill";
  plan.target = "znver5";
  plan.features = {"avx2", "avx512vnni"};
  plan.model = "0123456789abcdef";
  plan.maxRows = 16;
  plan.arenaBytes = 4096;
  plan.stateBytes = 1024;
  plan.maxContext = 64;
  plan.caches = {{"blk.0.kv", 0, 512}, {"blk.0.compressor", 512, 512}};
  plan.kernels = {"norm", "matmul"};
  plan.weights = {{"g", Format::F32, {64}, std::nullopt},
                  {"blk.0.attn_q.weight",
                   Format::Q8_0,
                   {32, 64},
                   PackedLayout{Format::Q8_0, 16}}};
  plan.inputs = {{"arg0", {0, 256}}, {"result0", {0, 128}}};
  plan.steps.push_back({"attn_norm",
                        0,
                        {{OperandKind::Input, 0, 0, {0, 256}},
                         {OperandKind::Weight, 0, 0, {256, 0}},
                         {OperandKind::Arena, 0, 0, {0, 256}},
                         {OperandKind::State, 0, 512, {512, 0}}},
                        {0, 1},
                        WorkSplit::Blocks,
                        1,
                        false,
                        StepKind::Kernel,
                        {},
                        0});
  plan.steps.push_back({"q",
                        1,
                        {{OperandKind::Weight, 1, 0, {2176, 0}},
                         {OperandKind::Arena, 0, 0, {256, 0}},
                         {OperandKind::Input, 1, 0, {128, 0}}},
                        {32, 0},
                        WorkSplit::Claim,
                        16,
                        true,
                        StepKind::Kernel,
                        {},
                        1});
  return plan;
}

// A model's second plan: a decode step on the same state.
Plan makeDecodePlan() {
  Plan plan = makePlan();
  plan.name = "decode";
  plan.maxRows = 1;
  plan.steps.pop_back();
  return plan;
}

std::vector<uint8_t> serialize(const Plan &plan) {
  return *serializePlans(std::span<const Plan>(&plan, 1));
}

TEST(PlanFile, ReadsBackEqual) {
  std::vector<Plan> plans = {makePlan(), makeDecodePlan()};
  absl::StatusOr<std::vector<uint8_t>> bytes = serializePlans(plans);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::vector<Plan>> back = parsePlans(*bytes, "p.kfp");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, plans);
  // An empty plan too.
  Plan empty;
  empty.maxRows = 1;
  EXPECT_TRUE(parsePlans(serialize(empty), "empty").ok());
}

// The plans of one model share their target and state, and each has a
// name of its own.
TEST(PlanFile, RefusesPlansOfOtherModels) {
  auto error = [](std::vector<Plan> plans) {
    absl::StatusOr<std::vector<Plan>> parsed =
        parsePlans(*serializePlans(plans), "p.kfp");
    return parsed.ok() ? "" : std::string(parsed.status().message());
  };
  Plan decode = makeDecodePlan();
  decode.caches[1].bytes = 256;
  EXPECT_EQ(error({makePlan(), decode}),
            "p.kfp: plan decode has another target, model or state than plan "
            "prefill");
  decode = makeDecodePlan();
  decode.target = "x86-64-v3";
  EXPECT_THAT(error({makePlan(), decode}), HasSubstr("another target"));
  decode = makeDecodePlan();
  decode.model = "fedcba9876543210";
  EXPECT_THAT(error({makePlan(), decode}), HasSubstr("another target, model"));
  EXPECT_EQ(error({makePlan(), makePlan()}), "p.kfp: two plans named prefill");
  EXPECT_EQ(error({}), "p.kfp: 0 plans, expected 1 to 64");
}

// The state holds the caches side by side, and a step reaches no byte
// outside it.
TEST(PlanFile, RefusesStateOutsideItsBounds) {
  Plan plan = makePlan();
  plan.caches[1].offset = 256;
  EXPECT_THAT(std::string(plan.validate().message()),
              HasSubstr("plan cache blk.0.compressor: bytes [256, +512) "
                        "overlap another or leave the state of 1024"));
  plan = makePlan();
  plan.caches[1].bytes = 513;
  EXPECT_FALSE(plan.validate().ok());
  plan = makePlan();
  plan.steps[0].operands[3].offset = 768;
  EXPECT_THAT(std::string(plan.validate().message()),
              HasSubstr("plan step 0 (attn_norm): operand 3: bytes [768, "
                        "+512) outside the state of 1024"));
  plan = makePlan();
  plan.steps[1].rows = 2;
  EXPECT_THAT(std::string(plan.validate().message()),
              HasSubstr("plan step 1 (q): rows 2: a step of its own rows "
                        "takes one"));
  // One row whatever the run's: no operand grows with the run's rows.
  plan = makePlan();
  plan.steps[1].operands[1].bytes = {0, 256};
  EXPECT_THAT(std::string(plan.validate().message()),
              HasSubstr("plan step 1 (q): rows 1: a step of its own rows"));
  plan = makePlan();
  plan.maxContext = 0;
  EXPECT_THAT(std::string(plan.validate().message()),
              HasSubstr("a state of 1024 bytes for sequences of 0 tokens"));
}

std::string parseError(std::span<const uint8_t> bytes) {
  absl::StatusOr<std::vector<Plan>> plans = parsePlans(bytes, "p.kfp");
  return plans.ok() ? "" : std::string(plans.status().message());
}

TEST(PlanFile, RefusesWhatIsNotAPlanItRuns) {
  std::vector<uint8_t> bytes = serialize(makePlan());
  // Cut short anywhere: the GGUF reader's own error.
  for (size_t size :
       {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_THAT(parseError(std::span(bytes).first(size)), HasSubstr("p.kfp"))
        << size;

  // A plan of another version.
  Plan plan = makePlan();
  std::vector<uint8_t> other = bytes;
  // The version is the first value: the u32 after its key.
  const std::string versionKey = "kf.plan.abi_version";
  auto at = std::search(other.begin(), other.end(), versionKey.begin(),
                        versionKey.end());
  ASSERT_NE(at, other.end());
  at[versionKey.size() + 4] = KF_PLAN_ABI_VERSION + 1;
  EXPECT_THAT(parseError(other),
              HasSubstr(absl::StrCat(
                  "p.kfp: a plan of ABI version ", KF_PLAN_ABI_VERSION + 1,
                  "; this runtime runs version ", KF_PLAN_ABI_VERSION)));

  // A plan the runtime would refuse to run.
  plan = makePlan();
  plan.steps[1].operands[1].offset = 4000;
  EXPECT_THAT(parseError(serialize(plan)),
              HasSubstr("p.kfp: prefill: plan step 1 (q): operand 1: bytes "
                        "[4000, "));

  // A layout the runtime does not pack.
  plan = makePlan();
  plan.weights[1].layout->rows = 5;
  EXPECT_THAT(parseError(serialize(plan)),
              HasSubstr("p.kfp: weight blk.0.attn_q.weight: layout "
                        "'q8_0_r5' is not one this runtime packs"));
}

// Names are quoted in messages: one with a control byte would break the
// message's one line, so no plan holds one.
TEST(PlanFile, RefusesNamesWithControlBytes) {
  Plan plan = makePlan();
  plan.steps[0].name = "attn\nnorm";
  EXPECT_EQ(parseError(serialize(plan)),
            "p.kfp: kf.plan.0.steps.name holds a name with a control byte");
  plan = makePlan();
  plan.weights[0].name = "g\x7f";
  EXPECT_EQ(parseError(serialize(plan)),
            "p.kfp: kf.plan.0.weights.name holds a name with a control "
            "byte");
}

TEST(PlanFile, RefusesOtherGguf) {
  std::vector<uint8_t> bytes = serialize(makePlan());
  // Rename the version key: a GGUF file, but not a plan.
  const std::string versionKey = "kf.plan.abi_version";
  auto at = std::search(bytes.begin(), bytes.end(), versionKey.begin(),
                        versionKey.end());
  ASSERT_NE(at, bytes.end());
  at[0] = 'x';
  EXPECT_EQ(parseError(bytes), "p.kfp: not a plan (no kf.plan.abi_version)");
}

TEST(HostCpu, ReadsTheFirstProcessorsFlags) {
  const char *cpuinfo = "processor\t: 0\n"
                        "flags\t\t: fpu sse4_2 avx2 fma avx512f avx512_vnni\n"
                        "processor\t: 1\n"
                        "flags\t\t: fpu amx_tile\n";
  EXPECT_THAT(parseCpuFeatures(cpuinfo),
              ElementsAre("sse4.2", "avx2", "fma", "avx512f", "avx512vnni"));
  EXPECT_THAT(parseCpuFeatures("Features\t: fp asimd asimddp i8mm\n"),
              ElementsAre("neon", "dotprod", "i8mm"));
  EXPECT_TRUE(parseCpuFeatures("").empty());
}

TEST(HostCpu, ChecksRequiredFeatures) {
  std::vector<std::string> have = {"avx2", "fma"};
  std::vector<std::string> need = {"avx2", "avx512vnni"};
  EXPECT_EQ(checkCpuFeatures(need, have, "plan p.kfp").message(),
            "plan p.kfp: its code uses avx512vnni, which this CPU lacks");
  EXPECT_TRUE(checkCpuFeatures(std::span(need).first(1), have, "p").ok());
}

} // namespace
} // namespace kf
