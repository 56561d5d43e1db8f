#include "kf/runtime/plan_file.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/packing.h"

namespace kf {

namespace {

constexpr std::string_view kAbiVersion = "kf.plan.abi_version";
constexpr std::string_view kCount = "kf.plan.count";
/// Plans of one model: a prefill's, a decode's, a few more at most.
constexpr uint32_t kMaxPlans = 64;

/// The key of plan `plan`'s `field` ("kf.plan.0.max_rows"), or of the field
/// `field` of its table `table` ("kf.plan.0.steps.kernel").
std::string key(size_t plan, std::string_view field) {
  return absl::StrCat("kf.plan.", plan, ".", toAbsl(field));
}
std::string key(size_t plan, std::string_view table, std::string_view field) {
  return absl::StrCat("kf.plan.", plan, ".", toAbsl(table), ".", toAbsl(field));
}

/// Whether `name` (a name from the file: a kernel, weight, step, ...) holds
/// no control byte, so that the messages quoting it stay on one line.
bool isPrintable(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  });
}

/// OK when every string of `values`, the value of `key`, is printable.
absl::Status checkNames(const std::string &file, std::string_view key,
                        std::span<const std::string> values) {
  for (const std::string &value : values)
    if (!isPrintable(value))
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": ", toAbsl(key),
                       " holds a name with a control "
                       "byte"));
  return absl::OkStatus();
}

/// Reads plan `plan`'s arrays, each checked to have its table's length.
class PlanReader {
public:
  PlanReader(const gguf::File &file, size_t plan) : file(file), plan(plan) {}

  template <typename T>
  absl::StatusOr<std::span<const T>>
  table(std::string_view table, std::string_view field, size_t length) {
    std::string name = key(plan, table, field);
    absl::StatusOr<std::span<const T>> values =
        file.get<std::span<const T>>(name);
    if (!values.ok())
      return values.status();
    if (values->size() != length)
      return absl::InvalidArgumentError(
          absl::StrCat(file.name(), ": ", name, " has ", values->size(),
                       " entries, expected ", length));
    return values;
  }

  const gguf::File &file;
  size_t plan;
};

/// Plan `p`'s keys, under kf.plan.<p>.
void writePlan(gguf::Writer &writer, size_t p, const Plan &plan) {
  auto key = [p](auto... parts) { return ::kf::key(p, parts...); };
  writer.addMetadata(key("name"), plan.name);
  writer.addMetadata(key("target"), plan.target);
  writer.addMetadata(key("model"), plan.model);
  writer.addMetadata(key("features"), plan.features);
  writer.addMetadata(key("max_rows"), plan.maxRows);
  writer.addMetadata(key("arena_bytes"), plan.arenaBytes);
  writer.addMetadata(key("state_bytes"), plan.stateBytes);
  writer.addMetadata(key("max_context"), plan.maxContext);
  std::vector<std::string> cacheNames;
  std::vector<int64_t> cacheOffsets, cacheBytes;
  for (const PlanCache &cache : plan.caches) {
    cacheNames.push_back(cache.name);
    cacheOffsets.push_back(cache.offset);
    cacheBytes.push_back(cache.bytes);
  }
  writer.addMetadata(key("caches", "name"), cacheNames);
  writer.addMetadata(key("caches", "offset"), cacheOffsets);
  writer.addMetadata(key("caches", "bytes"), cacheBytes);
  writer.addMetadata(key("kernels"), plan.kernels);

  std::vector<std::string> names, formats, layouts;
  std::vector<uint32_t> ranks;
  std::vector<int64_t> dims;
  for (const PlanWeight &w : plan.weights) {
    names.push_back(w.name);
    formats.emplace_back(formatInfo(w.format).name);
    layouts.push_back(w.layout ? packedLayoutName(*w.layout) : "");
    ranks.push_back(static_cast<uint32_t>(w.shape.size()));
    dims.insert(dims.end(), w.shape.begin(), w.shape.end());
  }
  writer.addMetadata(key("weights", "name"), names);
  writer.addMetadata(key("weights", "format"), formats);
  writer.addMetadata(key("weights", "layout"), layouts);
  writer.addMetadata(key("weights", "rank"), ranks);
  writer.addMetadata(key("weights", "dims"), dims);

  std::vector<std::string> inputNames;
  std::vector<int64_t> inputFixed, inputPerRow;
  for (const PlanInput &input : plan.inputs) {
    inputNames.push_back(input.name);
    inputFixed.push_back(input.bytes.fixed);
    inputPerRow.push_back(input.bytes.perRow);
  }
  writer.addMetadata(key("inputs", "name"), inputNames);
  writer.addMetadata(key("inputs", "fixed"), inputFixed);
  writer.addMetadata(key("inputs", "per_row"), inputPerRow);

  std::vector<std::string> stepNames;
  std::vector<uint32_t> kernel, split, operandCount;
  std::vector<int64_t> itemsFixed, itemsPerRow, group;
  std::vector<uint8_t> barrier, rowPerSlot;
  std::vector<uint32_t> stepKind;
  std::vector<int64_t> experts, slots, expertRows, xRowBytes, expertBytes;
  std::vector<int64_t> stepRows;
  std::vector<uint32_t> kind, index;
  std::vector<int64_t> offset, fixed, perRow;
  for (const PlanStep &step : plan.steps) {
    stepNames.push_back(step.name);
    kernel.push_back(step.kernel);
    itemsFixed.push_back(step.items.fixed);
    itemsPerRow.push_back(step.items.perRow);
    split.push_back(static_cast<uint32_t>(step.split));
    group.push_back(step.group);
    barrier.push_back(step.barrierBefore ? 1 : 0);
    stepKind.push_back(static_cast<uint32_t>(step.kind));
    experts.push_back(step.experts.experts);
    slots.push_back(step.experts.slots);
    expertRows.push_back(step.experts.rows);
    rowPerSlot.push_back(step.experts.rowPerSlot ? 1 : 0);
    xRowBytes.push_back(step.experts.xRowBytes);
    expertBytes.push_back(step.experts.expertBytes);
    stepRows.push_back(step.rows);
    operandCount.push_back(static_cast<uint32_t>(step.operands.size()));
    for (const PlanOperand &op : step.operands) {
      kind.push_back(static_cast<uint32_t>(op.kind));
      index.push_back(op.index);
      offset.push_back(op.offset);
      fixed.push_back(op.bytes.fixed);
      perRow.push_back(op.bytes.perRow);
    }
  }
  writer.addMetadata(key("steps", "name"), stepNames);
  writer.addMetadata(key("steps", "kernel"), kernel);
  writer.addMetadata(key("steps", "items_fixed"), itemsFixed);
  writer.addMetadata(key("steps", "items_per_row"), itemsPerRow);
  writer.addMetadata(key("steps", "split"), split);
  writer.addMetadata(key("steps", "group"), group);
  writer.addMetadata(key("steps", "barrier"), barrier);
  writer.addMetadata(key("steps", "operands"), operandCount);
  writer.addMetadata(key("steps", "kind"), stepKind);
  writer.addMetadata(key("steps", "experts"), experts);
  writer.addMetadata(key("steps", "slots"), slots);
  writer.addMetadata(key("steps", "expert_rows"), expertRows);
  writer.addMetadata(key("steps", "row_per_slot"), rowPerSlot);
  writer.addMetadata(key("steps", "x_row_bytes"), xRowBytes);
  writer.addMetadata(key("steps", "expert_bytes"), expertBytes);
  writer.addMetadata(key("steps", "rows"), stepRows);
  writer.addMetadata(key("operands", "kind"), kind);
  writer.addMetadata(key("operands", "index"), index);
  writer.addMetadata(key("operands", "offset"), offset);
  writer.addMetadata(key("operands", "fixed"), fixed);
  writer.addMetadata(key("operands", "per_row"), perRow);
}

/// Plan `p` of `file`, which stands for `name` in errors.
absl::StatusOr<Plan> readPlan(const gguf::File &file, size_t p,
                              const std::string &name) {
  auto key = [p](auto... parts) { return ::kf::key(p, parts...); };
  Plan plan;
  PlanReader reader(file, p);
#define KF_READ(var, expr)                                                     \
  auto var##OrError = (expr);                                                  \
  if (!var##OrError.ok())                                                      \
    return var##OrError.status();                                              \
  auto var = *var##OrError;
  KF_READ(planName, file.get<std::string_view>(key("name")));
  KF_READ(target, file.get<std::string_view>(key("target")));
  KF_READ(model, file.get<std::string_view>(key("model")));
  KF_READ(features, file.get<std::span<const std::string>>(key("features")));
  KF_READ(maxRows, file.get<int64_t>(key("max_rows")));
  KF_READ(arenaBytes, file.get<int64_t>(key("arena_bytes")));
  KF_READ(stateBytes, file.get<int64_t>(key("state_bytes")));
  KF_READ(maxContext, file.get<int64_t>(key("max_context")));
  KF_READ(kernels, file.get<std::span<const std::string>>(key("kernels")));
  for (auto [field, value] :
       {std::pair<std::string_view, std::string_view>{"name", planName},
        {"target", target},
        {"model", model}})
    if (!isPrintable(value))
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", key(field), " holds a control byte"));
  for (auto [field, values] :
       {std::pair<std::string_view, std::span<const std::string>>{"features",
                                                                  features},
        {"kernels", kernels}})
    if (absl::Status s = checkNames(name, key(field), values); !s.ok())
      return s;
  plan.name = std::string(planName);
  plan.target = std::string(target);
  plan.model = std::string(model);
  plan.features.assign(features.begin(), features.end());
  plan.maxRows = maxRows;
  plan.arenaBytes = arenaBytes;
  plan.stateBytes = stateBytes;
  plan.maxContext = maxContext;
  plan.kernels.assign(kernels.begin(), kernels.end());
  KF_READ(cacheNames,
          file.get<std::span<const std::string>>(key("caches", "name")));
  if (absl::Status s = checkNames(name, key("caches", "name"), cacheNames);
      !s.ok())
    return s;
  KF_READ(cacheOffsets,
          reader.table<int64_t>("caches", "offset", cacheNames.size()));
  KF_READ(cacheBytes,
          reader.table<int64_t>("caches", "bytes", cacheNames.size()));
  for (size_t c = 0; c < cacheNames.size(); ++c)
    plan.caches.push_back({cacheNames[c], cacheOffsets[c], cacheBytes[c]});

  KF_READ(weightNames,
          file.get<std::span<const std::string>>(key("weights", "name")));
  const size_t weights = weightNames.size();
  KF_READ(formats, reader.table<std::string>("weights", "format", weights));
  KF_READ(layouts, reader.table<std::string>("weights", "layout", weights));
  for (auto [field, values] :
       {std::pair<std::string_view, std::span<const std::string>>{"name",
                                                                  weightNames},
        {"format", formats},
        {"layout", layouts}})
    if (absl::Status s = checkNames(name, key("weights", field), values);
        !s.ok())
      return s;
  KF_READ(ranks, reader.table<uint32_t>("weights", "rank", weights));
  size_t dimCount = 0;
  for (uint32_t rank : ranks) {
    if (rank < 1 || rank > 3)
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": a weight of rank ", rank, ", expected 1 to 3"));
    dimCount += rank;
  }
  KF_READ(dims, reader.table<int64_t>("weights", "dims", dimCount));
  size_t dim = 0;
  for (size_t w = 0; w < weights; ++w) {
    PlanWeight weight;
    weight.name = weightNames[w];
    std::optional<Format> format = formatFromName(formats[w]);
    if (!format)
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": weight ", weight.name, ": unknown format '",
                       formats[w], "'"));
    weight.format = *format;
    weight.shape.assign(dims.begin() + dim, dims.begin() + dim + ranks[w]);
    dim += ranks[w];
    for (int64_t d : weight.shape)
      if (d < 1)
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": weight ", weight.name, ": dimension ", d));
    if (!layouts[w].empty()) {
      weight.layout = packedLayoutNamed(layouts[w]);
      if (!weight.layout || !checkLayout(*weight.layout).ok())
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": weight ", weight.name, ": layout '",
                         layouts[w], "' is not one this runtime packs"));
    }
    plan.weights.push_back(std::move(weight));
  }

  KF_READ(inputNames,
          file.get<std::span<const std::string>>(key("inputs", "name")));
  if (absl::Status s = checkNames(name, key("inputs", "name"), inputNames);
      !s.ok())
    return s;
  KF_READ(inputFixed,
          reader.table<int64_t>("inputs", "fixed", inputNames.size()));
  KF_READ(inputPerRow,
          reader.table<int64_t>("inputs", "per_row", inputNames.size()));
  for (size_t i = 0; i < inputNames.size(); ++i)
    plan.inputs.push_back({inputNames[i], {inputFixed[i], inputPerRow[i]}});

  KF_READ(stepNames,
          file.get<std::span<const std::string>>(key("steps", "name")));
  if (absl::Status s = checkNames(name, key("steps", "name"), stepNames);
      !s.ok())
    return s;
  const size_t steps = stepNames.size();
  KF_READ(kernel, reader.table<uint32_t>("steps", "kernel", steps));
  KF_READ(itemsFixed, reader.table<int64_t>("steps", "items_fixed", steps));
  KF_READ(itemsPerRow, reader.table<int64_t>("steps", "items_per_row", steps));
  KF_READ(split, reader.table<uint32_t>("steps", "split", steps));
  KF_READ(group, reader.table<int64_t>("steps", "group", steps));
  KF_READ(barrier, reader.table<uint8_t>("steps", "barrier", steps));
  KF_READ(operandCount, reader.table<uint32_t>("steps", "operands", steps));
  KF_READ(stepKind, reader.table<uint32_t>("steps", "kind", steps));
  KF_READ(experts, reader.table<int64_t>("steps", "experts", steps));
  KF_READ(slots, reader.table<int64_t>("steps", "slots", steps));
  KF_READ(expertRows, reader.table<int64_t>("steps", "expert_rows", steps));
  KF_READ(rowPerSlot, reader.table<uint8_t>("steps", "row_per_slot", steps));
  KF_READ(xRowBytes, reader.table<int64_t>("steps", "x_row_bytes", steps));
  KF_READ(expertBytes, reader.table<int64_t>("steps", "expert_bytes", steps));
  KF_READ(stepRows, reader.table<int64_t>("steps", "rows", steps));
  size_t operands = 0;
  for (uint32_t n : operandCount)
    operands += n;
  KF_READ(kind, reader.table<uint32_t>("operands", "kind", operands));
  KF_READ(index, reader.table<uint32_t>("operands", "index", operands));
  KF_READ(offset, reader.table<int64_t>("operands", "offset", operands));
  KF_READ(fixed, reader.table<int64_t>("operands", "fixed", operands));
  KF_READ(perRow, reader.table<int64_t>("operands", "per_row", operands));
#undef KF_READ
  size_t operand = 0;
  for (size_t s = 0; s < steps; ++s) {
    PlanStep step;
    step.name = stepNames[s];
    step.kernel = kernel[s];
    step.items = {itemsFixed[s], itemsPerRow[s]};
    step.split = static_cast<WorkSplit>(split[s]);
    step.group = group[s];
    step.barrierBefore = barrier[s] != 0;
    step.kind = static_cast<StepKind>(stepKind[s]);
    step.experts = {experts[s],         slots[s],     expertRows[s],
                    rowPerSlot[s] != 0, xRowBytes[s], expertBytes[s]};
    step.rows = stepRows[s];
    for (uint32_t o = 0; o < operandCount[s]; ++o, ++operand)
      step.operands.push_back({static_cast<OperandKind>(kind[operand]),
                               index[operand],
                               offset[operand],
                               {fixed[operand], perRow[operand]}});
    plan.steps.push_back(std::move(step));
  }
  if (absl::Status s = plan.validate(); !s.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", plan.name, ": ", s.message()));
  return plan;
}

} // namespace

absl::StatusOr<std::vector<uint8_t>>
serializePlans(std::span<const Plan> plans) {
  gguf::Writer writer;
  writer.addMetadata(std::string(kAbiVersion),
                     static_cast<uint32_t>(KF_PLAN_ABI_VERSION));
  writer.addMetadata(std::string(kCount), static_cast<uint32_t>(plans.size()));
  for (size_t p = 0; p < plans.size(); ++p)
    writePlan(writer, p, plans[p]);
  return writer.serialize("plans");
}

absl::StatusOr<std::vector<Plan>> parsePlans(std::span<const uint8_t> bytes,
                                             const std::string &name) {
  absl::StatusOr<gguf::File> parsed = gguf::File::parse(bytes, name);
  if (!parsed.ok())
    return parsed.status();
  const gguf::File &file = *parsed;
  // The version first: a plan of another version may hold anything else.
  absl::StatusOr<uint32_t> version = file.get<uint32_t>(kAbiVersion);
  if (!version.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a plan (no ", toAbsl(kAbiVersion), ")"));
  if (*version != KF_PLAN_ABI_VERSION)
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": a plan of ABI version ", *version,
                     "; this runtime runs version ", KF_PLAN_ABI_VERSION,
                     " (compile it again with this version's kf-compile)"));
  absl::StatusOr<uint32_t> count = file.get<uint32_t>(kCount);
  if (!count.ok())
    return count.status();
  if (*count < 1 || *count > kMaxPlans)
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", *count, " plans, expected 1 to ", kMaxPlans));
  std::vector<Plan> plans;
  for (size_t p = 0; p < *count; ++p) {
    absl::StatusOr<Plan> plan = readPlan(file, p, name);
    if (!plan.ok())
      return plan.status();
    // The plans of one model run on one machine and share one state.
    const Plan &first = plans.empty() ? *plan : plans.front();
    if (plan->target != first.target || plan->features != first.features ||
        plan->model != first.model || plan->stateBytes != first.stateBytes ||
        plan->maxContext != first.maxContext || plan->caches != first.caches)
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": plan ", plan->name,
          " has another target, model or state than plan ", first.name));
    for (const Plan &other : plans)
      if (other.name == plan->name)
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": two plans named ", plan->name));
    plans.push_back(*std::move(plan));
  }
  return plans;
}

} // namespace kf
