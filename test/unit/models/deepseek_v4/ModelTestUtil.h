// Small deepseek4 files for the configuration and tensor-table tests, built
// in memory from a Config.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_writer.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::testing {

// Every structural feature (window-only, CSA, HCA, hash and learned
// routing) at a few kilobytes: four layers of ratios 0, 0, 4, 128.
inline Config microConfig() {
  Config c = preset("flash-slice:4")->config;
  c.nEmbd = 64;
  c.nVocab = 96;
  c.bosToken = 0;
  c.eosToken = 1;
  c.nHead = 2;
  c.headDim = 64;
  c.ropeDim = 32;
  c.qLoraRank = 32;
  c.oGroups = 2;
  c.oLoraRank = 32;
  c.indexerHeads = 4;
  c.indexerHeadDim = 64;
  c.indexerTopK = 4;
  c.nExpert = 8;
  c.nExpertUsed = 2;
  c.nFfExp = 32;
  return c;
}

// The metadata of `config` with a count-only tokenizer.
inline std::vector<gguf::KeyValue> modelMetadata(const Config &config) {
  std::vector<gguf::KeyValue> kv = config.ggufMetadata();
  kv.push_back({"tokenizer.ggml.model", "none"});
  kv.push_back({"tokenizer.ggml.bos_token_id", *config.bosToken});
  kv.push_back({"tokenizer.ggml.eos_token_id", *config.eosToken});
  return kv;
}

// One tensor as a test writes it: the spec's name, shape and format (the
// kind's fixed format, or f32), zeros for values, and tid2eid rows of
// distinct experts. A test changes what it needs before it is written.
struct TestTensor {
  std::string name;
  Format format;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

inline std::vector<TestTensor> modelTensors(const Config &config) {
  std::vector<TestTensor> tensors;
  for (const TensorSpec &spec : tensorSpecs(config)) {
    Format format = fixedFormat(spec.kind).value_or(Format::F32);
    std::vector<uint8_t> data(*rowBytes(format, spec.shape[0]) * spec.rows());
    if (spec.kind == TensorKind::Tid2Eid)
      for (int64_t token = 0; token < spec.rows(); ++token)
        for (int64_t j = 0; j < spec.shape[0]; ++j) {
          int32_t expert = static_cast<int32_t>((token + j) % config.nExpert);
          std::memcpy(&data[4 * (token * spec.shape[0] + j)], &expert, 4);
        }
    tensors.push_back({spec.name, format, spec.shape, std::move(data)});
  }
  return tensors;
}

// A file named "test.gguf" holding `metadata` and `tensors`, parsed from
// memory; `bytes` keeps the data the File points into.
struct InMemoryFile {
  std::vector<uint8_t> bytes;
  absl::StatusOr<gguf::File> file = absl::UnknownError("not written");
};

inline void write(InMemoryFile &out,
                  const std::vector<gguf::KeyValue> &metadata,
                  const std::vector<TestTensor> &tensors) {
  gguf::Writer writer;
  for (const gguf::KeyValue &kv : metadata)
    writer.addMetadata(kv.key, kv.value);
  for (const TestTensor &t : tensors)
    writer.addTensor(t.name, t.format, t.shape,
                     std::span<const uint8_t>(t.data));
  absl::StatusOr<std::vector<uint8_t>> bytes = writer.serialize("test.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  out.bytes = *std::move(bytes);
  out.file = gguf::File::parse(out.bytes, "test.gguf");
  ASSERT_TRUE(out.file.ok()) << out.file.status();
}

} // namespace kf::deepseek_v4::testing
