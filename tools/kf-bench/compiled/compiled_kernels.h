// The compiler's quantized matmul kernels as kf-bench kernels under test:
// JIT-compiled for this machine for each ISA it runs, weights packed into the
// kernel's layout and activations quantized by the runtime's packer, both
// outside the timing. Built only with the compiler (it links LLVM).
#pragma once

#include <vector>

#include "matmul_kernel.h"

namespace kf::bench {

// Two kernels per ISA this machine runs, widest first ("kf-avx512vnni",
// "kf-avx512vnni-fq", "kf-avx2", ..., "kf-scalar-fq"), each for the formats
// the emitters support: the plain one reads activations the bench packed
// untimed, the "-fq" one quantizes the fp32 rows itself, in its time.
std::vector<MatmulKernel> compiledKernels();

} // namespace kf::bench
