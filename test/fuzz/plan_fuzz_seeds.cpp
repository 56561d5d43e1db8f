// Writes the seed corpus of plan_fuzzer into a directory: a model's plans
// with every operand kind and work split, and one without steps, for the
// fuzzer to mutate from.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kf/runtime/plan_file.h"

namespace {

using namespace kf;

std::vector<std::pair<std::string, std::vector<Plan>>> seeds() {
  std::vector<std::pair<std::string, std::vector<Plan>>> plans;
  Plan empty;
  empty.name = "empty";
  empty.maxRows = 1;
  plans.emplace_back("empty.kfp", std::vector<Plan>{empty});

  Plan layer;
  layer.name = "prefill";
  layer.target = "znver5";
  layer.features = {"avx2", "avx512vnni"};
  layer.maxRows = 16;
  layer.arenaBytes = 8192;
  layer.stateBytes = 1024;
  layer.maxContext = 64;
  layer.caches = {{"blk.0.kv", 0, 512}, {"blk.0.compressor", 512, 512}};
  layer.kernels = {"norm", "matmul", "count"};
  layer.weights = {
      {"g", Format::F32, {64}, std::nullopt},
      {"w", Format::Q4_K, {32, 256}, PackedLayout{Format::Q4_K, 8}},
      {"e",
       Format::IQ1_S,
       {4, 16, 256},
       PackedLayout{Format::IQ1_S, 16, LaneEncoding::Signed,
                    WeightCoding::Ternary}}};
  layer.inputs = {{"arg0", {0, 256}}, {"result0", {16, 128}}};
  layer.steps = {{"norm",
                  0,
                  {{OperandKind::Input, 0, 0, {0, 256}},
                   {OperandKind::Weight, 0, 0, {256, 0}},
                   {OperandKind::Arena, 0, 0, {0, 256}}},
                  {0, 1},
                  WorkSplit::Blocks,
                  1,
                  false,
                  StepKind::Kernel,
                  {},
                  0},
                 {"matmul",
                  1,
                  {{OperandKind::Weight, 1, 0, {4608, 0}},
                   {OperandKind::Arena, 0, 0, {0, 256}},
                   {OperandKind::Input, 1, 16, {0, 128}}},
                  {32, 0},
                  WorkSplit::Blocks,
                  8,
                  true,
                  StepKind::Kernel,
                  {},
                  0},
                 {"count",
                  2,
                  {{OperandKind::Arena, 0, 4096, {64, 0}},
                   {OperandKind::State, 0, 512, {256, 0}}},
                  {16, 0},
                  WorkSplit::Claim,
                  3,
                  true,
                  StepKind::Kernel,
                  {},
                  0},
                 {"single",
                  2,
                  {},
                  {1, 0},
                  WorkSplit::Single,
                  1,
                  false,
                  StepKind::Kernel,
                  {},
                  1}};
  // A model's two plans sharing the state.
  Plan decode = layer;
  decode.name = "decode";
  decode.maxRows = 1;
  decode.steps.resize(1);
  plans.emplace_back("layer.kfp", std::vector<Plan>{layer, decode});
  return plans;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: plan_fuzz_seeds DIRECTORY\n");
    return 2;
  }
  for (const auto &[name, plans] : seeds()) {
    absl::StatusOr<std::vector<uint8_t>> bytes = serializePlans(plans);
    if (!bytes.ok() || !parsePlans(*bytes, name).ok()) {
      std::fprintf(stderr, "plan_fuzz_seeds: %s does not round-trip\n",
                   name.c_str());
      return 1;
    }
    std::ofstream out(std::string(argv[1]) + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes->data()),
              static_cast<std::streamsize>(bytes->size()));
    if (!out) {
      std::fprintf(stderr, "plan_fuzz_seeds: cannot write %s\n", name.c_str());
      return 1;
    }
  }
  return 0;
}
