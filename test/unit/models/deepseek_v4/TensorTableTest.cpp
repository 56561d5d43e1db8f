// The tensor table: names, ggml-order shapes and formats per configuration,
// and every error of validateTensors.
#include <map>

#include "ModelTestUtil.h"
#include "gmock/gmock.h"

namespace kf::deepseek_v4 {
namespace {

using testing::InMemoryFile;
using testing::microConfig;
using testing::modelMetadata;
using testing::modelTensors;
using testing::TestTensor;

std::map<std::string, TensorSpec> byName(const Config &config) {
  std::map<std::string, TensorSpec> specs;
  for (const TensorSpec &spec : tensorSpecs(config))
    specs.emplace(spec.name, spec);
  return specs;
}

std::vector<int64_t> shapeOf(const std::map<std::string, TensorSpec> &specs,
                             const std::string &name) {
  auto it = specs.find(name);
  EXPECT_NE(it, specs.end()) << name;
  return it == specs.end() ? std::vector<int64_t>{} : it->second.shape;
}

TEST(TensorTable, FlashShapesAreSpecSectionOneThreeInGgmlOrder) {
  auto specs = byName(preset("flash")->config);
  using S = std::vector<int64_t>;
  const std::pair<std::string, S> expected[] = {
      {"token_embd.weight", {4096, 129280}},
      {"output.weight", {4096, 129280}},
      {"output_hc_fn.weight", {16384, 4}},
      {"blk.0.hc_attn_fn.weight", {16384, 24}},
      {"blk.0.hc_ffn_base.weight", {24}},
      {"blk.0.hc_ffn_scale.weight", {3}},
      {"blk.0.attn_sinks.weight", {64}},
      {"blk.0.attn_q_a.weight", {4096, 1024}},
      {"blk.0.attn_q_b.weight", {1024, 32768}},
      {"blk.0.attn_kv.weight", {4096, 512}},
      // torch's wo_a [8192, 4096]: 8 groups of 1024 outputs over the 4096
      // values of a group's 8 heads.
      {"blk.0.attn_output_a.weight", {4096, 8192}},
      {"blk.0.attn_output_b.weight", {8192, 4096}},
      {"blk.0.ffn_gate_tid2eid.weight", {6, 129280}},
      {"blk.2.attn_compressor_kv.weight", {4096, 1024}},
      {"blk.2.attn_compressor_ape.weight", {1024, 4}},
      {"blk.2.indexer.attn_q_b.weight", {1024, 8192}},
      {"blk.2.indexer.proj.weight", {4096, 64}},
      {"blk.2.indexer_compressor_gate.weight", {4096, 256}},
      {"blk.2.indexer_compressor_ape.weight", {256, 4}},
      {"blk.2.indexer_compressor_norm.weight", {128}},
      {"blk.3.attn_compressor_gate.weight", {4096, 512}},
      {"blk.3.attn_compressor_ape.weight", {512, 128}},
      {"blk.3.exp_probs_b.bias", {256}},
      {"blk.3.ffn_gate_inp.weight", {4096, 256}},
      {"blk.42.ffn_gate_exps.weight", {4096, 2048, 256}},
      {"blk.42.ffn_down_exps.weight", {2048, 4096, 256}},
      {"blk.42.ffn_up_shexp.weight", {4096, 2048}},
      {"blk.42.ffn_down_shexp.weight", {2048, 4096}},
  };
  for (const auto &[name, shape] : expected)
    EXPECT_EQ(shapeOf(specs, name), shape) << name;
  // Hash layers have a token table and no bias, CSA layers an indexer, HCA
  // and window-only layers none.
  EXPECT_FALSE(specs.contains("blk.2.exp_probs_b.bias"));
  EXPECT_FALSE(specs.contains("blk.3.ffn_gate_tid2eid.weight"));
  EXPECT_FALSE(specs.contains("blk.3.indexer.proj.weight"));
  EXPECT_FALSE(specs.contains("blk.1.attn_compressor_kv.weight"));
  EXPECT_FALSE(specs.contains("blk.43.attn_norm.weight"));
  // 6 globals; 24 tensors in every layer, plus 4 (HCA) or 10 (CSA).
  EXPECT_EQ(specs.size(), 6u + 43 * 24 + 20 * 4 + 21 * 10);
}

TEST(TensorTable, FormatRules) {
  for (TensorKind kind :
       {TensorKind::Norm, TensorKind::HcBase, TensorKind::HcScale,
        TensorKind::Sinks, TensorKind::GateBias}) {
    EXPECT_EQ(fixedFormat(kind), Format::F32);
    EXPECT_TRUE(accepts(kind, Format::F32));
    EXPECT_FALSE(accepts(kind, Format::BF16));
  }
  EXPECT_EQ(fixedFormat(TensorKind::Tid2Eid), Format::I32);
  EXPECT_FALSE(accepts(TensorKind::Tid2Eid, Format::F32));
  EXPECT_TRUE(accepts(TensorKind::CompressorApe, Format::BF16));
  EXPECT_FALSE(accepts(TensorKind::CompressorApe, Format::Q8_0));
  EXPECT_TRUE(accepts(TensorKind::HcFn, Format::F16));
  EXPECT_TRUE(accepts(TensorKind::RoutedExperts, Format::MXFP4));
  EXPECT_TRUE(accepts(TensorKind::Projection, Format::VQ3_64));
  EXPECT_FALSE(accepts(TensorKind::Projection, Format::Q8_K));
  EXPECT_FALSE(accepts(TensorKind::Projection, Format::I32));
}

// validateTensors on the micro model after `edit` changed its tensors.
std::string
validate(const std::function<void(std::vector<TestTensor> &)> &edit = nullptr) {
  Config config = microConfig();
  std::vector<TestTensor> tensors = modelTensors(config);
  if (edit)
    edit(tensors);
  InMemoryFile file;
  write(file, modelMetadata(config), tensors);
  if (!file.file.ok())
    return "not written";
  return std::string(validateTensors(config, *file.file).message());
}

TestTensor &tensor(std::vector<TestTensor> &tensors, std::string_view name) {
  for (TestTensor &t : tensors)
    if (t.name == name)
      return t;
  ADD_FAILURE() << "no tensor " << name;
  return tensors.front();
}

void setExpert(TestTensor &t, int64_t token, int64_t slot, int32_t expert) {
  std::memcpy(&t.data[4 * (token * t.shape[0] + slot)], &expert, 4);
}

TEST(ValidateTensors, AcceptsTheModelAndItsAllowedFormats) {
  EXPECT_EQ(validate(), "");
  EXPECT_EQ(validate([](auto &tensors) {
              for (const char *name : {"blk.3.attn_compressor_ape.weight",
                                       "blk.2.indexer_compressor_ape.weight"}) {
                TestTensor &ape = tensor(tensors, name);
                ape.format = Format::BF16;
                ape.data.resize(ape.data.size() / 2);
              }
              TestTensor &q = tensor(tensors, "blk.0.attn_q_b.weight");
              q.format = Format::Q8_0;
              q.data.resize(q.data.size() / 128 * 34);
            }),
            "");
}

TEST(ValidateTensors, Errors) {
  using Edit = std::function<void(std::vector<TestTensor> &)>;
  const std::pair<Edit, std::string> cases[] = {
      {[](auto &tensors) {
         std::erase_if(tensors, [](const TestTensor &t) {
           return t.name == "blk.2.indexer.proj.weight";
         });
       },
       "no tensor 'blk.2.indexer.proj.weight' (expected shape [64, 4])"},
      {[](auto &tensors) {
         TestTensor &t = tensor(tensors, "blk.1.attn_q_b.weight");
         t.shape = {32, 64};
         t.data.resize(32 * 64 * 4);
       },
       "tensor 'blk.1.attn_q_b.weight' has shape [32, 64], expected [32, "
       "128]"},
      {[](auto &tensors) {
         TestTensor &t = tensor(tensors, "blk.0.attn_norm.weight");
         t.format = Format::Q8_0;
         t.data.resize(2 * 34);
       },
       "tensor 'blk.0.attn_norm.weight' is q8_0, expected f32"},
      {[](auto &tensors) {
         TestTensor &t = tensor(tensors, "blk.3.attn_compressor_ape.weight");
         t.format = Format::F16;
         t.data.resize(t.data.size() / 2);
       },
       "tensor 'blk.3.attn_compressor_ape.weight' is f16, expected f32 or "
       "bf16"},
      {[](auto &tensors) {
         tensor(tensors, "blk.0.attn_kv.weight").format = Format::I32;
       },
       "tensor 'blk.0.attn_kv.weight' is i32, expected a weight format"},
      {[](auto &tensors) {
         TestTensor &t = tensor(tensors, "blk.1.ffn_gate_tid2eid.weight");
         t.format = Format::F32;
       },
       "tensor 'blk.1.ffn_gate_tid2eid.weight' is f32, expected i32"},
      {[](auto &tensors) {
         setExpert(tensor(tensors, "blk.2.ffn_gate_tid2eid.weight"), 17, 1,
                   (17 + 0) % 8);
       },
       "tensor 'blk.2.ffn_gate_tid2eid.weight' row 17 names expert 1 twice, "
       "expected 2 distinct experts"},
      {[](auto &tensors) {
         setExpert(tensor(tensors, "blk.0.ffn_gate_tid2eid.weight"), 5, 0, 8);
       },
       "tensor 'blk.0.ffn_gate_tid2eid.weight' row 5 names expert 8, "
       "expected 0 to 7"},
      {[](auto &tensors) {
         setExpert(tensor(tensors, "blk.0.ffn_gate_tid2eid.weight"), 5, 0, -1);
       },
       "tensor 'blk.0.ffn_gate_tid2eid.weight' row 5 names expert -1, "
       "expected 0 to 7"},
      {[](auto &tensors) {
         tensors.push_back({"blk.4.attn_norm.weight",
                            Format::F32,
                            {64},
                            std::vector<uint8_t>(256)});
       },
       "unexpected tensor 'blk.4.attn_norm.weight': a 4-layer deepseek4 "
       "model has no such tensor"},
  };
  for (const auto &[edit, message] : cases)
    EXPECT_EQ(validate(edit), "test.gguf: " + message);
}

TEST(ValidateTensors, NamesATransposedOutputProjection) {
  // The micro model's attn_output_a is square; the tiny preset's is
  // [384, 256] (4 groups of 2 heads of 192, to 4·64), whose transpose has
  // the same elements and would load silently in llama.cpp.
  Config config = preset("tiny")->config;
  config.nVocab = 64; // small embedding and tid2eid tables
  config.bosToken = 0;
  config.eosToken = 1;
  std::vector<TestTensor> tensors = modelTensors(config);
  TestTensor &t = tensor(tensors, "blk.3.attn_output_a.weight");
  ASSERT_EQ(t.shape, std::vector<int64_t>({384, 256}));
  t.shape = {256, 384};
  InMemoryFile file;
  write(file, modelMetadata(config), tensors);
  ASSERT_TRUE(file.file.ok());
  EXPECT_EQ(validateTensors(config, *file.file).message(),
            "test.gguf: tensor 'blk.3.attn_output_a.weight' has shape [256, "
            "384], expected [384, 256]: it is transposed (ggml order puts the "
            "input dimension first)");
}

} // namespace
} // namespace kf::deepseek_v4
