#include "kf/deepseek_v4/reference/weights.h"

#include <string>
#include <utility>
#include <vector>

#include "ModelTestUtil.h"
#include "kf/runtime/half.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using testing::InMemoryFile;
using testing::microConfig;
using testing::modelMetadata;
using testing::modelTensors;
using testing::TestTensor;

TestTensor &find(std::vector<TestTensor> &tensors, std::string_view name) {
  for (TestTensor &t : tensors)
    if (t.name == name)
      return t;
  ADD_FAILURE() << "no tensor " << name;
  return tensors.front();
}

// A distinct bf16-exact value per element, so a misplaced element shows.
float elementValue(size_t i) { return static_cast<float>(i % 251) * 0.5f - 60; }

TEST(Weights, FromGgufDecodesEachTensorToItsLayerAndRole) {
  Config config = microConfig();
  std::vector<TestTensor> tensors = modelTensors(config);
  // blk.0 wq_a stored in bf16, blk.2's compressor in f32, each element
  // distinct; every other tensor stays zero.
  TestTensor &qA = find(tensors, "blk.0.attn_q_a.weight");
  qA.format = Format::BF16;
  size_t qAElements = 64 * 32;
  qA.data.resize(2 * qAElements);
  for (size_t i = 0; i < qAElements; ++i) {
    uint16_t bits = fp32ToBf16(elementValue(i));
    std::memcpy(&qA.data[2 * i], &bits, 2);
  }
  TestTensor &kv = find(tensors, "blk.2.attn_compressor_kv.weight");
  for (size_t i = 0; i < kv.data.size() / 4; ++i) {
    float v = elementValue(i) + 1;
    std::memcpy(&kv.data[4 * i], &v, 4);
  }
  InMemoryFile file;
  testing::write(file, modelMetadata(config), tensors);

  absl::StatusOr<Weights> weights = Weights::fromGguf(config, *file.file);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const LayerWeights &l0 = weights->layer(0);
  ASSERT_EQ(l0.attnQA.size(), qAElements);
  for (size_t i = 0; i < qAElements; ++i)
    ASSERT_EQ(l0.attnQA[i], elementValue(i)) << i;
  const LayerWeights &l2 = weights->layer(2);
  ASSERT_EQ(l2.compressorKv.size(), size_t{2 * 64 * 64}); // ratio 4: 2·Dh
  for (size_t i = 0; i < l2.compressorKv.size(); ++i)
    ASSERT_EQ(l2.compressorKv[i], elementValue(i) + 1) << i;

  // Roles a layer lacks are empty: no compressor on window-only layers, the
  // indexer on CSA layers only, tid2eid on hash layers, the bias on learned.
  EXPECT_TRUE(l0.compressorKv.empty());
  EXPECT_TRUE(weights->layer(3).indexerQB.empty());
  EXPECT_EQ(weights->layer(3).compressorApe.size(), size_t{128 * 64});
  EXPECT_EQ(l2.indexerCompressorApe.size(), size_t{4 * 2 * 64});
  EXPECT_TRUE(weights->layer(3).tid2eid.empty());
  EXPECT_TRUE(l2.expProbsB.empty());
  EXPECT_EQ(weights->layer(3).expProbsB.size(), size_t{8});
  // tid2eid keeps its int32 entries: modelTensors writes (token + j) mod E.
  ASSERT_EQ(l2.tid2eid.size(), size_t{96 * 2});
  EXPECT_EQ(l2.tid2eid[2 * 7 + 1], 0); // token 7, slot 1: (7 + 1) mod 8
  EXPECT_EQ(weights->tokenEmbd().size(), size_t{96 * 64});
  EXPECT_EQ(weights->outputHcScale().size(), size_t{1});
}

TEST(Weights, FromGgufRefusesAFileThatDoesNotMatchTheConfig) {
  Config config = microConfig();
  std::vector<TestTensor> tensors = modelTensors(config);
  std::erase_if(tensors, [](const TestTensor &t) {
    return t.name == "blk.1.attn_kv.weight";
  });
  InMemoryFile file;
  testing::write(file, modelMetadata(config), tensors);
  absl::StatusOr<Weights> weights = Weights::fromGguf(config, *file.file);
  ASSERT_FALSE(weights.ok());
  EXPECT_EQ(std::string(weights.status().message()),
            "test.gguf: no tensor 'blk.1.attn_kv.weight' (expected shape "
            "[64, 64])");
}

// Every tensor of `config` as zeros, tid2eid rows 0..k-1.
std::pair<Weights::FloatTensors, Weights::IntTensors>
zeroTensors(const Config &config) {
  Weights::FloatTensors floats;
  Weights::IntTensors integers;
  for (const TensorSpec &spec : tensorSpecs(config)) {
    size_t n = static_cast<size_t>(spec.elements());
    if (spec.kind == TensorKind::Tid2Eid) {
      std::vector<int32_t> table(n);
      for (size_t i = 0; i < n; ++i)
        table[i] = static_cast<int32_t>(i % config.nExpertUsed);
      integers[spec.name] = std::move(table);
    } else {
      floats[spec.name] = std::vector<float>(n, 0.0f);
    }
  }
  return {std::move(floats), std::move(integers)};
}

TEST(Weights, FromFp32TakesTheTensorsAsGiven) {
  Config config = microConfig();
  auto [floats, integers] = zeroTensors(config);
  floats["blk.3.exp_probs_b.bias"] = {1, 2, 3, 4, 5, 6, 7, 8};
  absl::StatusOr<Weights> weights =
      Weights::fromFp32(config, std::move(floats), std::move(integers));
  ASSERT_TRUE(weights.ok()) << weights.status();
  // Moving the weights keeps every span valid.
  Weights moved = *std::move(weights);
  std::span<const float> bias = moved.layer(3).expProbsB;
  EXPECT_EQ(std::vector<float>(bias.begin(), bias.end()),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(moved.layer(1).tid2eid[3], 1);
}

TEST(Weights, FromFp32RefusesMissingMisshapedOrUnknownTensors) {
  Config config = microConfig();
  auto refuse = [&](auto edit, std::string_view message) {
    auto [floats, integers] = zeroTensors(config);
    edit(floats, integers);
    absl::StatusOr<Weights> weights =
        Weights::fromFp32(config, std::move(floats), std::move(integers));
    ASSERT_FALSE(weights.ok());
    EXPECT_EQ(std::string(weights.status().message()), message);
  };
  refuse([](auto &f, auto &) { f.erase("output_norm.weight"); },
         "deepseek_v4 reference: no fp32 tensor 'output_norm.weight'");
  refuse([](auto &f, auto &) { f["blk.0.attn_sinks.weight"].push_back(0); },
         "deepseek_v4 reference: tensor 'blk.0.attn_sinks.weight' has 3 "
         "elements, expected 2 (shape [2])");
  refuse([](auto &f, auto &) { f["blk.9.attn_norm.weight"] = {1}; },
         "deepseek_v4 reference: unexpected fp32 tensor "
         "'blk.9.attn_norm.weight'");
  refuse([](auto &, auto &i) { i["blk.0.ffn_gate_tid2eid.weight"][5] = 8; },
         "deepseek_v4 reference: tensor 'blk.0.ffn_gate_tid2eid.weight' row 2 "
         "names expert 8, expected 0 to 7");
  // The same rule as a file's tables: each row names distinct experts.
  refuse([](auto &, auto &i) { i["blk.1.ffn_gate_tid2eid.weight"][7] = 0; },
         "deepseek_v4 reference: tensor 'blk.1.ffn_gate_tid2eid.weight' row 3 "
         "names expert 0 twice, expected 2 distinct experts");
  refuse(
      [](auto &f, auto &i) {
        i["blk.0.attn_norm.weight"] = {};
        (void)f;
      },
      "deepseek_v4 reference: unexpected int32 tensor "
      "'blk.0.attn_norm.weight'");
}

TEST(Weights, RefusesUnnormalisedRouting) {
  Config config = microConfig();
  config.normalizeWeights = false;
  auto [floats, integers] = zeroTensors(config);
  absl::StatusOr<Weights> weights =
      Weights::fromFp32(config, std::move(floats), std::move(integers));
  ASSERT_FALSE(weights.ok());
  EXPECT_EQ(weights.status().code(), absl::StatusCode::kUnimplemented);
}

} // namespace
} // namespace kf::deepseek_v4::reference
