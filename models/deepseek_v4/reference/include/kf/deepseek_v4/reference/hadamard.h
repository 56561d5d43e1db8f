// DeepSeek-V4 golden reference: the Walsh–Hadamard transform of the indexer
// (docs/models/deepseek_v4_model.md §2 "Hadamard", §4.4, precisions §8).
#pragma once

#include <span>

namespace kf::deepseek_v4::reference {

// Had(x) in place: y_i = (1/sqrt(n)) · Σ_j (−1)^popcount(i & j) · x_j, the
// natural (Sylvester) order H_2n = [[H_n, H_n], [H_n, −H_n]]. n = x.size()
// must be a power of two (128 in the model). Each sum is taken in fp64 and
// the result rounded to bf16, the dtype the reference's transform reads and
// writes.
void hadamard(std::span<float> x);

} // namespace kf::deepseek_v4::reference
