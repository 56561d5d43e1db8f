// kf-run: runs a model on a list of tokens (run.h).
#include <iostream>
#include <string>
#include <vector>

#include "run.h"

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return kf::run_tool::run(args, std::cout, std::cerr);
}
