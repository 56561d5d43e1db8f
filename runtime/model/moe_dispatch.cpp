// Expert buckets and the per-bucket kernel calls of a kf.expert_qmatmul.
#include "kf/runtime/moe_dispatch.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kf {

absl::StatusOr<ExpertBuckets> bucket_by_expert(std::span<const int32_t> ids,
                                               int64_t experts) {
  if (experts <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("bucket_by_expert: ", experts, " experts, expected > 0"));
  ExpertBuckets buckets;
  buckets.begin.assign(static_cast<size_t>(experts) + 1, 0);
  for (size_t s = 0; s < ids.size(); ++s) {
    if (ids[s] < 0 || ids[s] >= experts)
      return absl::InvalidArgumentError(
          absl::StrCat("bucket_by_expert: slot ", s, " routes to expert ",
                       ids[s], ", outside [0, ", experts, ")"));
    ++buckets.begin[static_cast<size_t>(ids[s]) + 1];
  }
  for (size_t e = 1; e < buckets.begin.size(); ++e)
    buckets.begin[e] += buckets.begin[e - 1];
  // Filling in slot order keeps each bucket ascending.
  std::vector<int64_t> next(buckets.begin.begin(), buckets.begin.end() - 1);
  buckets.slots.resize(ids.size());
  for (size_t s = 0; s < ids.size(); ++s)
    buckets.slots[static_cast<size_t>(next[static_cast<size_t>(ids[s])]++)] =
        static_cast<int64_t>(s);
  return buckets;
}

absl::Status run_expert_matmul(const ExpertMatmul &matmul,
                               const ExpertBuckets &buckets,
                               const ExpertActivations &x, std::span<float> y) {
  const auto slots = static_cast<int64_t>(buckets.slots.size());
  if (!matmul.kernel || !matmul.packed_w || matmul.expert_bytes <= 0 ||
      matmul.n <= 0)
    return absl::InvalidArgumentError(
        "run_expert_matmul: a kernel, packed weights, a positive expert size "
        "and n > 0 are required");
  if (x.row_bytes <= 0 || x.slots_per_row <= 0 ||
      static_cast<int64_t>(x.packed.size()) % x.row_bytes != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "run_expert_matmul: ", x.packed.size(),
        " bytes of activations are not rows of ", x.row_bytes, " bytes"));
  const int64_t rows = static_cast<int64_t>(x.packed.size()) / x.row_bytes;
  if (rows * x.slots_per_row != slots)
    return absl::InvalidArgumentError(
        absl::StrCat("run_expert_matmul: ", rows, " activation rows for ",
                     slots, " slots, expected ", slots / x.slots_per_row,
                     " (one per ", x.slots_per_row, " slots)"));
  if (static_cast<int64_t>(y.size()) != slots * matmul.n)
    return absl::InvalidArgumentError(
        absl::StrCat("run_expert_matmul: y holds ", y.size(), " floats, ",
                     "expected ", slots, " slots of ", matmul.n));

  // Scratch for the largest bucket, reused: its activation rows side by
  // side, as the kernel reads m columns, and its m rows of results.
  int64_t widest = 0;
  for (int64_t e = 0; e < buckets.experts(); ++e)
    widest = std::max(widest, buckets.begin[e + 1] - buckets.begin[e]);
  std::vector<uint8_t> gathered(static_cast<size_t>(widest * x.row_bytes));
  std::vector<float> out(static_cast<size_t>(widest * matmul.n));
  for (int64_t e = 0; e < buckets.experts(); ++e) {
    std::span<const int64_t> bucket = buckets.bucket(e);
    if (bucket.empty())
      continue;
    const auto m = static_cast<int64_t>(bucket.size());
    for (int64_t i = 0; i < m; ++i)
      std::memcpy(gathered.data() + i * x.row_bytes,
                  x.packed.data() + bucket[i] / x.slots_per_row * x.row_bytes,
                  static_cast<size_t>(x.row_bytes));
    matmul.kernel(matmul.packed_w + e * matmul.expert_bytes, gathered.data(),
                  out.data(), matmul.n, m, 0, matmul.n);
    for (int64_t i = 0; i < m; ++i)
      std::memcpy(y.data() + bucket[i] * matmul.n, out.data() + i * matmul.n,
                  static_cast<size_t>(matmul.n) * sizeof(float));
  }
  return absl::OkStatus();
}

} // namespace kf
