// MoE expert dispatch: the run-time half of a kf.expert_qmatmul
// (docs/codegen.md, "Expert matmuls"). The router decides at run time which
// (token, slot) pairs each expert serves, so the executor groups them by
// expert, gathers each group's packed activation rows contiguous, calls the
// expert's compiled kernel once with m = the group's size (the kernel splits
// any m into its column tiles), and scatters the rows back. The order is
// fixed — experts ascending, slots ascending within an expert — so a run is
// reproducible bit for bit whatever the routing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/kernel_abi.h"

namespace kf {

// The slots of a routing grouped by expert. A slot is t * k + j, the j-th of
// token t's k experts (row-major [T, k] ids, as kf.moe_gate returns them).
struct ExpertBuckets {
  // begin[e] .. begin[e + 1] index `slots` for expert e; experts + 1 entries.
  std::vector<int64_t> begin;
  // Every slot once, by expert, each expert's in ascending order.
  std::vector<int64_t> slots;

  int64_t experts() const { return static_cast<int64_t>(begin.size()) - 1; }
  std::span<const int64_t> bucket(int64_t expert) const {
    return std::span<const int64_t>(slots).subspan(
        static_cast<size_t>(begin[expert]),
        static_cast<size_t>(begin[expert + 1] - begin[expert]));
  }
};

// Groups the slots of `ids` (each in [0, experts)) by expert: a stable
// counting sort, O(slots + experts). Fails naming the first id out of range.
absl::StatusOr<ExpertBuckets> bucketByExpert(std::span<const int32_t> ids,
                                             int64_t experts);

// One expert stack's compiled matmul: expert e's packed [n, K] rows start at
// packed_w + e * expertBytes (kf::pack_expert_weights).
struct ExpertMatmul {
  kf_matmul_kernel_fn kernel = nullptr;
  const uint8_t *packedW = nullptr;
  int64_t expertBytes = 0;
  int64_t n = 0;
};

// The activations an expert matmul reads (packed, or the fp32 rows of a
// kernel that quantizes them): rows of `rowBytes`,
// slot s reading row s / slotsPerRow — k when there is one row per token
// (the gate and up projections read the token's input), 1 when there is one
// per slot (the down projection reads the slot's own activation).
struct ExpertActivations {
  std::span<const uint8_t> packed;
  int64_t rowBytes = 0;
  int64_t slotsPerRow = 1;
};

// y[s * n + i] = row i of expert e's product with slot s's activation row,
// for every slot s of `buckets` (e its expert): one kernel call per
// non-empty bucket, in the buckets' order, on rows [0, n). `y` holds n
// floats per slot; an empty bucket runs nothing.
absl::Status runExpertMatmul(const ExpertMatmul &matmul,
                             const ExpertBuckets &buckets,
                             const ExpertActivations &x, std::span<float> y);

} // namespace kf
