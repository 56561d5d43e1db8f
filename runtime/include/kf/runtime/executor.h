// Runs a plan (docs/engine.md, "Execution"): the whole step list in one
// parallel region of the thread pool, every thread walking the same steps,
// each doing its share of a step's work items and waiting at a barrier only
// before the steps the plan marks. The arena is allocated once, 64-byte
// aligned, and the operands' addresses resolved once; a run resolves only
// its own buffers'.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/plan.h"
#include "kf/runtime/plan_abi.h"
#include "kf/runtime/thread_pool.h"

namespace kf {

// Bytes aligned to a cache line (every vector width's), as an executor's
// arena and a model's state are; freed with std::free.
struct AlignedFree {
  void operator()(uint8_t *p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedFree>;
// `bytes` such bytes (one cache line when 0); null when memory is short.
AlignedBytes allocateAligned(size_t bytes);

// Where a plan's runs spent their time, step by step, summed over the runs
// and the threads since profiling was turned on: in the step's kernels, and
// waiting at the barrier before it.
struct StepTimes {
  std::vector<double> work, wait; // seconds, one per step
  int64_t runs = 0;
};

class Executor {
public:
  // `kernels[i]` runs the plan's kernel i, `weights[i]` holds its weight
  // i, packed, and `state` (at least plan.stateBytes) is the model's state
  // its caches live in; the weights, the state, and the library or JIT the
  // kernels come from (kf::PlanLibrary) must outlive the executor. Fails,
  // naming the step and operand, when the plan is invalid or reads past a
  // weight.
  static absl::StatusOr<Executor>
  create(Plan plan, std::vector<kf_step_fn> kernels,
         std::vector<std::span<const uint8_t>> weights,
         std::span<uint8_t> state = {});
  // Runs every step for m token rows, `inputs[i]` the plan's input i (each
  // at least as large as the plan says for m rows).
  absl::Status run(ThreadPool &pool, int64_t m,
                   std::span<const std::span<uint8_t>> inputs);

  // Times every step of the runs from now on (two clock reads a step and
  // thread), from zero; off again when `on` is false.
  void setProfiling(bool on);
  const StepTimes &profile() const { return profile_; }

  const Plan &plan() const { return plan_; }
  std::span<uint8_t> arena() { return {arena_.get(), arenaBytes_}; }

private:
  Executor() = default;

  Plan plan_;
  std::vector<kf_step_fn> kernels_;
  AlignedBytes arena_;
  size_t arenaBytes_ = 0;
  // Every step's operand addresses, one after the other; stepBegin_[s]
  // indexes step s's first.
  std::vector<void *> addresses_;
  std::vector<size_t> stepBegin_;
  // Where the run's buffers go in `addresses_`, with their offsets.
  struct InputSlot {
    size_t address;
    uint32_t input;
    int64_t offset;
  };
  std::vector<InputSlot> inputSlots_;
  bool profiling_ = false;
  StepTimes profile_;
  // Each thread's times of one run (work then wait, a row per thread),
  // summed into profile_ after it.
  std::vector<std::vector<double>> threadTimes_;

  // One thread's scratch for expert steps: its copy of the ids (read once,
  // checked, and used from the copy, whatever else writes the arena), the
  // slots bucketed by expert, the experts with slots, the gathered
  // activation rows of one expert and one block of its results.
  struct ExpertScratch {
    std::vector<int32_t> ids;
    std::vector<int64_t> begin, slots, cursor, active;
    std::vector<uint8_t> x;
    std::vector<float> y;
  };
  std::vector<ExpertScratch> scratch_;
  // Sizes scratch_ for `threads` threads and runs of m rows.
  void reserveExpertScratch(int threads, int64_t m);
  // Thread t's share of expert step s: buckets, then claimed items.
  absl::Status runExperts(size_t s, int64_t m, int t,
                          std::atomic<int64_t> &next);
};

} // namespace kf
