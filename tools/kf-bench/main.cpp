// kf-bench: kernel benchmarks against the DRAM roofline and oneDNN (cli.h).
// Built with the compiler, it also times the compiled kernels.
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#ifdef KF_BENCH_COMPILED_KERNELS
#include "compiled_kernels.h"
#endif

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<kf::bench::MatmulKernel> compiled;
#ifdef KF_BENCH_COMPILED_KERNELS
  compiled = kf::bench::compiledKernels();
#endif
  return kf::bench::run(args, std::cout, std::cerr, compiled);
}
