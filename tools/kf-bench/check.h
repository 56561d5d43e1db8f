// A kernel's output against the reference dot product, before it is timed.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "matmul_kernel.h"

namespace kf::bench {

// The largest |kernel - reference| an Agreement::Reordered kernel may show
// for one output, given Σ|w̃_x·ã_x| over the decoded weight and activation
// row (`magnitude`) and the row length `k`.
//
// The reference and the kernel decode the same integers and scales; each
// evaluates Σ w_x·a_x with at most k + 2 roundings on the path from any term
// to the result (block formats: an exact integer sum per block, two scale
// products, then one addition per block; plain formats: one product and one
// addition per element). Each is thus within γ(k+2)·Σ|w̃_x·ã_x| of the exact
// sum, γ(n) = n·u / (1 − n·u) with u = 2^-24 (Higham, Accuracy and Stability
// of Numerical Algorithms, §3.1), and the two are within twice that.
double reorderedTolerance(int64_t k, double magnitude);

// Compares `args.out`, which a kernel with `agreement` computed for `args`
// (in the runtime layouts, whatever the kernel read) on `threads` threads in
// blocks of `row_group`s, with kf::dot on a sample of outputs: the first and
// last weight row and the first and last row of every thread's block (where
// splitting mistakes show), plus rows drawn with `seed`, each for every
// activation row when M <= 16 and for the first, the last and eight drawn
// ones otherwise. Returns an error naming the first output out of agreement.
absl::Status checkOutput(const MatmulArgs &args, Agreement agreement,
                         int threads, int64_t rowGroup, uint64_t seed);

} // namespace kf::bench
