// The plan executor on plans of hand-written step kernels: work split and
// barriers, results independent of the thread count, and every bad plan or
// run refused with a message before any kernel runs.
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "kf/runtime/executor.h"
#include "kf/runtime/packing.h"
#include "gmock/gmock.h"

namespace kf {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kWidth = 8; // floats per row
constexpr int64_t kMaxRows = 40;
constexpr int64_t kRowBytes = kWidth * 4;

// y[r] = x[r] * w, row by row: operands x (input), w (weight), y (arena).
void scaleRows(void *const *operands, int64_t, int64_t begin, int64_t end) {
  auto *x = static_cast<const float *>(operands[0]);
  auto *w = static_cast<const float *>(operands[1]);
  auto *y = static_cast<float *>(operands[2]);
  for (int64_t r = begin; r < end; ++r)
    for (int64_t i = 0; i < kWidth; ++i)
      y[r * kWidth + i] = x[r * kWidth + i] * w[i];
}

// total[i] = the sum over all m rows of y: it reads every thread's rows.
void sumRows(void *const *operands, int64_t m, int64_t begin, int64_t end) {
  auto *y = static_cast<const float *>(operands[0]);
  auto *total = static_cast<float *>(operands[1]);
  for (int64_t i = begin; i < end; ++i) {
    float sum = 0;
    for (int64_t r = 0; r < m; ++r)
      sum += y[r * kWidth + i];
    total[i] = sum;
  }
}

// out[r] = y[r] + total: operands y, total (arena), out (input).
void addTotal(void *const *operands, int64_t, int64_t begin, int64_t end) {
  auto *y = static_cast<const float *>(operands[0]);
  auto *total = static_cast<const float *>(operands[1]);
  auto *out = static_cast<float *>(operands[2]);
  for (int64_t r = begin; r < end; ++r)
    for (int64_t i = 0; i < kWidth; ++i)
      out[r * kWidth + i] = y[r * kWidth + i] + total[i];
}

// The three steps above: x * w in blocks of rows, a barrier, the column sums
// on one thread, a barrier, the sums added back in claimed batches of 3.
Plan makePlan() {
  Plan plan;
  plan.maxRows = kMaxRows;
  const int64_t totalOffset = kMaxRows * kRowBytes;
  plan.arenaBytes = totalOffset + kRowBytes;
  plan.kernels = {"scale_rows", "sum_rows", "add_total"};
  plan.weights = {{"w", Format::F32, {kWidth}, std::nullopt}};
  plan.inputs = {{"x", {0, kRowBytes}}, {"out", {0, kRowBytes}}};
  RowExtent rows{0, kRowBytes}, row{kRowBytes, 0};
  plan.steps.push_back({"scale",
                        0,
                        {{OperandKind::Input, 0, 0, rows},
                         {OperandKind::Weight, 0, 0, row},
                         {OperandKind::Arena, 0, 0, rows}},
                        {0, 1},
                        WorkSplit::Blocks,
                        1,
                        false,
                        StepKind::Kernel,
                        {},
                        0});
  plan.steps.push_back({"sum",
                        1,
                        {{OperandKind::Arena, 0, 0, rows},
                         {OperandKind::Arena, 0, totalOffset, row}},
                        {kWidth, 0},
                        WorkSplit::Single,
                        1,
                        true,
                        StepKind::Kernel,
                        {},
                        0});
  plan.steps.push_back({"add",
                        2,
                        {{OperandKind::Arena, 0, 0, rows},
                         {OperandKind::Arena, 0, totalOffset, row},
                         {OperandKind::Input, 1, 0, rows}},
                        {0, 1},
                        WorkSplit::Claim,
                        3,
                        true,
                        StepKind::Kernel,
                        {},
                        0});
  return plan;
}

std::vector<float> weightValues() {
  std::vector<float> w(kWidth);
  std::iota(w.begin(), w.end(), 1.0f);
  return w;
}

absl::StatusOr<Executor> makeExecutor(Plan plan, std::span<const float> w) {
  return Executor::create(
      std::move(plan), {scaleRows, sumRows, addTotal},
      {std::span(reinterpret_cast<const uint8_t *>(w.data()), w.size() * 4)});
}

std::vector<float> runPlan(int threads, int64_t m) {
  std::vector<float> w = weightValues();
  absl::StatusOr<Executor> executor = makeExecutor(makePlan(), w);
  EXPECT_TRUE(executor.ok()) << executor.status();
  std::vector<float> x(m * kWidth), out(m * kWidth, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 13) - 6.0f;
  ThreadPool pool(threads);
  std::vector<std::span<uint8_t>> inputs = {
      {reinterpret_cast<uint8_t *>(x.data()), x.size() * 4},
      {reinterpret_cast<uint8_t *>(out.data()), out.size() * 4}};
  absl::Status s = executor->run(pool, m, inputs);
  EXPECT_TRUE(s.ok()) << s;
  // The same numbers, serially.
  std::vector<float> total(kWidth, 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < kWidth; ++i)
      total[i] += x[r * kWidth + i] * w[i];
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < kWidth; ++i)
      EXPECT_EQ(out[r * kWidth + i], x[r * kWidth + i] * w[i] + total[i])
          << "row " << r << ", column " << i << ", " << threads << " threads";
  return out;
}

TEST(Executor, RunsEveryStepOnAnyThreadCount) {
  for (int64_t m : {int64_t{1}, int64_t{2}, int64_t{17}, kMaxRows}) {
    std::vector<float> one = runPlan(1, m);
    for (int threads : {2, 3, 5})
      EXPECT_EQ(runPlan(threads, m), one) << m << " rows";
  }
}

TEST(Executor, CountsItsBarriers) { EXPECT_EQ(makePlan().barriers(), 2); }

// Each claimed batch runs once: every item is counted exactly once however
// the threads race for them.
TEST(Executor, ClaimsEveryItemOnce) {
  Plan plan;
  plan.maxRows = 1;
  constexpr int64_t kItems = 1001;
  plan.arenaBytes = kItems * 4;
  plan.kernels = {"count"};
  plan.steps.push_back({"count",
                        0,
                        {{OperandKind::Arena, 0, 0, {kItems * 4, 0}}},
                        {kItems, 0},
                        WorkSplit::Claim,
                        7,
                        false,
                        StepKind::Kernel,
                        {},
                        0});
  kf_step_fn count = [](void *const *operands, int64_t, int64_t begin,
                        int64_t end) {
    auto *n = static_cast<int32_t *>(operands[0]);
    for (int64_t i = begin; i < end; ++i)
      ++n[i];
  };
  absl::StatusOr<Executor> e = Executor::create(plan, {count}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  std::memset(e->arena().data(), 0, e->arena().size());
  ThreadPool pool(4);
  for (int run = 0; run < 50; ++run)
    ASSERT_TRUE(e->run(pool, 1, {}).ok());
  const auto *n = reinterpret_cast<const int32_t *>(e->arena().data());
  for (int64_t i = 0; i < kItems; ++i)
    ASSERT_EQ(n[i], 50) << "item " << i;
}

// A profile puts a step's time where it went: a step one thread runs for
// 20 ms is work of that step, and the other thread's 20 ms at the barrier
// after it is a wait of the next step.
TEST(Executor, ProfilesWorkAndWaits) {
  Plan plan;
  plan.maxRows = 1;
  plan.kernels = {"sleep", "nothing"};
  auto step = [](uint32_t kernel, WorkSplit split, bool barrier) {
    return PlanStep{kernel == 0 ? "sleep" : "nothing",
                    kernel,
                    {},
                    {1, 0},
                    split,
                    1,
                    barrier,
                    StepKind::Kernel,
                    {},
                    0};
  };
  plan.steps = {step(0, WorkSplit::Single, false),
                step(1, WorkSplit::Blocks, true)};
  kf_step_fn sleep = [](void *const *, int64_t, int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  kf_step_fn nothing = [](void *const *, int64_t, int64_t, int64_t) {};
  absl::StatusOr<Executor> e = Executor::create(plan, {sleep, nothing}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ThreadPool pool(2);
  ASSERT_TRUE(e->run(pool, 1, {}).ok());
  EXPECT_EQ(e->profile().runs, 0);
  EXPECT_TRUE(e->profile().work.empty());
  e->setProfiling(true);
  for (int run = 0; run < 2; ++run)
    ASSERT_TRUE(e->run(pool, 1, {}).ok());
  const StepTimes &times = e->profile();
  EXPECT_EQ(times.runs, 2);
  ASSERT_EQ(times.work.size(), 2u);
  EXPECT_GE(times.work[0], 2 * 0.020);
  EXPECT_GE(times.wait[1], 2 * 0.015);
  EXPECT_LT(times.work[1], 0.010);
  e->setProfiling(false);
  EXPECT_TRUE(e->profile().work.empty());
}

// The state outlives a run and is shared by the plans of a model: two
// executors (a prefill's and a decode's) bound to one state each append
// their rows' counts where the other left off, as caches do.
TEST(Executor, StateOutlivesRunsAndIsShared) {
  Plan plan;
  plan.maxRows = 4;
  plan.stateBytes = 64;
  plan.maxContext = 8;
  plan.caches = {{"count", 0, 8}};
  plan.kernels = {"count_rows"};
  plan.steps.push_back({"count",
                        0,
                        {{OperandKind::State, 0, 0, {8, 0}}},
                        {1, 0},
                        WorkSplit::Single,
                        1,
                        false,
                        StepKind::Kernel,
                        {},
                        0});
  kf_step_fn countRows = [](void *const *operands, int64_t m, int64_t,
                            int64_t) {
    *static_cast<int64_t *>(operands[0]) += m;
  };
  std::vector<uint8_t> state(64, 0);
  absl::StatusOr<Executor> prefill =
      Executor::create(plan, {countRows}, {}, state);
  absl::StatusOr<Executor> decode =
      Executor::create(plan, {countRows}, {}, state);
  ASSERT_TRUE(prefill.ok() && decode.ok());
  ThreadPool pool(2);
  ASSERT_TRUE(prefill->run(pool, 3, {}).ok());
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(decode->run(pool, 1, {}).ok());
  int64_t count = 0;
  std::memcpy(&count, state.data(), 8);
  EXPECT_EQ(count, 8);
  // A state smaller than the plan's is refused.
  std::vector<uint8_t> small(63);
  absl::StatusOr<Executor> e = Executor::create(plan, {countRows}, {}, small);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("a state of 64 bytes, 63 bound"));
}

// A step on rows of its own (a prefill's last-row head) is called with
// them, whatever the run's rows.
TEST(Executor, StepRowsOverrideTheRuns) {
  Plan plan;
  plan.maxRows = 8;
  plan.arenaBytes = 16;
  plan.kernels = {"rows"};
  for (int64_t rows : {0, 1})
    plan.steps.push_back({"rows",
                          0,
                          {{OperandKind::Arena, 0, 8 * rows, {8, 0}}},
                          {1, 0},
                          WorkSplit::Single,
                          1,
                          false,
                          StepKind::Kernel,
                          {},
                          rows});
  kf_step_fn rowsSeen = [](void *const *operands, int64_t m, int64_t, int64_t) {
    *static_cast<int64_t *>(operands[0]) = m;
  };
  absl::StatusOr<Executor> e = Executor::create(plan, {rowsSeen}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ThreadPool pool(2);
  ASSERT_TRUE(e->run(pool, 5, {}).ok());
  int64_t seen[2];
  std::memcpy(seen, e->arena().data(), 16);
  EXPECT_EQ(seen[0], 5);
  EXPECT_EQ(seen[1], 1);
}

TEST(Executor, ArenaIsAligned) {
  std::vector<float> w = weightValues();
  absl::StatusOr<Executor> e = makeExecutor(makePlan(), w);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e->arena().data()) % 64, 0u);
}

std::string createError(Plan plan, size_t weightFloats = kWidth) {
  std::vector<float> w(weightFloats);
  absl::StatusOr<Executor> e = makeExecutor(std::move(plan), w);
  return e.ok() ? "" : std::string(e.status().message());
}

TEST(Executor, RefusesBadPlans) {
  Plan plan = makePlan();
  plan.steps[1].operands[1].offset = plan.arenaBytes - 4;
  EXPECT_THAT(createError(plan),
              HasSubstr("plan step 1 (sum): operand 1: bytes"));
  EXPECT_THAT(createError(plan), HasSubstr("outside the arena"));

  plan = makePlan();
  plan.steps[2].kernel = 3;
  EXPECT_THAT(createError(plan), HasSubstr("plan step 2 (add): kernel 3 of 3"));

  plan = makePlan();
  plan.steps[0].operands[0].index = 2;
  EXPECT_THAT(createError(plan), HasSubstr("operand 0: input 2 of 2"));

  plan = makePlan();
  plan.steps[2].operands[2].bytes.perRow = 2 * kRowBytes;
  EXPECT_THAT(createError(plan), HasSubstr("operand 2: outside input out"));

  plan = makePlan();
  plan.steps[0].group = 0;
  EXPECT_THAT(createError(plan), HasSubstr("group 0 < 1"));

  plan = makePlan();
  plan.steps[0].items.perRow = -1;
  EXPECT_THAT(createError(plan), HasSubstr("invalid item count"));

  plan = makePlan();
  plan.steps[0].operands[2].bytes.perRow = INT64_MAX / 2;
  EXPECT_THAT(createError(plan), HasSubstr("operand 2: invalid extent"));

  plan = makePlan();
  plan.maxRows = 0;
  EXPECT_THAT(createError(plan), HasSubstr("at least one row"));

  EXPECT_THAT(createError(makePlan(), kWidth - 1),
              HasSubstr("operand 1 reads past weight w of 28 bytes"));
}

TEST(Executor, RefusesUnboundKernels) {
  std::vector<float> w = weightValues();
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(w.data()),
                                 w.size() * 4);
  absl::StatusOr<Executor> e =
      Executor::create(makePlan(), {scaleRows, sumRows}, {bytes});
  EXPECT_THAT(e.status().message(), HasSubstr("3 kernels, 2 bound"));
  e = Executor::create(makePlan(), {scaleRows, nullptr, addTotal}, {bytes});
  EXPECT_THAT(e.status().message(),
              HasSubstr("plan kernel sum_rows: not bound"));
}

TEST(Executor, RefusesBadRuns) {
  std::vector<float> w = weightValues();
  absl::StatusOr<Executor> e = makeExecutor(makePlan(), w);
  ASSERT_TRUE(e.ok());
  ThreadPool pool(1);
  std::vector<float> x(kMaxRows * kWidth), out(kMaxRows * kWidth);
  std::vector<std::span<uint8_t>> inputs = {
      {reinterpret_cast<uint8_t *>(x.data()), x.size() * 4},
      {reinterpret_cast<uint8_t *>(out.data()), kRowBytes * 2}};
  EXPECT_THAT(e->run(pool, kMaxRows + 1, inputs).message(),
              HasSubstr("a run of 41 rows; this plan takes 1 to 40"));
  EXPECT_THAT(e->run(pool, 0, inputs).message(), HasSubstr("a run of 0 rows"));
  EXPECT_THAT(e->run(pool, 3, inputs).message(),
              HasSubstr("plan input out: 64 bytes, 96 expected for 3 rows"));
  EXPECT_THAT(e->run(pool, 2, std::span(inputs).first(1)).message(),
              HasSubstr("2 run buffers expected, 1 given"));
  EXPECT_TRUE(e->run(pool, 2, inputs).ok());
}

// An expert step whose operands are smaller than its shape says is refused
// before anything runs: the runtime's gathers and scatters trust them.
TEST(Executor, RefusesExpertStepsTheirOperandsCannotHold) {
  const PackedLayout layout{Format::Q8_0, 16};
  const int64_t expertBytes =
      static_cast<int64_t>(*packedWeightBytes(layout, 32, 64));
  auto plan = [&] {
    Plan p;
    p.maxRows = 4;
    p.arenaBytes = 1 << 16;
    p.kernels = {"matmul"};
    p.weights = {{"stack", Format::Q8_0, {4, 32, 64}, layout}};
    PlanStep step{"experts",
                  0,
                  {},
                  {32, 0},
                  WorkSplit::Claim,
                  16,
                  true,
                  StepKind::Experts,
                  {4, 2, 32, false, 96, expertBytes},
                  0};
    step.operands = {{OperandKind::Weight, 0, 0, {4 * expertBytes, 0}},
                     {OperandKind::Arena, 0, 0, {0, 96}},
                     {OperandKind::Arena, 0, 4096, {0, 8}},
                     {OperandKind::Arena, 0, 8192, {0, 2 * 32 * 4}}};
    p.steps.push_back(step);
    return p;
  };
  EXPECT_TRUE(plan().validate().ok()) << plan().validate();
  Plan p = plan();
  p.steps[0].operands[3].bytes.perRow = 2 * 32 * 4 - 4;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("step 0 (experts): its output operand is smaller "
                        "than its shape"));
  p = plan();
  p.steps[0].experts.rowPerSlot = true;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("its activations operand is smaller than its shape"));
  p = plan();
  p.steps[0].split = WorkSplit::Blocks;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("an expert step's items are claimed"));
  p = plan();
  p.steps[0].operands.pop_back();
  EXPECT_THAT(
      p.validate().message(),
      HasSubstr("takes a weight stack, activations, ids and an output"));
  p = plan();
  p.steps[0].experts.rows = INT64_MAX / 2;
  EXPECT_THAT(p.validate().message(), HasSubstr("an expert shape overflows"));
  // The shape must be the stack's, and the output apart from what is read.
  p = plan();
  p.steps[0].experts.experts = 3;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("its weight stack is not a packed stack of 3 experts "
                        "of 32 rows"));
  p = plan();
  p.steps[0].experts.expertBytes -= 1;
  p.steps[0].operands[0].bytes.fixed -= 4;
  EXPECT_THAT(p.validate().message(), HasSubstr("an expert of stack is not"));
  p = plan();
  p.steps[0].operands[3].offset = 4096;
  EXPECT_THAT(p.validate().message(), HasSubstr("its output overlaps its ids"));
  p = plan();
  p.steps[0].group = 33;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("group 33 exceeds its 32 items"));
  p = plan();
  p.weights[0].layout->format = Format::Q4_0;
  EXPECT_THAT(p.validate().message(),
              HasSubstr("plan weight stack: a q8_0 weight packed as q4_0"));
}

} // namespace
} // namespace kf
