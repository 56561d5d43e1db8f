// The interface every matmul kernel under test implements: the reference
// here, compiled kernels (docs/codegen.md's kernel ABI) through an adapter.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/format.h"

namespace kf::bench {

// One product out = A · Wᵀ of M activation rows with N weight rows, each K
// elements long. The weights and activations are in the kernel's layouts:
// the runtime's unless the kernel packs them (MatmulKernel::pack_*).
struct MatmulArgs {
  Format format; // of the weights
  int64_t m, n, k;
  // Runtime layout: N rows of rowBytes(format, K) bytes.
  const uint8_t *weights;
  // Runtime layout: M rows of rowBytes(dot_format, K) bytes, each row the
  // reference's quantize_activation of the row's floats.
  const uint8_t *activations;
  float *out; // M rows of N floats: out[i * N + j]
};

// How a kernel's results must compare with the reference dot product.
enum class Agreement {
  // The reference's integer and float arithmetic in the reference's order:
  // equal bit for bit.
  Exact,
  // Float operations reordered or fused: within the bound check.h derives.
  Reordered,
};

struct MatmulKernel {
  std::string name;
  // Whether it computes weights of format `f`; the bench skips the others.
  std::function<bool(Format)> supports;
  // Weight rows come in groups of this many (interleaved layouts): every
  // thread's block of rows starts at a multiple of it and ends at one, or
  // at N.
  int64_t rowGroup = 1;
  // Optional: the kernel's weight layout made from N rows of K weights of
  // `format` in the runtime layout, as the runtime repacks at load time.
  // Not timed; the result is what a call reads, and what is cycled through
  // when cold. Unset: the kernel reads the runtime layout.
  std::function<absl::StatusOr<std::vector<uint8_t>>(
      Format format, int64_t n, int64_t k, std::span<const uint8_t> rows)>
      packWeights;
  // Optional: the kernel's activation layout made from M rows of K floats
  // (its own quantizer, which must give the reference quantize_activation's
  // values for the check to hold). Not timed. Unset: the reference's rows.
  std::function<absl::StatusOr<std::vector<uint8_t>>(
      Format format, int64_t m, int64_t k, std::span<const float> rows)>
      packActivations;
  // Writes out[i * N + j] for every i < M and rowBegin <= j < rowEnd, and
  // nothing else. The bench calls it on every thread of its pool at once
  // with disjoint contiguous row ranges, so it keeps no shared mutable state;
  // threading, timing and memory belong to the caller.
  std::function<absl::Status(const MatmulArgs &, int64_t rowBegin,
                             int64_t rowEnd)>
      run;
  Agreement agreement = Agreement::Exact;
};

// kf::dot for every (activation row, weight row) pair, weight row by weight
// row so each is read from memory once. Slow, and the golden the others are
// checked against.
MatmulKernel referenceKernel();

} // namespace kf::bench
