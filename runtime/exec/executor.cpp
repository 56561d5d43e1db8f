#include "kf/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace kf {

namespace {

// A cache line, and every vector width.
constexpr size_t kAlignment = 64;

} // namespace

void AlignedFree::operator()(uint8_t *p) const { std::free(p); }

AlignedBytes allocateAligned(size_t bytes) {
  // aligned_alloc wants a positive multiple of the alignment.
  size_t allocated = std::max<size_t>(kAlignment, (bytes + kAlignment - 1) /
                                                      kAlignment * kAlignment);
  return AlignedBytes(
      static_cast<uint8_t *>(std::aligned_alloc(kAlignment, allocated)));
}

absl::StatusOr<Executor>
Executor::create(Plan plan, std::vector<kf_step_fn> kernels,
                 std::vector<std::span<const uint8_t>> weights,
                 std::span<uint8_t> state) {
  if (absl::Status s = plan.validate(); !s.ok())
    return s;
  if (kernels.size() != plan.kernels.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: ", plan.kernels.size(), " kernels, ", kernels.size(), " bound"));
  for (size_t k = 0; k < kernels.size(); ++k)
    if (!kernels[k])
      return absl::InvalidArgumentError(
          absl::StrCat("plan kernel ", plan.kernels[k], ": not bound"));
  if (weights.size() != plan.weights.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: ", plan.weights.size(), " weights, ", weights.size(), " bound"));
  if (static_cast<int64_t>(state.size()) < plan.stateBytes)
    return absl::InvalidArgumentError(absl::StrCat("plan: a state of ",
                                                   plan.stateBytes, " bytes, ",
                                                   state.size(), " bound"));

  Executor e;
  e.arenaBytes_ = static_cast<size_t>(plan.arenaBytes);
  e.arena_ = allocateAligned(e.arenaBytes_);
  if (!e.arena_)
    return absl::ResourceExhaustedError(absl::StrCat(
        "plan: cannot allocate an arena of ", plan.arenaBytes, " bytes"));

  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    e.stepBegin_.push_back(e.addresses_.size());
    for (size_t o = 0; o < step.operands.size(); ++o) {
      const PlanOperand &op = step.operands[o];
      void *address = nullptr;
      switch (op.kind) {
      case OperandKind::Arena:
        address = e.arena_.get() + op.offset;
        break;
      case OperandKind::State:
        address = state.data() + op.offset;
        break;
      case OperandKind::Weight: {
        std::span<const uint8_t> w = weights[op.index];
        int64_t size = static_cast<int64_t>(w.size());
        if (op.offset > size || op.bytes.at(plan.maxRows) > size - op.offset)
          return absl::InvalidArgumentError(
              absl::StrCat("plan step ", s, " (", step.name, "): operand ", o,
                           " reads past weight ", plan.weights[op.index].name,
                           " of ", size, " bytes"));
        // Kernels take weights through the same untyped operand list as
        // their outputs; they never write them.
        address = const_cast<uint8_t *>(w.data()) + op.offset;
        break;
      }
      case OperandKind::Input:
        e.inputSlots_.push_back({e.addresses_.size(), op.index, op.offset});
        break;
      }
      e.addresses_.push_back(address);
    }
  }
  e.stepBegin_.push_back(e.addresses_.size());
  e.plan_ = std::move(plan);
  e.kernels_ = std::move(kernels);
  return e;
}

void Executor::setProfiling(bool on) {
  profiling_ = on;
  profile_ = StepTimes();
  if (on) {
    profile_.work.assign(plan_.steps.size(), 0.0);
    profile_.wait.assign(plan_.steps.size(), 0.0);
  }
}

absl::Status Executor::run(ThreadPool &pool, int64_t m,
                           std::span<const std::span<uint8_t>> inputs) {
  if (m < 1 || m > plan_.maxRows)
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: a run of ", m, " rows; this plan takes 1 to ", plan_.maxRows));
  if (inputs.size() != plan_.inputs.size())
    return absl::InvalidArgumentError(
        absl::StrCat("plan: ", plan_.inputs.size(), " run buffers expected, ",
                     inputs.size(), " given"));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (static_cast<int64_t>(inputs[i].size()) < plan_.inputs[i].bytes.at(m))
      return absl::InvalidArgumentError(absl::StrCat(
          "plan input ", plan_.inputs[i].name, ": ", inputs[i].size(),
          " bytes, ", plan_.inputs[i].bytes.at(m), " expected for ", m,
          " rows"));
  for (const InputSlot &slot : inputSlots_)
    addresses_[slot.address] = inputs[slot.input].data() + slot.offset;

  const int threads = pool.size();
  const size_t steps = plan_.steps.size();
  // One claim counter per step, so that no thread resets a counter another
  // may still be reading; cache-line apart, so that claims on one do not
  // slow the others.
  struct alignas(64) Counter {
    std::atomic<int64_t> next{0};
  };
  std::unique_ptr<Counter[]> counters(new Counter[steps]);
  Barrier barrier(threads);
  reserveExpertScratch(threads, m);
  // A thread's first error; the threads go on to the end of the plan, so
  // that none waits at a barrier for one that stopped.
  std::vector<absl::Status> errors(threads);
  if (profiling_)
    threadTimes_.assign(threads, std::vector<double>(2 * steps, 0.0));
  using Clock = std::chrono::steady_clock;
  pool.run([&](int t) {
    double *times = profiling_ ? threadTimes_[t].data() : nullptr;
    Clock::time_point start;
    for (size_t s = 0; s < steps; ++s) {
      const PlanStep &step = plan_.steps[s];
      if (times) {
        Clock::time_point now = Clock::now();
        if (s > 0)
          times[s - 1] = std::chrono::duration<double>(now - start).count();
        start = now;
      }
      if (step.barrierBefore)
        barrier.wait();
      if (times) {
        Clock::time_point now = Clock::now();
        times[steps + s] = std::chrono::duration<double>(now - start).count();
        start = now;
      }
      if (step.kind == StepKind::Experts) {
        absl::Status status = runExperts(s, m, t, counters[s].next);
        if (errors[t].ok())
          errors[t] = std::move(status);
        continue;
      }
      void *const *operands = addresses_.data() + stepBegin_[s];
      kf_step_fn kernel = kernels_[step.kernel];
      // A step on rows of its own (the last row's head) sees as many.
      const int64_t rows = step.rows > 0 ? step.rows : m;
      int64_t items = step.items.at(m);
      switch (step.split) {
      case WorkSplit::Blocks: {
        RowBlock b = rowBlock(items, t, threads, step.group);
        if (b.begin < b.end)
          kernel(operands, rows, b.begin, b.end);
        break;
      }
      case WorkSplit::Claim:
        for (;;) {
          int64_t begin =
              counters[s].next.fetch_add(step.group, std::memory_order_relaxed);
          if (begin >= items)
            break;
          kernel(operands, rows, begin,
                 begin + std::min(step.group, items - begin));
        }
        break;
      case WorkSplit::Single:
        if (t == 0 && items > 0)
          kernel(operands, rows, 0, items);
        break;
      }
    }
    if (times && steps > 0)
      times[steps - 1] =
          std::chrono::duration<double>(Clock::now() - start).count();
  });
  if (profiling_) {
    for (const std::vector<double> &times : threadTimes_)
      for (size_t s = 0; s < steps; ++s) {
        profile_.work[s] += times[s];
        profile_.wait[s] += times[steps + s];
      }
    ++profile_.runs;
  }
  for (absl::Status &error : errors)
    if (!error.ok())
      return error;
  return absl::OkStatus();
}

} // namespace kf
