#include "kf/runtime/plan_weights.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/packing.h"

namespace kf {

namespace {

// A part of one weight packed by one work item: rows [begin, end) of
// expert `expert`, whole row groups of the layout.
struct Part {
  size_t weight;
  int64_t expert;
  int64_t begin, end;
};

// File bytes per work item: large enough that claiming costs nothing, small
// enough that the largest tensor spreads over every thread.
constexpr uint64_t kPartBytes = uint64_t{4} << 20;

std::string shapeText(std::span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

} // namespace

absl::StatusOr<uint64_t> planWeightBytes(const PlanWeight &weight) {
  int64_t elements = 1;
  for (int64_t d : weight.shape)
    elements *= d;
  if (!weight.layout) {
    std::optional<uint64_t> bytes = rowBytes(weight.format, elements);
    if (!bytes)
      return absl::InvalidArgumentError(
          absl::StrCat("weight ", weight.name, ": ", elements,
                       " elements are not whole blocks of ",
                       toAbsl(formatInfo(weight.format).name)));
    return *bytes;
  }
  const int64_t k = weight.shape.back();
  const int64_t n = weight.shape.size() < 2 ? 1 : weight.shape.end()[-2];
  const int64_t experts = weight.shape.size() == 3 ? weight.shape[0] : 1;
  absl::StatusOr<uint64_t> one = packedWeightBytes(*weight.layout, n, k);
  if (!one.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("weight ", weight.name, ": ", one.status().message()));
  return *one * static_cast<uint64_t>(experts);
}

absl::StatusOr<PlanWeights> PlanWeights::load(const Plan &plan,
                                              const std::string &path,
                                              ThreadPool &pool,
                                              LoadProgress *progress) {
  PlanWeights weights;
  absl::StatusOr<gguf::File> file = gguf::File::open(path);
  if (!file.ok())
    return file.status();
  weights.file_ = std::make_unique<gguf::File>(std::move(*file));
  const gguf::File &gguf = *weights.file_;

  // Each weight's tensor, checked; the packed ones get their buffers and
  // are cut into parts.
  std::vector<const gguf::TensorInfo *> tensors;
  std::vector<Part> parts;
  uint64_t bytesToPack = 0; // file bytes of the packed weights
  weights.packed_.resize(plan.weights.size());
  for (size_t w = 0; w < plan.weights.size(); ++w) {
    const PlanWeight &weight = plan.weights[w];
    const gguf::TensorInfo *tensor = gguf.findTensor(weight.name);
    if (!tensor)
      return absl::NotFoundError(absl::StrCat(path, ": no tensor ", weight.name,
                                              ", which the plan reads"));
    std::vector<int64_t> shape(tensor->shape.rbegin(), tensor->shape.rend());
    if (tensor->format != weight.format || shape != weight.shape)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor ", weight.name, " is ",
                       toAbsl(formatInfo(tensor->format).name), " ",
                       shapeText(shape), "; the plan was compiled for ",
                       toAbsl(formatInfo(weight.format).name), " ",
                       shapeText(weight.shape)));
    tensors.push_back(tensor);
    weights.sourceBytes_ += tensor->bytes;
    absl::StatusOr<uint64_t> bytes = planWeightBytes(weight);
    if (!bytes.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", bytes.status().message()));
    if (!weight.layout) {
      weights.spans_.push_back(gguf.data(*tensor));
      continue;
    }
    absl::StatusOr<PageBuffer> buffer = PageBuffer::allocate(*bytes);
    if (!buffer.ok())
      return absl::ResourceExhaustedError(absl::StrCat(
          path, ": packing ", weight.name, ": ", buffer.status().message()));
    weights.packed_[w] = std::move(*buffer);
    weights.packedBytes_ += *bytes;
    bytesToPack += tensor->bytes;
    weights.spans_.push_back(weights.packed_[w].span());
    const int64_t k = weight.shape.back();
    const int64_t n = weight.shape.size() < 2 ? 1 : weight.shape.end()[-2];
    const int64_t experts = weight.shape.size() == 3 ? weight.shape[0] : 1;
    const int64_t group = weight.layout->rows;
    const uint64_t groupBytes = *rowBytes(weight.format, k) * group;
    const int64_t groupsPerPart =
        std::max<int64_t>(1, static_cast<int64_t>(kPartBytes / groupBytes));
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t r = 0; r < n; r += groupsPerPart * group)
        parts.push_back({w, e, r, std::min(n, r + groupsPerPart * group)});
  }

  // The parts in parallel.
  if (progress)
    progress->total.store(bytesToPack, std::memory_order_relaxed);
  std::vector<std::atomic<int64_t>> partsLeft(plan.weights.size());
  for (const Part &part : parts)
    partsLeft[part.weight].fetch_add(1, std::memory_order_relaxed);
  absl::Status status = parallelClaim(
      pool, static_cast<int64_t>(parts.size()), 1,
      [&](int64_t begin, int64_t end, int) -> absl::Status {
        for (int64_t i = begin; i < end; ++i) {
          const Part &part = parts[i];
          const PlanWeight &weight = plan.weights[part.weight];
          const int64_t k = weight.shape.back();
          const int64_t n =
              weight.shape.size() < 2 ? 1 : weight.shape.end()[-2];
          const uint64_t row = *rowBytes(weight.format, k);
          std::span<const uint8_t> src =
              gguf.data(*tensors[part.weight])
                  .subspan((part.expert * n + part.begin) * row,
                           (part.end - part.begin) * row);
          // An expert's packed rows start at a multiple of its packed size,
          // and rows [begin, end) of it at begin / group row groups in.
          const uint64_t expertBytes = *packedWeightBytes(*weight.layout, n, k);
          const uint64_t offset =
              part.expert * expertBytes +
              (part.begin == 0
                   ? 0
                   : *packedWeightBytes(*weight.layout, part.begin, k));
          absl::StatusOr<uint64_t> size =
              packedWeightBytes(*weight.layout, part.end - part.begin, k);
          if (!size.ok())
            return size.status();
          std::span<uint8_t> dst =
              weights.packed_[part.weight].span().subspan(offset, *size);
          if (absl::Status s = packWeights(*weight.layout, src,
                                           part.end - part.begin, k, dst);
              !s.ok())
            return absl::InvalidArgumentError(absl::StrCat(
                path, ": weight ", weight.name, ": ", s.message()));
          if (progress)
            progress->done.fetch_add(src.size(), std::memory_order_relaxed);
          // The part's pages go at once, so that no more than a part a
          // thread is resident twice; the pages it shares with its
          // neighbours, once the tensor's last part is packed.
          gguf.release(src);
          if (partsLeft[part.weight].fetch_sub(1, std::memory_order_acq_rel) ==
              1)
            gguf.release(gguf.data(*tensors[part.weight]));
        }
        return absl::OkStatus();
      });
  if (!status.ok())
    return status;
  return weights;
}

Plan mergeWeights(std::span<const Plan *const> plans,
                  std::vector<std::vector<size_t>> &indices) {
  Plan merged;
  indices.assign(plans.size(), {});
  for (size_t p = 0; p < plans.size(); ++p)
    for (const PlanWeight &weight : plans[p]->weights) {
      auto found =
          std::find(merged.weights.begin(), merged.weights.end(), weight);
      indices[p].push_back(static_cast<size_t>(found - merged.weights.begin()));
      if (found == merged.weights.end())
        merged.weights.push_back(weight);
    }
  return merged;
}

absl::StatusOr<SessionMemory>
sessionMemory(std::span<const Plan *const> plans) {
  SessionMemory memory;
  std::vector<std::vector<size_t>> indices;
  Plan merged = mergeWeights(plans, indices);
  // A weight looked up by token in any plan is resident a row at a time.
  std::vector<bool> lookedUp(merged.weights.size(), false);
  for (size_t p = 0; p < plans.size(); ++p) {
    std::vector<bool> lookups = plans[p]->tokenLookups();
    for (size_t w = 0; w < lookups.size(); ++w)
      if (lookups[w])
        lookedUp[indices[p][w]] = true;
    memory.arenas += static_cast<uint64_t>(plans[p]->arenaBytes);
    memory.state =
        std::max(memory.state, static_cast<uint64_t>(plans[p]->stateBytes));
  }
  for (size_t w = 0; w < merged.weights.size(); ++w) {
    const PlanWeight &weight = merged.weights[w];
    absl::StatusOr<uint64_t> bytes = planWeightBytes(weight);
    if (!bytes.ok())
      return bytes.status();
    if (weight.layout)
      memory.packedWeights += *bytes;
    else if (!lookedUp[w])
      memory.mappedWeights += *bytes;
    else
      memory.mappedWeights +=
          *bytes /
          static_cast<uint64_t>(std::max<int64_t>(1, weight.shape.front()));
  }
  return memory;
}

} // namespace kf
