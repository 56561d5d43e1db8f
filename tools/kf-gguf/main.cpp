// kf-gguf: inspect, decode, check and re-quantize GGUF files (commands.h).
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands.h"

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The progress bar redraws one line in place: only on a terminal.
  return kf::gguf_tool::run(args, std::cout, std::cerr, isatty(STDERR_FILENO));
}
