// The interface every matmul kernel under test implements: the reference
// here, compiled kernels when they exist.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "kf/runtime/format.h"

namespace kf::bench {

// One product out = A · Wᵀ of M activation rows with N weight rows, each K
// elements long, in the layouts the runtime stores them.
struct MatmulArgs {
  Format format; // of the weights; activations are in its dot_format
  int64_t m, n, k;
  const uint8_t *weights;     // N rows of row_bytes(format, K) bytes
  const uint8_t *activations; // M rows of row_bytes(dot_format, K) bytes
  float *out;                 // M rows of N floats: out[i * N + j]
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
  // Writes out[i * N + j] for every i < M and row_begin <= j < row_end, and
  // nothing else. The bench calls it on every thread of its pool at once
  // with disjoint contiguous row ranges, so it keeps no shared mutable state;
  // threading, timing and memory belong to the caller.
  std::function<absl::Status(const MatmulArgs &, int64_t row_begin,
                             int64_t row_end)>
      run;
  Agreement agreement = Agreement::Exact;
};

// kf::dot for every (activation row, weight row) pair, weight row by weight
// row so each is read from memory once. Slow, and the golden the others are
// checked against.
MatmulKernel reference_kernel();

} // namespace kf::bench
