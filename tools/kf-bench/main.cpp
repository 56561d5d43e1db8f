// kf-bench: kernel benchmarks against the DRAM roofline and oneDNN (cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return kf::bench::run(args, std::cout, std::cerr);
}
