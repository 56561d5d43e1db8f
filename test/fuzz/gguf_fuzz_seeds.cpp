// Writes the seed corpus of gguf_fuzzer into a directory: small valid files
// with every value type, tensors of several formats and shapes, a private
// format, and unusual alignments, for the fuzzer to mutate from.
#include <cstdio>
#include <string>
#include <vector>

#include "kf/runtime/gguf_writer.h"

namespace {

using namespace kf;
using gguf::Value;
using gguf::Writer;

// Tensor bytes: a repeating ramp, so that decoded values vary.
std::vector<uint8_t> bytesOf(Format f, std::vector<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t n : shape)
    elements *= n;
  std::vector<uint8_t> bytes(*rowBytes(f, elements));
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37);
  return bytes;
}

void add(Writer &w, const char *name, Format f, std::vector<int64_t> shape) {
  w.addTensor(name, f, shape, bytesOf(f, shape));
}

std::vector<std::pair<std::string, Writer>> seeds() {
  std::vector<std::pair<std::string, Writer>> files;

  Writer values;
  values.addMetadata("general.architecture", "deepseek4");
  values.addMetadata("u8", uint8_t{1});
  values.addMetadata("i8", int8_t{-1});
  values.addMetadata("u16", uint16_t{2});
  values.addMetadata("i16", int16_t{-2});
  values.addMetadata("u32", uint32_t{3});
  values.addMetadata("i32", int32_t{-3});
  values.addMetadata("f32", 0.5f);
  values.addMetadata("bool", true);
  values.addMetadata("u64", uint64_t{4});
  values.addMetadata("i64", int64_t{-4});
  values.addMetadata("f64", 0.25);
  values.addMetadata("tokens", std::vector<std::string>{"a", "", "bc"});
  values.addMetadata("types", std::vector<int32_t>{1, 2, 3});
  values.addMetadata("flags", std::vector<bool>{true, false});
  values.addMetadata("empty", std::vector<double>{});
  files.emplace_back("values.gguf", std::move(values));

  Writer formats;
  formats.addMetadata("general.alignment", uint32_t{64});
  add(formats, "f32", Format::F32, {5});
  add(formats, "f16", Format::F16, {3, 2});
  add(formats, "bf16", Format::BF16, {2, 2, 2});
  add(formats, "q8_0", Format::Q8_0, {32, 2, 1, 2});
  add(formats, "q4_0", Format::Q4_0, {64, 2});
  add(formats, "mxfp4", Format::MXFP4, {32, 3});
  add(formats, "q4_k", Format::Q4_K, {256});
  files.emplace_back("formats.gguf", std::move(formats));

  Writer privateFormat;
  add(privateFormat, "fractal", Format::FRACTAL64, {64, 2});
  add(privateFormat, "vq3", Format::VQ3_64, {128});
  files.emplace_back("private.gguf", std::move(privateFormat));

  Writer packed;
  packed.addMetadata("general.alignment", uint32_t{1});
  add(packed, "a", Format::F16, {3});
  add(packed, "empty", Format::Q8_0, {32, 0, 5});
  add(packed, "b", Format::Q5_0, {32});
  files.emplace_back("packed.gguf", std::move(packed));
  return files;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gguf_fuzz_seeds DIRECTORY\n");
    return 2;
  }
  for (const auto &[name, writer] : seeds()) {
    absl::Status s = writer.write(std::string(argv[1]) + "/" + name);
    if (!s.ok()) {
      std::fprintf(stderr, "gguf_fuzz_seeds: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}
