// Expert steps (StepKind::Experts, docs/engine.md, "Expert dispatch"): the
// runtime's half of a routed expert matmul. Every thread buckets the slots
// by expert itself — a counting sort of T·k ids, cheaper than a barrier —
// so all threads agree on the items without waiting for each other; the
// items, (expert with slots, block of output rows), are then claimed from
// a counter, so that an expert with one slot and one with many keep every
// thread busy. A thread gathers an expert's activation rows side by side
// once for all the blocks of it that it claims, calls the matmul kernel on
// them, and scatters each block's rows to their slots. Each output row is
// written by one call, on the same gathered columns whatever the thread
// count, so the result does not depend on it.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kf/runtime/executor.h"
#include "kf/runtime/kernel_abi.h"

namespace kf {

void Executor::reserveExpertScratch(int threads, int64_t m) {
  size_t xBytes = 0, yFloats = 0, slots = 0, experts = 0;
  for (const PlanStep &step : plan_.steps) {
    if (step.kind != StepKind::Experts)
      continue;
    const ExpertShape &e = step.experts;
    // A bucket holds at most every slot of the run.
    const size_t runSlots = static_cast<size_t>(m * e.slots);
    slots = std::max(slots, runSlots);
    experts = std::max(experts, static_cast<size_t>(e.experts));
    xBytes = std::max(xBytes, runSlots * static_cast<size_t>(e.xRowBytes));
    // Plan::validate bounds the group by the rows, whose output for every
    // slot fits in the output operand.
    yFloats = std::max(yFloats, runSlots * static_cast<size_t>(step.group));
  }
  if (slots == 0)
    return;
  scratch_.resize(std::max<size_t>(scratch_.size(), threads));
  for (ExpertScratch &scratch : scratch_) {
    scratch.begin.resize(std::max(scratch.begin.size(), experts + 1));
    scratch.cursor.resize(std::max(scratch.cursor.size(), experts));
    scratch.active.resize(std::max(scratch.active.size(), experts));
    scratch.ids.resize(std::max(scratch.ids.size(), slots));
    scratch.slots.resize(std::max(scratch.slots.size(), slots));
    scratch.x.resize(std::max(scratch.x.size(), xBytes));
    scratch.y.resize(std::max(scratch.y.size(), yFloats));
  }
}

absl::Status Executor::runExperts(size_t s, int64_t m, int t,
                                  std::atomic<int64_t> &next) {
  const PlanStep &step = plan_.steps[s];
  const ExpertShape &shape = step.experts;
  void *const *operands = addresses_.data() + stepBegin_[s];
  const auto *stack = static_cast<const uint8_t *>(operands[0]);
  const auto *x = static_cast<const uint8_t *>(operands[1]);
  const auto *routed = static_cast<const int32_t *>(operands[2]);
  auto *y = static_cast<float *>(operands[3]);
  ExpertScratch &scratch = scratch_[t];

  // A stable counting sort: experts ascending, each one's slots ascending,
  // of this thread's own copy of the ids, so that what was checked is what
  // is used.
  const int64_t slots = m * shape.slots;
  const int32_t *ids = scratch.ids.data();
  std::copy_n(routed, slots, scratch.ids.begin());
  std::fill_n(scratch.begin.begin(), shape.experts + 1, 0);
  for (int64_t i = 0; i < slots; ++i) {
    if (ids[i] < 0 || ids[i] >= shape.experts)
      return absl::InvalidArgumentError(absl::StrCat(
          "plan step ", s, " (", step.name, "): slot ", i, " routes to expert ",
          ids[i], ", outside [0, ", shape.experts, ")"));
    ++scratch.begin[ids[i] + 1];
  }
  int64_t active = 0;
  for (int64_t e = 0; e < shape.experts; ++e) {
    if (scratch.begin[e + 1] > 0)
      scratch.active[active++] = e;
    scratch.begin[e + 1] += scratch.begin[e];
    scratch.cursor[e] = scratch.begin[e];
  }
  for (int64_t i = 0; i < slots; ++i)
    scratch.slots[scratch.cursor[ids[i]]++] = i;

  const auto kernel = reinterpret_cast<kf_matmul_kernel_fn>(
      reinterpret_cast<void *>(kernels_[step.kernel]));
  const int64_t blocks = (shape.rows + step.group - 1) / step.group;
  const int64_t items = active * blocks;
  int64_t gathered = -1;
  for (;;) {
    const int64_t item = next.fetch_add(1, std::memory_order_relaxed);
    if (item >= items)
      break;
    const int64_t expert = scratch.active[item / blocks];
    const int64_t n0 = item % blocks * step.group;
    const int64_t n1 = std::min(shape.rows, n0 + step.group);
    const int64_t *bucket = scratch.slots.data() + scratch.begin[expert];
    const int64_t width = scratch.begin[expert + 1] - scratch.begin[expert];
    if (gathered != expert) {
      for (int64_t j = 0; j < width; ++j) {
        const int64_t row =
            shape.rowPerSlot ? bucket[j] : bucket[j] / shape.slots;
        std::memcpy(scratch.x.data() + j * shape.xRowBytes,
                    x + row * shape.xRowBytes,
                    static_cast<size_t>(shape.xRowBytes));
      }
      gathered = expert;
    }
    // The kernel writes y[j * ldy + n] for n in [n0, n1): with ldy the
    // block's width and y moved back by n0, column j's rows land at
    // out[j * (n1 - n0)], a block the size of the scratch's.
    float *out = scratch.y.data();
    auto *shifted = reinterpret_cast<float *>(reinterpret_cast<uintptr_t>(out) -
                                              n0 * sizeof(float));
    kernel(stack + expert * shape.expertBytes, scratch.x.data(), shifted,
           n1 - n0, width, n0, n1);
    for (int64_t j = 0; j < width; ++j)
      std::memcpy(y + bucket[j] * shape.rows + n0, out + j * (n1 - n0),
                  static_cast<size_t>(n1 - n0) * sizeof(float));
  }
  return absl::OkStatus();
}

} // namespace kf
