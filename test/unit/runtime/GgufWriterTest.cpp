// Writing GGUF files: ggml's layout byte for byte, round trips through the
// reader, the private-types key, the three kinds of tensor data, the checks
// the writer shares with the reader, and atomic replacement of the target.
#include "kf/runtime/gguf_writer.h"

#include <fstream>
#include <iterator>
#include <numeric>
#include <random>

#include "GgufTestUtil.h"
#include "TempDir.h"
#include "gmock/gmock.h"

namespace kf::gguf {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using testing::parse;

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t &b : v)
    b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The same file as a Bytes builder lays it out by hand.
TEST(GgufWriter, WritesGgmlLayout) {
  std::vector<uint8_t> a = randomBytes(12, 1), b = randomBytes(68, 2);
  Writer w;
  w.addMetadata(std::string(kAlignmentKey), uint32_t{16});
  w.addMetadata("name", "x");
  w.addTensor("a", Format::F32, {3}, std::span<const uint8_t>(a));
  w.addTensor("b", Format::Q8_0, {32, 2}, b);
  absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();

  Bytes expected;
  expected.header(2, 2).kvU32(kAlignmentKey, 16).kvString("name", "x");
  expected.tensor("a", {3}, 0, 0).tensor("b", {32, 2}, 8, 16).pad(16);
  expected.raw({reinterpret_cast<const char *>(a.data()), a.size()}).pad(16);
  expected.raw({reinterpret_cast<const char *>(b.data()), b.size()}).pad(16);
  EXPECT_TRUE(*bytes == expected.bytes());
}

TEST(GgufWriter, NoTensorsMeansNoPadding) {
  Writer w;
  w.addMetadata("a", uint8_t{7});
  absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Bytes expected;
  expected.header(0, 1).str("a").u32(0).u8(7);
  EXPECT_TRUE(*bytes == expected.bytes());
}

// Every value type, scalar and array, and tensors of several formats in 1 to
// 4 dimensions with a 64-byte alignment, written to disk and read back.
TEST(GgufWriter, RoundTrip) {
  std::vector<KeyValue> metadata = {
      {std::string(kAlignmentKey), uint32_t{64}},
      {"u8", uint8_t{250}},
      {"i8", int8_t{-100}},
      {"u16", uint16_t{65000}},
      {"i16", int16_t{-30000}},
      {"u32", uint32_t{4000000000}},
      {"i32", int32_t{-2000000000}},
      {"f32", 1.5f},
      {"bool", false},
      {"string", "naïve \n text"},
      {"u64", uint64_t{1} << 63},
      {"i64", int64_t{-1} << 62},
      {"f64", -2.25},
      {"u8s", std::vector<uint8_t>{1, 2, 255}},
      {"i8s", std::vector<int8_t>{-1, 2}},
      {"u16s", std::vector<uint16_t>{1, 65535}},
      {"i16s", std::vector<int16_t>{-1}},
      {"u32s", std::vector<uint32_t>{}},
      {"i32s", std::vector<int32_t>{1, -2, 3}},
      {"f32s", std::vector<float>{0.5f, -0.25f}},
      {"bools", std::vector<bool>{true, false, true}},
      {"strings", std::vector<std::string>{"", "b", std::string(300, 'c')}},
      {"u64s", std::vector<uint64_t>{uint64_t{1} << 40}},
      {"i64s", std::vector<int64_t>{-5, 5}},
      {"f64s", std::vector<double>{1e300}},
  };
  struct T {
    std::string name;
    Format format;
    std::vector<int64_t> shape;
  };
  std::vector<T> tensors = {
      {"f32", Format::F32, {7}},
      {"f16", Format::F16, {3, 5}},
      {"bf16", Format::BF16, {2, 3, 4}},
      {"q8_0", Format::Q8_0, {64, 3, 2, 2}},
      {"q4_0", Format::Q4_0, {32, 1}},
      {"mxfp4", Format::MXFP4, {96, 2, 1}},
      {"fractal", Format::FRACTAL64, {128, 3}},
      {"empty", Format::Q4_K, {256, 0}},
  };
  Writer w;
  for (const KeyValue &kv : metadata)
    w.addMetadata(kv.key, kv.value);
  std::vector<std::vector<uint8_t>> data;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const T &t = tensors[i];
    int64_t elements = std::accumulate(t.shape.begin(), t.shape.end(),
                                       int64_t{1}, std::multiplies<>());
    data.push_back(randomBytes(*rowBytes(t.format, elements), i));
    w.addTensor(t.name, t.format, t.shape, data.back());
  }
  kf::testing::TempDir dir;
  std::string path = dir.file("model.gguf");
  absl::Status written = w.write(path);
  ASSERT_TRUE(written.ok()) << written;

  absl::StatusOr<File> file = File::open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->version(), kVersion);
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(file->dataOffset() % 64, 0u);
  // The writer added the private-types key for the fractal64 tensor.
  metadata.push_back({std::string(kPrivateTypesKey),
                      std::vector<std::string>{"4096=fractal64"}});
  EXPECT_TRUE(std::ranges::equal(file->metadata(), metadata));
  ASSERT_EQ(file->tensors().size(), tensors.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorInfo &t = file->tensors()[i];
    EXPECT_EQ(t.name, tensors[i].name);
    EXPECT_EQ(t.format, tensors[i].format) << t.name;
    EXPECT_EQ(t.shape, tensors[i].shape) << t.name;
    EXPECT_EQ(t.offset, offset) << t.name;
    EXPECT_TRUE(std::ranges::equal(file->data(t), data[i])) << t.name;
    offset += (t.bytes + 63) / 64 * 64;
  }
  EXPECT_EQ(file->bytes().size(), file->dataOffset() + offset);
}

TEST(GgufWriter, OwnsThePrivateTypesKey) {
  auto privateTypes = [](const Writer &w) -> std::optional<Value> {
    absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<File> file = parse(*bytes);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok() || !file->find(kPrivateTypesKey))
      return std::nullopt;
    // In the caller's place when it gave one.
    EXPECT_EQ(file->metadata()[0].key, kPrivateTypesKey);
    return *file->find(kPrivateTypesKey);
  };
  Writer stale;
  stale.addMetadata(std::string(kPrivateTypesKey),
                    std::vector<std::string>{"4096=fractal64", "9=x"});
  stale.addMetadata("other", uint8_t{1});
  stale.addTensor("v", Format::VQ3_64, {64}, std::vector<uint8_t>(24));
  stale.addTensor("f", Format::FRACTAL64, {64}, std::vector<uint8_t>(30));
  stale.addTensor("g", Format::FRACTAL64, {64}, std::vector<uint8_t>(30));
  EXPECT_EQ(privateTypes(stale),
            Value(std::vector<std::string>{"4096=fractal64", "4097=vq3_64"}));

  Writer unused;
  unused.addMetadata(std::string(kPrivateTypesKey),
                     std::vector<std::string>{"4096=fractal64"});
  unused.addTensor("q", Format::Q8_0, {32}, std::vector<uint8_t>(34));
  EXPECT_EQ(privateTypes(unused), std::nullopt);
}

TEST(GgufWriter, ViewsOwnedBuffersAndProducersWriteTheSameBytes) {
  std::vector<uint8_t> data = randomBytes(72, 3);
  std::vector<std::vector<uint8_t>> files;
  for (int kind = 0; kind < 3; ++kind) {
    Writer w;
    int calls = 0;
    Writer::Data source = std::span<const uint8_t>(data);
    if (kind == 1)
      source = data;
    if (kind == 2)
      source = [&](std::span<uint8_t> dst) {
        ++calls;
        EXPECT_EQ(dst.size(), data.size());
        std::copy(data.begin(), data.end(), dst.begin());
        return absl::OkStatus();
      };
    w.addTensor("t", Format::Q4_0, {32, 4}, std::move(source));
    absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    files.push_back(*bytes);
    EXPECT_EQ(calls, kind == 2 ? 1 : 0);
  }
  EXPECT_EQ(files[0], files[1]);
  EXPECT_EQ(files[0], files[2]);
}

// The writer refuses what the reader would, naming the file.
TEST(GgufWriter, RefusesWhatTheReaderRefuses) {
  auto refusal = [](auto build) {
    Writer w;
    build(w);
    absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("out.gguf");
    EXPECT_FALSE(bytes.ok());
    return bytes.ok() ? "" : std::string(bytes.status().message());
  };
  EXPECT_EQ(refusal([](Writer &w) { w.addMetadata("", 1); }),
            "out.gguf: key 0 has an empty name");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addMetadata("a", 1);
              w.addMetadata("a", 2);
            }),
            "out.gguf: duplicate key 'a'");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addMetadata(std::string(kAlignmentKey), uint32_t{24});
            }),
            "out.gguf: general.alignment is 24, expected a power of two");
  EXPECT_EQ(
      refusal([](Writer &w) { w.addMetadata(std::string(kAlignmentKey), 32); }),
      "out.gguf: key 'general.alignment' has type int32, expected "
      "uint32");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor(std::string(64, 'n'), Format::F32, {1},
                          std::vector<uint8_t>(4));
            }),
            "out.gguf: tensor name '" + std::string(64, 'n') +
                "' is 64 bytes long, expected at most 63");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor("t", Format::F32, {1}, std::vector<uint8_t>(4));
              w.addTensor("t", Format::F32, {1}, std::vector<uint8_t>(4));
            }),
            "out.gguf: duplicate tensor name 't'");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor("t", Format::Q8_0, {16}, std::vector<uint8_t>(17));
            }),
            "out.gguf: tensor 't' has rows of 16 elements, expected a "
            "multiple of 32 (the block size of q8_0)");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor("t", Format::Q8_1, {32}, std::vector<uint8_t>(36));
            }),
            "out.gguf: tensor 't' has format q8_1, an activation format; "
            "expected a weight format");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor("t", Format::F32, {1, 2, 3, 4, 5},
                          std::vector<uint8_t>(480));
            }),
            "out.gguf: tensor 't' has 5 dimensions, expected 1 to 4");
  EXPECT_EQ(refusal([](Writer &w) {
              w.addTensor("t", Format::Q8_0, {32, 2}, std::vector<uint8_t>(34));
            }),
            "out.gguf: tensor 't' has 34 bytes of data, expected 68");
}

// On any error the target keeps its old contents and no temporary remains.
TEST(GgufWriter, FailedWritesLeaveTheTargetUntouched) {
  kf::testing::TempDir dir;
  std::string path = dir.file("model.gguf");
  std::ofstream(path) << "old";
  Writer invalid;
  invalid.addTensor("t", Format::F32, {2}, std::vector<uint8_t>(4));
  EXPECT_EQ(invalid.write(path).message(),
            path + ": tensor 't' has 4 bytes of data, expected 8");
  Writer failing;
  failing.addTensor("ok", Format::F32, {1}, std::vector<uint8_t>(4));
  failing.addTensor("t", Format::F32, {2}, [](std::span<uint8_t>) {
    return absl::InternalError("decoder broke");
  });
  absl::Status status = failing.write(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), path + ": tensor 't': decoder broke");
  EXPECT_EQ(fileBytes(path), std::vector<uint8_t>({'o', 'l', 'd'}));
  EXPECT_THAT(dir.files(), ElementsAre("model.gguf"));

  Writer good;
  good.addMetadata("a", 1);
  ASSERT_TRUE(good.write(path).ok());
  EXPECT_EQ(fileBytes(path), *good.serialize(path));
  EXPECT_THAT(dir.files(), ElementsAre("model.gguf"));
}

} // namespace
} // namespace kf::gguf

namespace kf::gguf {
namespace {

// A file's fingerprint is its header's: the same for the same metadata and
// tensors whatever the tensor data, another for any other header.
TEST(GgufFingerprint, IsTheHeaders) {
  auto fingerprint = [](std::string name, std::vector<uint8_t> data,
                        Format format) {
    Writer w;
    w.addMetadata("name", name);
    w.addTensor("a", format, {32}, data);
    absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
    EXPECT_TRUE(bytes.ok());
    absl::StatusOr<File> file = testing::parse(*bytes);
    EXPECT_TRUE(file.ok());
    return file.ok() ? file->fingerprint() : std::string();
  };
  const std::string base = fingerprint("x", randomBytes(128, 1), Format::F32);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(base.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(fingerprint("x", randomBytes(128, 2), Format::F32), base);
  EXPECT_NE(fingerprint("y", randomBytes(128, 1), Format::F32), base);
  EXPECT_NE(fingerprint("x", randomBytes(34, 1), Format::Q8_0), base);
}

} // namespace
} // namespace kf::gguf
