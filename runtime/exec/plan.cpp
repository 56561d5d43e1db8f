#include "kf/runtime/plan.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/packing.h"

namespace kf {

namespace {

absl::Status stepError(size_t s, const PlanStep &step,
                       const std::string &what) {
  return absl::InvalidArgumentError(
      absl::StrCat("plan step ", s, " (", step.name, "): ", what));
}

// Whether `e` is non-negative for every m in [0, maxRows] and its value at
// maxRows fits an int64: it is linear in m, so both ends suffice.
bool isValidExtent(RowExtent e, int64_t maxRows) {
  if (e.fixed < 0 || e.perRow < 0)
    return false;
  return e.perRow == 0 || maxRows <= (INT64_MAX - e.fixed) / e.perRow;
}

// a * b, or nullopt when it overflows.
std::optional<int64_t> multiply(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

// An expert step's operands hold what its shape says it reads and writes,
// so that the runtime's gathers and scatters stay inside them.
absl::Status validateExperts(const Plan &plan, size_t s, const PlanStep &step) {
  const ExpertShape &e = step.experts;
  if (e.experts < 1 || e.slots < 1 || e.rows < 1 || e.xRowBytes < 1 ||
      e.expertBytes < 1)
    return stepError(s, step, "an expert shape needs positive sizes");
  if (step.split != WorkSplit::Claim)
    return stepError(s, step, "an expert step's items are claimed");
  if (step.operands.size() != 4 ||
      step.operands[0].kind != OperandKind::Weight ||
      step.operands[1].kind == OperandKind::Weight ||
      step.operands[2].kind == OperandKind::Weight ||
      step.operands[3].kind == OperandKind::Weight)
    return stepError(s, step,
                     "an expert step takes a weight stack, activations, ids "
                     "and an output");
  std::optional<int64_t> stack = multiply(e.experts, e.expertBytes);
  std::optional<int64_t> x = multiply(e.rowPerSlot ? e.slots : 1, e.xRowBytes);
  std::optional<int64_t> ids = multiply(e.slots, 4);
  std::optional<int64_t> y = multiply(e.slots, e.rows);
  if (y)
    y = multiply(*y, 4);
  if (!stack || !x || !ids || !y)
    return stepError(s, step, "an expert shape overflows");
  const std::pair<int64_t, const char *> needs[] = {
      {step.operands[0].bytes.fixed - *stack, "weight stack"},
      {step.operands[1].bytes.perRow - *x, "activations"},
      {step.operands[2].bytes.perRow - *ids, "ids"},
      {step.operands[3].bytes.perRow - *y, "output"}};
  for (const auto &[spare, what] : needs)
    if (spare < 0)
      return stepError(
          s, step,
          absl::StrCat("its ", what, " operand is smaller than its shape"));
  // The stack is what the shape says: E packed experts of rows x K.
  const PlanWeight &stackWeight = plan.weights[step.operands[0].index];
  if (stackWeight.shape.size() != 3 || !stackWeight.layout ||
      stackWeight.shape[0] != e.experts || stackWeight.shape[1] != e.rows)
    return stepError(s, step,
                     absl::StrCat("its weight ", stackWeight.name,
                                  " is not a packed stack of ", e.experts,
                                  " experts of ", e.rows, " rows"));
  absl::StatusOr<uint64_t> expertBytes =
      packedWeightBytes(*stackWeight.layout, e.rows, stackWeight.shape[2]);
  if (!expertBytes.ok() || static_cast<int64_t>(*expertBytes) != e.expertBytes)
    return stepError(s, step,
                     absl::StrCat("an expert of ", stackWeight.name, " is not ",
                                  e.expertBytes, " packed bytes"));
  // Ids and activations are read while the output is written.
  const PlanOperand &out = step.operands[3];
  for (size_t o : {size_t{1}, size_t{2}}) {
    const PlanOperand &in = step.operands[o];
    if (in.kind == out.kind && in.index == out.index &&
        in.offset < out.offset + out.bytes.at(plan.maxRows) &&
        out.offset < in.offset + in.bytes.at(plan.maxRows))
      return stepError(s, step,
                       o == 1 ? "its output overlaps its activations"
                              : "its output overlaps its ids");
  }
  return absl::OkStatus();
}

} // namespace

absl::Status Plan::validate() const {
  if (maxRows < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("plan: expected at least one row per run, got ", maxRows));
  if (arenaBytes < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("plan: negative arena size ", arenaBytes));
  if (stateBytes < 0 || maxContext < 0 || (stateBytes > 0 && maxContext < 1))
    return absl::InvalidArgumentError(
        absl::StrCat("plan: a state of ", stateBytes,
                     " bytes for sequences of ", maxContext, " tokens"));
  int64_t cacheEnd = 0;
  for (const PlanCache &cache : caches) {
    // In offset order, disjoint: no cache's writes reach another's.
    if (cache.offset < cacheEnd || cache.bytes < 0 ||
        cache.offset > stateBytes || cache.bytes > stateBytes - cache.offset)
      return absl::InvalidArgumentError(absl::StrCat(
          "plan cache ", cache.name, ": bytes [", cache.offset, ", +",
          cache.bytes, ") overlap another or leave the state of ", stateBytes));
    cacheEnd = cache.offset + cache.bytes;
  }
  for (const PlanWeight &weight : weights)
    if (weight.layout && weight.layout->format != weight.format)
      return absl::InvalidArgumentError(absl::StrCat(
          "plan weight ", weight.name, ": a ",
          toAbsl(formatInfo(weight.format).name), " weight packed as ",
          toAbsl(formatInfo(weight.layout->format).name)));
  for (const PlanInput &input : inputs)
    if (!isValidExtent(input.bytes, maxRows))
      return absl::InvalidArgumentError(
          absl::StrCat("plan input ", input.name, ": invalid size"));
  for (size_t s = 0; s < steps.size(); ++s) {
    const PlanStep &step = steps[s];
    if (step.kernel >= kernels.size())
      return stepError(
          s, step,
          absl::StrCat("kernel ", step.kernel, " of ", kernels.size()));
    if (!isValidExtent(step.items, maxRows))
      return stepError(s, step, "invalid item count");
    if (step.group < 1)
      return stepError(s, step, absl::StrCat("group ", step.group, " < 1"));
    // A step of its own rows runs on one row whatever the run's: its items
    // and its operands' bytes must not grow with the run's rows, which its
    // kernel does not see.
    if (step.rows != 0 &&
        (step.rows != 1 || step.kind != StepKind::Kernel ||
         step.items.perRow != 0 ||
         std::any_of(
             step.operands.begin(), step.operands.end(),
             [](const PlanOperand &op) { return op.bytes.perRow != 0; })))
      return stepError(
          s, step,
          absl::StrCat("rows ", step.rows,
                       ": a step of its own rows takes one, with items and "
                       "operands that do not grow with the run's rows"));
    // Bounded, so that claims, row blocks and scratch sizes cannot
    // overflow: no more than 2^40 items, a group no larger than the items.
    const int64_t items = step.items.at(maxRows);
    if (items > (int64_t{1} << 40))
      return stepError(s, step, absl::StrCat(items, " items, too many"));
    if (step.group > std::max<int64_t>(1, items))
      return stepError(
          s, step,
          absl::StrCat("group ", step.group, " exceeds its ", items, " items"));
    if (step.split != WorkSplit::Blocks && step.split != WorkSplit::Claim &&
        step.split != WorkSplit::Single)
      return stepError(s, step, "unknown work split");
    if (step.kind != StepKind::Kernel && step.kind != StepKind::Experts)
      return stepError(s, step, "unknown step kind");
    for (size_t o = 0; o < step.operands.size(); ++o) {
      const PlanOperand &op = step.operands[o];
      std::string name = absl::StrCat("operand ", o);
      if (op.offset < 0 || !isValidExtent(op.bytes, maxRows))
        return stepError(s, step, absl::StrCat(name, ": invalid extent"));
      int64_t end = op.bytes.at(maxRows);
      switch (op.kind) {
      case OperandKind::Arena:
      case OperandKind::State: {
        const bool arena = op.kind == OperandKind::Arena;
        const int64_t size = arena ? arenaBytes : stateBytes;
        if (op.offset > size || end > size - op.offset)
          return stepError(s, step,
                           absl::StrCat(name, ": bytes [", op.offset, ", +",
                                        end, ") outside the ",
                                        arena ? "arena" : "state", " of ",
                                        size));
        break;
      }
      case OperandKind::Weight:
        // Checked against the weight's size when it is bound.
        if (op.index >= weights.size())
          return stepError(s, step,
                           absl::StrCat(name, ": weight ", op.index, " of ",
                                        weights.size()));
        break;
      case OperandKind::Input: {
        if (op.index >= inputs.size())
          return stepError(
              s, step,
              absl::StrCat(name, ": input ", op.index, " of ", inputs.size()));
        // What is left of the input past the operand is linear in m: the
        // two ends of [1, maxRows] cover every run.
        const PlanInput &input = inputs[op.index];
        for (int64_t m : {int64_t{1}, maxRows})
          if (op.offset > input.bytes.at(m) ||
              op.bytes.at(m) > input.bytes.at(m) - op.offset)
            return stepError(s, step,
                             absl::StrCat(name, ": outside input ", input.name,
                                          " at ", m, " rows"));
        break;
      }
      default:
        return stepError(s, step, absl::StrCat(name, ": unknown kind"));
      }
    }
    if (step.kind == StepKind::Experts)
      if (absl::Status e = validateExperts(*this, s, step); !e.ok())
        return e;
  }
  return absl::OkStatus();
}

int64_t Plan::barriers() const {
  int64_t n = 0;
  for (const PlanStep &step : steps)
    n += step.barrierBefore ? 1 : 0;
  return n;
}

std::vector<bool> Plan::tokenLookups() const {
  std::vector<bool> lookups(weights.size(), false);
  for (const PlanStep &step : steps)
    if (step.kernel < kernels.size() &&
        kernels[step.kernel].starts_with("kf_embed_"))
      for (const PlanOperand &op : step.operands)
        if (op.kind == OperandKind::Weight && op.index < weights.size())
          lookups[op.index] = true;
  return lookups;
}

} // namespace kf
