// Reading GGUF files: the two vocab-only files of llama.cpp (values checked
// against an independent parse of the files), typed metadata access, and the
// details of the layout a reader must honour.
#include <fstream>
#include <iterator>

#include "GgufTestUtil.h"
#include "kf/runtime/gguf_writer.h"

namespace kf::gguf {
namespace {

using testing::Bytes;
using testing::dataPath;
using testing::parse;

struct VocabFile {
  const char *file;
  uint64_t bytes;
  size_t kvs;
  const char *pre;
  size_t tokens;
  size_t merges;
  uint32_t bos, eos;
};

class Vocab : public ::testing::TestWithParam<VocabFile> {};

TEST_P(Vocab, Parses) {
  const VocabFile &v = GetParam();
  absl::StatusOr<File> file = File::open(dataPath(v.file));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->bytes().size(), v.bytes);
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), kDefaultAlignment);
  EXPECT_EQ(file->metadata().size(), v.kvs);
  EXPECT_TRUE(file->tensors().empty());
  // No tensors: the file ends with its metadata, unpadded.
  EXPECT_EQ(file->dataOffset(), v.bytes);

  EXPECT_EQ(*file->get<std::string_view>("general.architecture"), "llama");
  EXPECT_EQ(*file->get<std::string_view>("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*file->get<std::string_view>("tokenizer.ggml.pre"), v.pre);
  auto tokens =
      file->get<std::span<const std::string>>("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->size(), v.tokens);
  EXPECT_EQ((*tokens)[0], "!");
  EXPECT_EQ(tokens->back(), "[PAD" + std::to_string(v.tokens - 1) + "]");
  auto types = file->get<std::span<const int32_t>>("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->size(), v.tokens);
  EXPECT_EQ(types->front(), 1);
  auto merges =
      file->get<std::span<const std::string>>("tokenizer.ggml.merges");
  ASSERT_TRUE(merges.ok()) << merges.status();
  EXPECT_EQ(merges->size(), v.merges);
  EXPECT_EQ((*merges)[1], "\xC4\xA0 t"); // "Ġ t"
  EXPECT_EQ(*file->get<uint32_t>("tokenizer.ggml.bos_token_id"), v.bos);
  EXPECT_EQ(*file->get<uint32_t>("tokenizer.ggml.eos_token_id"), v.eos);
  EXPECT_EQ(*file->get<bool>("tokenizer.ggml.add_bos_token"), true);
  EXPECT_EQ(*file->get<bool>("tokenizer.ggml.add_eos_token"), false);
  EXPECT_EQ(*file->get<float>("llama.attention.layer_norm_rms_epsilon"), 1e-6f);
  EXPECT_EQ(*file->get<uint32_t>("llama.vocab_size"), v.tokens);
}

TEST_P(Vocab, WritesBackByteIdentical) {
  std::string path = dataPath(GetParam().file);
  absl::StatusOr<File> file = File::open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<std::vector<uint8_t>> bytes =
      Writer::copyOf(*file).serialize("copy.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> original((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  ASSERT_EQ(original.size(), GetParam().bytes);
  EXPECT_TRUE(*bytes == original);
}

INSTANTIATE_TEST_SUITE_P(
    DeepSeek, Vocab,
    ::testing::Values(VocabFile{"ggml-vocab-deepseek-llm.gguf", 3970167, 23,
                                "deepseek-llm", 102400, 99757, 100000, 100001},
                      VocabFile{"ggml-vocab-deepseek-coder.gguf", 1156067, 25,
                                "deepseek-coder", 32256, 31757, 32013, 32014}),
    [](const auto &info) { return std::string(info.param.pre).substr(9); });

TEST(GgufMetadata, TypedAccessNamesTheFileKeyAndTypes) {
  Bytes b;
  b.header(0, 2).kvU32("n", 7).kvString("s", "text");
  absl::StatusOr<File> file = parse(b.bytes());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(*file->get<uint32_t>("n"), 7u);
  EXPECT_EQ(*file->get<std::string_view>("s"), "text");
  EXPECT_EQ(file->find("absent"), nullptr);
  EXPECT_EQ(file->get<uint32_t>("absent").status().message(),
            "t.gguf: no key 'absent'");
  EXPECT_EQ(file->get<int32_t>("n").status().message(),
            "t.gguf: key 'n' has type uint32, expected int32");
  EXPECT_EQ(file->get<std::span<const std::string>>("s").status().message(),
            "t.gguf: key 's' has type string, expected array of string");
}

TEST(GgufMetadata, VersionTwoReadsAsThree) {
  Bytes b;
  b.raw("GGUF").u32(2).i64(0).i64(1).kvU32("n", 1);
  absl::StatusOr<File> file = parse(b.bytes());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->version(), 2u);
}

// ggml's own layout, by hand: tensor infos padded to the alignment, tensors
// at the running sum of padded sizes, each padded, bytes after the data
// section ignored.
TEST(GgufTensors, ViewsPointAtTheirBytes) {
  Bytes b;
  b.header(2, 1).kvU32("general.alignment", 16);
  b.tensor("a", {3}, /*f32*/ 0, 0).tensor("b", {2, 2}, /*f16*/ 1, 16);
  b.pad(16);
  size_t data = b.size();
  b.put<float>(1).put<float>(2).put<float>(3).zeros(4);
  b.put<uint16_t>(0x3c00)
      .put<uint16_t>(0x4000)
      .put<uint16_t>(0x4200)
      .put<uint16_t>(0x4400)
      .zeros(8);
  b.raw("trailing bytes");
  absl::StatusOr<File> file = parse(b.bytes());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->alignment(), 16u);
  EXPECT_EQ(file->dataOffset(), data);
  ASSERT_EQ(file->tensors().size(), 2u);
  const TensorInfo &a = file->tensors()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.format, Format::F32);
  EXPECT_EQ(a.shape, std::vector<int64_t>({3}));
  EXPECT_EQ(a.bytes, 12u);
  EXPECT_EQ(a.elements(), 3);
  EXPECT_EQ(a.rows(), 1);
  std::span<const uint8_t> view = file->data(a);
  EXPECT_EQ(view.data(), b.bytes().data() + data);
  EXPECT_EQ(view.size(), 12u);
  const TensorInfo *t = file->findTensor("b");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->offset, 16u);
  EXPECT_EQ(t->shape, std::vector<int64_t>({2, 2}));
  EXPECT_EQ(t->rows(), 2);
  EXPECT_EQ(file->data(*t).data(), b.bytes().data() + data + 16);
  EXPECT_EQ(file->findTensor("c"), nullptr);
}

TEST(GgufTensors, ZeroDimensionsAreEmptyTensors) {
  Bytes b;
  b.header(1, 0).tensor("e", {32, 0, int64_t{1} << 62}, /*q8_0*/ 8, 0).pad(32);
  absl::StatusOr<File> file = parse(b.bytes());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->tensors()[0].bytes, 0u);
  EXPECT_EQ(file->tensors()[0].elements(), 0);
  EXPECT_EQ(file->tensors()[0].rows(), 0);
  EXPECT_TRUE(file->data(file->tensors()[0]).empty());
}

TEST(GgufTensors, DeclaredPrivateTypeIsAccepted) {
  Bytes b;
  b.header(1, 1)
      .str(kPrivateTypesKey)
      .u32(9)
      .u32(8)
      .u64(1)
      .str("4096=fractal64")
      .tensor("w", {64, 2}, 4096, 0)
      .pad(32)
      .zeros(64);
  absl::StatusOr<File> file = parse(b.bytes());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->tensors()[0].format, Format::FRACTAL64);
  EXPECT_EQ(file->tensors()[0].bytes, 60u);
}

TEST(GgufFile, OpenNamesTheFileWhenItCannot) {
  absl::StatusOr<File> file = File::open("/nonexistent/model.gguf");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(file.status().message(),
            "/nonexistent/model.gguf: cannot open: No such file or directory");
  file = File::open(KF_TEST_DATA_DIR);
  EXPECT_EQ(file.status().message(),
            std::string(KF_TEST_DATA_DIR) + ": not a regular file");
}

} // namespace
} // namespace kf::gguf
