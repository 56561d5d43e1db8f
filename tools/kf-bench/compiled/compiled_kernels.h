// The compiler's quantized matmul kernels as kf-bench kernels under test:
// JIT-compiled for this machine for each ISA it runs, weights packed into the
// kernel's layout and activations quantized by the runtime's packer, both
// outside the timing. Built only with the compiler (it links LLVM).
#pragma once

#include <vector>

#include "matmul_kernel.h"

namespace kf::bench {

// One kernel per ISA this machine runs, widest first ("kf-avx512vnni",
// "kf-avx2", "kf-scalar"), each for the formats the emitters support.
std::vector<MatmulKernel> compiled_kernels();

} // namespace kf::bench
