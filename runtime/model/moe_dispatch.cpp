// Expert buckets and the per-bucket kernel calls of a kf.expert_qmatmul.
#include "kf/runtime/moe_dispatch.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kf {

absl::StatusOr<ExpertBuckets> bucketByExpert(std::span<const int32_t> ids,
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

absl::Status runExpertMatmul(const ExpertMatmul &matmul,
                             const ExpertBuckets &buckets,
                             const ExpertActivations &x, std::span<float> y) {
  const auto slots = static_cast<int64_t>(buckets.slots.size());
  if (!matmul.kernel || !matmul.packedW || matmul.expertBytes <= 0 ||
      matmul.n <= 0)
    return absl::InvalidArgumentError(
        "run_expert_matmul: a kernel, packed weights, a positive expert size "
        "and n > 0 are required");
  if (x.rowBytes <= 0 || x.slotsPerRow <= 0 ||
      static_cast<int64_t>(x.packed.size()) % x.rowBytes != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "run_expert_matmul: ", x.packed.size(),
        " bytes of activations are not rows of ", x.rowBytes, " bytes"));
  const int64_t rows = static_cast<int64_t>(x.packed.size()) / x.rowBytes;
  if (rows * x.slotsPerRow != slots)
    return absl::InvalidArgumentError(
        absl::StrCat("run_expert_matmul: ", rows, " activation rows for ",
                     slots, " slots, expected ", slots / x.slotsPerRow,
                     " (one per ", x.slotsPerRow, " slots)"));
  if (static_cast<int64_t>(y.size()) != slots * matmul.n)
    return absl::InvalidArgumentError(
        absl::StrCat("run_expert_matmul: y holds ", y.size(), " floats, ",
                     "expected ", slots, " slots of ", matmul.n));

  // Scratch for the largest bucket, reused: its activation rows side by
  // side, as the kernel reads m columns, and its m rows of results.
  int64_t widest = 0;
  for (int64_t e = 0; e < buckets.experts(); ++e)
    widest = std::max(widest, buckets.begin[e + 1] - buckets.begin[e]);
  std::vector<uint8_t> gathered(static_cast<size_t>(widest * x.rowBytes));
  std::vector<float> out(static_cast<size_t>(widest * matmul.n));
  for (int64_t e = 0; e < buckets.experts(); ++e) {
    std::span<const int64_t> bucket = buckets.bucket(e);
    if (bucket.empty())
      continue;
    const auto m = static_cast<int64_t>(bucket.size());
    for (int64_t i = 0; i < m; ++i)
      std::memcpy(gathered.data() + i * x.rowBytes,
                  x.packed.data() + bucket[i] / x.slotsPerRow * x.rowBytes,
                  static_cast<size_t>(x.rowBytes));
    matmul.kernel(matmul.packedW + e * matmul.expertBytes, gathered.data(),
                  out.data(), matmul.n, m, 0, matmul.n);
    for (int64_t i = 0; i < m; ++i)
      std::memcpy(y.data() + bucket[i] * matmul.n, out.data() + i * matmul.n,
                  static_cast<size_t>(matmul.n) * sizeof(float));
  }
  return absl::OkStatus();
}

} // namespace kf
