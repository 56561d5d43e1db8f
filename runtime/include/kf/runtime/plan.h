// A compiled plan as the runtime holds it (docs/engine.md, "Plans"): the
// step kernels it calls, in order, each with its operands' addresses as
// offsets into the activation arena, the packed weights or the run's
// buffers, how many work items it has for a run of m token rows, how they are
// shared between threads, and whether it must wait for every thread to
// finish the steps before it (a barrier: only where a step reads what
// another thread of an earlier step wrote).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kf/runtime/format.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/plan_abi.h"

namespace kf {

enum class OperandKind : uint32_t {
  Arena = KF_OPERAND_ARENA,
  Weight = KF_OPERAND_WEIGHT,
  Input = KF_OPERAND_INPUT,
  State = KF_OPERAND_STATE,
};

enum class WorkSplit : uint32_t {
  Blocks = KF_SPLIT_BLOCKS,
  Claim = KF_SPLIT_CLAIM,
  Single = KF_SPLIT_SINGLE,
};

enum class StepKind : uint32_t {
  Kernel = KF_STEP_KERNEL,
  Experts = KF_STEP_EXPERTS,
};

// A byte count that may grow with the run's rows: fixed + perRow * m.
struct RowExtent {
  int64_t fixed = 0;
  int64_t perRow = 0;

  int64_t at(int64_t m) const { return fixed + perRow * m; }
  friend bool operator==(const RowExtent &, const RowExtent &) = default;
};

struct PlanOperand {
  OperandKind kind = OperandKind::Arena;
  // The weight's or the input's index in the plan's tables; 0 for the arena
  // and the state.
  uint32_t index = 0;
  // The operand's first byte: in the arena, the weight or the input.
  int64_t offset = 0;
  // How many bytes from `offset` the kernel may touch, so that a plan is
  // checked against its buffers before any kernel runs.
  RowExtent bytes;
  friend bool operator==(const PlanOperand &, const PlanOperand &) = default;
};

// What an expert step (StepKind::Experts) multiplies. Its operands are the
// packed expert stack (a weight, expert e's rows at e * expertBytes), the
// packed activations (one row of xRowBytes per token, or per slot when
// rowPerSlot: the down projection's), the [T, slots] int32 expert ids and
// the [T, slots, rows] f32 output; its group is the output rows of one work
// item (a multiple of the kernel's row group), and its split claimed.
struct ExpertShape {
  int64_t experts = 0;
  int64_t slots = 0;
  int64_t rows = 0;
  bool rowPerSlot = false;
  int64_t xRowBytes = 0;
  int64_t expertBytes = 0;
  friend bool operator==(const ExpertShape &, const ExpertShape &) = default;
};

struct PlanStep {
  // The op it executes, for errors and profiles ("blk.3.attn_norm").
  std::string name;
  // Index into Plan::kernels: a step kernel (kf_step_fn), or for an expert
  // step a matmul kernel (kf_matmul_kernel_fn).
  uint32_t kernel = 0;
  std::vector<PlanOperand> operands;
  RowExtent items;
  WorkSplit split = WorkSplit::Blocks;
  // Blocks: a thread's share is whole groups of this many items (a matmul's
  // row group); Claim: the batch a thread claims at a time.
  int64_t group = 1;
  bool barrierBefore = false;
  StepKind kind = StepKind::Kernel;
  // StepKind::Experts only.
  ExpertShape experts;
  // The token rows its kernel is called with: 0 for the run's m, else this
  // many whatever the run's (the head of a prefill's last row: 1).
  int64_t rows = 0;
  friend bool operator==(const PlanStep &, const PlanStep &) = default;
};

// A buffer of the run the caller provides: the prompt's tokens and
// positions, the logits it reads back.
struct PlanInput {
  std::string name;
  RowExtent bytes;
  friend bool operator==(const PlanInput &, const PlanInput &) = default;
};

// A cache of the model's state (a KV window ring, a compressor's entries
// and running state): `bytes` from `offset` of the state. Every plan of a
// model lays the state out alike, so that one run's writes are the next
// one's reads.
struct PlanCache {
  std::string name;
  int64_t offset = 0;
  int64_t bytes = 0;
  friend bool operator==(const PlanCache &, const PlanCache &) = default;
};

// A weight the plan reads: a model tensor (or the function argument it was)
// of `format` and `shape` (rows before columns: [N, K], [E, N, K] for an
// expert stack, [K] for a vector), packed by the runtime to `layout`, or
// read as stored when there is none.
struct PlanWeight {
  std::string name;
  Format format = Format::F32;
  std::vector<int64_t> shape;
  std::optional<PackedLayout> layout;
  friend bool operator==(const PlanWeight &, const PlanWeight &) = default;
};

struct Plan {
  // Its entry's name ("prefill", "decode"): the function it was compiled
  // from.
  std::string name;
  // What the kernels were compiled for: the target's name and the CPU
  // features its code uses (LLVM's names: "avx2", "avx512vnni"), which the
  // machine running it must have.
  std::string target;
  std::vector<std::string> features;
  // The model file it was compiled from (gguf::File::fingerprint), which
  // its weights must be bound from; empty for a graph of no file.
  std::string model;
  // The most token rows one run takes (the prefill chunk).
  int64_t maxRows = 0;
  int64_t arenaBytes = 0;
  // The state it reads and writes (none: 0 bytes), its caches, and the
  // longest sequence it holds: positions are below maxContext.
  int64_t stateBytes = 0;
  int64_t maxContext = 0;
  std::vector<PlanCache> caches;
  // Kernel symbols, weights, run buffers, in index order.
  std::vector<std::string> kernels;
  std::vector<PlanWeight> weights;
  std::vector<PlanInput> inputs;
  std::vector<PlanStep> steps;

  // Every index in range, every extent non-negative, every operand inside
  // its arena, state or run buffer at maxRows rows, the caches disjoint
  // inside the state; the first violation, naming the step and operand.
  absl::Status validate() const;
  // How many barriers one run waits at.
  int64_t barriers() const;
  // Which weights a run reads one row of per token rather than whole: the
  // tables an embedding step looks up (a kf_embed_ kernel's weight).
  std::vector<bool> tokenLookups() const;
  friend bool operator==(const Plan &, const Plan &) = default;
};

} // namespace kf
