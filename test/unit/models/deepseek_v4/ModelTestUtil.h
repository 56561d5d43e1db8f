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
inline Config micro_config() {
  Config c = preset("flash-slice:4")->config;
  c.n_embd = 64;
  c.n_vocab = 96;
  c.bos_token = 0;
  c.eos_token = 1;
  c.n_head = 2;
  c.head_dim = 64;
  c.rope_dim = 32;
  c.q_lora_rank = 32;
  c.o_groups = 2;
  c.o_lora_rank = 32;
  c.indexer_heads = 4;
  c.indexer_head_dim = 64;
  c.indexer_top_k = 4;
  c.n_expert = 8;
  c.n_expert_used = 2;
  c.n_ff_exp = 32;
  return c;
}

// The metadata of `config` with a count-only tokenizer.
inline std::vector<gguf::KeyValue> model_metadata(const Config &config) {
  std::vector<gguf::KeyValue> kv = config.gguf_metadata();
  kv.push_back({"tokenizer.ggml.model", "none"});
  kv.push_back({"tokenizer.ggml.bos_token_id", *config.bos_token});
  kv.push_back({"tokenizer.ggml.eos_token_id", *config.eos_token});
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

inline std::vector<TestTensor> model_tensors(const Config &config) {
  std::vector<TestTensor> tensors;
  for (const TensorSpec &spec : tensor_specs(config)) {
    Format format = fixed_format(spec.kind).value_or(Format::F32);
    std::vector<uint8_t> data(*row_bytes(format, spec.shape[0]) * spec.rows());
    if (spec.kind == TensorKind::Tid2Eid)
      for (int64_t token = 0; token < spec.rows(); ++token)
        for (int64_t j = 0; j < spec.shape[0]; ++j) {
          int32_t expert = static_cast<int32_t>((token + j) % config.n_expert);
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
    writer.add_metadata(kv.key, kv.value);
  for (const TestTensor &t : tensors)
    writer.add_tensor(t.name, t.format, t.shape,
                      std::span<const uint8_t>(t.data));
  absl::StatusOr<std::vector<uint8_t>> bytes = writer.serialize("test.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  out.bytes = *std::move(bytes);
  out.file = gguf::File::parse(out.bytes, "test.gguf");
  ASSERT_TRUE(out.file.ok()) << out.file.status();
}

} // namespace kf::deepseek_v4::testing
