// Every rule of the GGUF reader, on hand-made files that break it: each must
// be refused with exactly one line naming the file, the byte and what was
// expected. The header is 24 bytes; a UINT32 entry with a one-letter key 17.
#include "GgufTestUtil.h"
#include "kf/runtime/gguf_writer.h"

namespace kf::gguf {
namespace {

using testing::Bytes;
using testing::parse;
using testing::rejection;

constexpr uint32_t kF32 = 0, kQ8_0 = 8, kQ8_K = 15, kFractal64 = 4096;

TEST(GgufReject, WrongMagic) {
  Bytes b;
  b.raw("GGML").u32(3).i64(0).i64(0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 0: expected the magic 'GGUF', found 'GGML'");
  Bytes binary;
  binary.u32(0x00ff0102).u32(3).i64(0).i64(0);
  EXPECT_EQ(rejection(binary.bytes()),
            "t.gguf: byte 0: expected the magic 'GGUF', found "
            "'\\x02\\x01\\xff\\x00'");
}

TEST(GgufReject, UnsupportedVersions) {
  for (uint32_t version : {0u, 1u, 4u}) {
    Bytes b;
    b.raw("GGUF").u32(version).i64(0).i64(0);
    EXPECT_EQ(rejection(b.bytes()), "t.gguf: byte 4: GGUF version " +
                                        std::to_string(version) +
                                        ", expected 2 or 3");
  }
  Bytes swapped;
  swapped.raw("GGUF").u32(0x03000000).i64(0).i64(0);
  EXPECT_EQ(rejection(swapped.bytes()),
            "t.gguf: byte 4: GGUF version 50331648 (byte-swapped: a "
            "big-endian file?), expected 2 or 3");
}

TEST(GgufReject, NegativeCounts) {
  Bytes tensors;
  tensors.header(-1, 0);
  EXPECT_EQ(rejection(tensors.bytes()),
            "t.gguf: byte 8: the tensor count is -1, expected >= 0");
  Bytes kvs;
  kvs.header(0, -2);
  EXPECT_EQ(rejection(kvs.bytes()),
            "t.gguf: byte 16: the metadata key count is -2, expected >= 0");
}

// Counts are bounded by the bytes left before anything is allocated.
TEST(GgufReject, CountsBeyondTheFile) {
  Bytes tensors;
  tensors.header(int64_t{1} << 40, 0).zeros(65);
  EXPECT_EQ(rejection(tensors.bytes()),
            "t.gguf: byte 8: the tensor count 1099511627776 needs at least "
            "33 bytes per tensor, but the file ends at byte 89");
  Bytes kvs;
  kvs.header(0, 5).zeros(69);
  EXPECT_EQ(rejection(kvs.bytes()),
            "t.gguf: byte 16: the metadata key count 5 needs at least 14 "
            "bytes per metadata key, but the file ends at byte 93");
}

TEST(GgufReject, EmptyKey) {
  Bytes b;
  b.header(0, 1).str("").u32(4).u32(0);
  EXPECT_EQ(rejection(b.bytes()), "t.gguf: byte 24: key 0 has an empty name");
}

TEST(GgufReject, DuplicateKey) {
  Bytes b;
  b.header(0, 2).kvU32("a", 1).kvU32("a", 2);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 41: duplicate key 'a', first at byte 24");
}

// Names come from the file: messages escape them to stay on one line.
TEST(GgufReject, NamesInMessagesAreEscaped) {
  Bytes b;
  b.header(0, 2).kvU32("a\n'b", 1).kvU32("a\n'b", 2);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 44: duplicate key 'a\\n\\'b', first at byte 24");
}

TEST(GgufReject, UnknownValueType) {
  Bytes b;
  b.header(0, 1).str("a").u32(13).u32(0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 33: the value type of key 'a' is 13, expected 0 "
            "to 12");
  Bytes element;
  element.header(0, 1).str("a").u32(9).u32(99).u64(0);
  EXPECT_EQ(rejection(element.bytes()),
            "t.gguf: byte 37: the element type of key 'a' is 99, expected 0 "
            "to 12");
}

TEST(GgufReject, NestedArray) {
  Bytes b;
  b.header(0, 1).str("a").u32(9).u32(9).u64(1).u32(4).u64(0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 37: key 'a' is an array of arrays, expected an "
            "array of scalars or strings");
}

TEST(GgufReject, ArrayLongerThanGgmlAllows) {
  Bytes b;
  b.header(0, 1).str("a").u32(9).u32(0).u64((uint64_t{1} << 30) + 1);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 41: key 'a' has 1073741825 elements, expected at "
            "most 1073741824");
}

TEST(GgufReject, StringLongerThanGgmlAllows) {
  Bytes b;
  b.header(0, 1).u64((uint64_t{1} << 30) + 1).zeros(16);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: the name of key 0 is 1073741825 bytes long, "
            "expected at most 1073741824");
}

TEST(GgufReject, BoolOtherThanZeroOrOne) {
  Bytes b;
  b.header(0, 1).str("a").u32(7).u8(2);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 37: the value of key 'a' is 2, expected a bool (0 "
            "or 1)");
  Bytes array;
  array.header(0, 1).str("a").u32(9).u32(7).u64(3).u8(1).u8(0).u8(255);
  EXPECT_EQ(rejection(array.bytes()),
            "t.gguf: byte 51: element 2 of key 'a' is 255, expected a bool (0 "
            "or 1)");
}

TEST(GgufReject, StringArrayBeyondTheFile) {
  Bytes b;
  b.header(0, 1).str("a").u32(9).u32(8).u64(1000).str("x").str("y");
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 49: the element count 1000 of key 'a' needs at "
            "least 8 bytes per string, but the file ends at byte 67");
}

TEST(GgufReject, AlignmentOfTheWrongType) {
  Bytes b;
  b.header(0, 2).kvU32("n", 1).str(kAlignmentKey).u32(10).u64(32);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 41: key 'general.alignment' has type uint64, "
            "expected uint32");
}

TEST(GgufReject, AlignmentNotAPowerOfTwo) {
  for (uint32_t alignment : {0u, 48u}) {
    Bytes b;
    b.header(0, 1).kvU32(kAlignmentKey, alignment);
    EXPECT_EQ(rejection(b.bytes()), "t.gguf: byte 24: general.alignment is " +
                                        std::to_string(alignment) +
                                        ", expected a power of two");
  }
}

// kernelforge.private_types must be an array of "<id>=<mnemonic>" naming
// Kernelforge's private formats exactly.
TEST(GgufReject, MalformedPrivateTypes) {
  auto declaring = [](std::vector<std::string> entries) {
    Bytes b;
    b.header(0, 1).str(kPrivateTypesKey).u32(9).u32(8).u64(entries.size());
    for (const std::string &e : entries)
      b.str(e);
    return rejection(b.bytes());
  };
  const std::string at = "t.gguf: byte 24: kernelforge.private_types";
  EXPECT_EQ(declaring({"fractal64"}),
            at + "[0] is 'fractal64': expected '<type id>=<format>', e.g. "
                 "'4096=fractal64'");
  EXPECT_EQ(declaring({"4097=vq3_64", "4096=vq3_64"}),
            at + "[1] is '4096=vq3_64': Kernelforge's private type 4096 is "
                 "fractal64");
  EXPECT_EQ(declaring({"4200=mine"}),
            at + "[0] is '4200=mine': Kernelforge has no private type 4200");
  EXPECT_EQ(declaring({"8=q8_0"}),
            at + "[0] is '8=q8_0': expected a private type id (>= 4096)");
  EXPECT_EQ(declaring({"4096=fractal64", "4096=fractal64"}),
            at + "[1] is '4096=fractal64': declared twice");
  Bytes scalar;
  scalar.header(0, 1).kvString(kPrivateTypesKey, "4096=fractal64");
  EXPECT_EQ(rejection(scalar.bytes()),
            "t.gguf: byte 24: key 'kernelforge.private_types' has type "
            "string, expected array of string");
}

TEST(GgufReject, PrivateTypeNotDeclared) {
  Bytes b;
  b.header(1, 0).tensor("w", {64}, kFractal64, 0).pad(32).zeros(32);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 45: tensor 'w' has private type 4096=fractal64, "
            "expected it declared in kernelforge.private_types");
}

TEST(GgufReject, UnknownTensorTypes) {
  // 27 is ggml's I64, 99 nothing at all, 5000 an unassigned private id.
  for (uint32_t type : {27u, 99u, 5000u}) {
    Bytes b;
    b.header(1, 0).tensor("w", {4}, type, 0).pad(32).zeros(32);
    EXPECT_EQ(rejection(b.bytes()),
              "t.gguf: byte 45: tensor 'w' has type " + std::to_string(type) +
                  ", which is not in Kernelforge's format table (formats.def)");
  }
}

TEST(GgufReject, ActivationFormat) {
  Bytes b;
  b.header(1, 0).tensor("w", {256}, kQ8_K, 0).pad(32).zeros(320);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: tensor 'w' has format q8_k, an activation "
            "format; expected a weight format");
}

TEST(GgufReject, TensorNames) {
  std::string longName(64, 'n');
  Bytes tooLong;
  tooLong.header(1, 0).tensor(longName, {4}, kF32, 0).pad(32).zeros(32);
  EXPECT_EQ(rejection(tooLong.bytes()),
            "t.gguf: byte 24: tensor name '" + longName +
                "' is 64 bytes long, expected at most 63");
  Bytes empty;
  empty.header(1, 0).tensor("", {4}, kF32, 0).pad(32).zeros(32);
  EXPECT_EQ(rejection(empty.bytes()),
            "t.gguf: byte 24: a tensor has an empty name");
  Bytes twice;
  twice.header(2, 0)
      .tensor("w", {4}, kF32, 0)
      .tensor("w", {4}, kF32, 32)
      .pad(32)
      .zeros(64);
  EXPECT_EQ(rejection(twice.bytes()),
            "t.gguf: byte 57: duplicate tensor name 'w', first at byte 24");
}

TEST(GgufReject, DimensionCounts) {
  for (uint32_t dims : {0u, 5u}) {
    Bytes b;
    b.header(1, 0).str("w").u32(dims);
    for (uint32_t d = 0; d < dims; ++d)
      b.i64(1);
    b.u32(kF32).u64(0).pad(32).zeros(32);
    EXPECT_EQ(rejection(b.bytes()), "t.gguf: byte 33: tensor 'w' has " +
                                        std::to_string(dims) +
                                        " dimensions, expected 1 to 4");
  }
}

TEST(GgufReject, NegativeDimension) {
  Bytes b;
  b.header(1, 0).tensor("w", {4, -1}, kF32, 0).pad(32);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: tensor 'w' of shape [4, -1] has dimension 1 = "
            "-1, expected >= 0");
}

TEST(GgufReject, ElementCountOverflow) {
  Bytes b;
  b.header(1, 0).tensor("w", {int64_t{1} << 32, int64_t{1} << 31}, kF32, 0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: tensor 'w' of shape [4294967296, 2147483648] "
            "has more than 2^63 - 1 elements");
}

TEST(GgufReject, ByteSizeOverflow) {
  Bytes b;
  b.header(1, 0).tensor("w", {int64_t{1} << 62}, kF32, 0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: tensor 'w' of shape [4611686018427387904] in "
            "f32 has more than 2^64 - 1 bytes");
}

TEST(GgufReject, RowNotAWholeNumberOfBlocks) {
  Bytes b;
  b.header(1, 0).tensor("blk.0.attn_q.weight", {48, 2}, kQ8_0, 0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 24: tensor 'blk.0.attn_q.weight' has rows of 48 "
            "elements, expected a multiple of 32 (the block size of q8_0)");
}

// Offsets must be the running sum of padded sizes: a gap, an overlap and a
// tensor out of order are all the same error.
TEST(GgufReject, OffsetsOtherThanTheRunningSum) {
  for (uint64_t offset : {96u, 0u, 16u}) {
    Bytes b;
    b.header(2, 0)
        .tensor("a", {16}, kF32, 0)
        .tensor("blk.0.attn_q.weight", {32, 2}, kQ8_0, offset)
        .pad(32)
        .zeros(64 + 96);
    EXPECT_EQ(rejection(b.bytes()),
              "t.gguf: byte 108: tensor 'blk.0.attn_q.weight' has offset " +
                  std::to_string(offset) + ", expected 64");
  }
  Bytes first;
  first.header(1, 0).tensor("a", {16}, kF32, 32).pad(32).zeros(96);
  EXPECT_EQ(rejection(first.bytes()),
            "t.gguf: byte 49: tensor 'a' has offset 32, expected 0");
}

// Four f16 tensors of 2^62 bytes: the fourth ends at byte 2^64 of the data.
TEST(GgufReject, SizesWhosePaddedSumOverflows) {
  Bytes b;
  b.header(4, 0);
  for (uint64_t i = 0; i < 4; ++i)
    b.tensor(std::string(1, char('a' + i)), {int64_t{1} << 61}, /*f16*/ 1,
             i << 62);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 123: tensor 'd' ends past 2^64 bytes of data");
}

TEST(GgufReject, TensorDataBeyondTheFile) {
  Bytes b;
  b.header(2, 0)
      .tensor("a", {8}, kF32, 0)
      .tensor("b", {8}, kF32, 32)
      .pad(32)
      .zeros(32 + 20);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 128: expected 32 bytes for the data of tensor 'b', "
            "but the file ends at byte 148");
}

// ggml pads the last tensor too; a file cut inside that padding is truncated.
TEST(GgufReject, MissingPaddingAfterTheLastTensor) {
  Bytes b;
  b.header(1, 0).tensor("a", {3}, kF32, 0).pad(32).zeros(12);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 64: expected 32 bytes for the data section (each "
            "tensor padded to 32 bytes), but the file ends at byte 76");
}

TEST(GgufReject, FileEndingBeforeTheDataSectionStarts) {
  Bytes b;
  b.header(1, 0).tensor("e", {0}, kF32, 0);
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 64: expected 0 bytes for the data of tensor 'e', "
            "but the file ends at byte 57");
}

TEST(GgufReject, TruncatedFields) {
  Bytes b;
  b.header(0, 1).str("key").u32(8).u64(10).raw("abc");
  EXPECT_EQ(rejection(b.bytes()),
            "t.gguf: byte 47: expected 10 bytes for the value of key 'key', "
            "but the file ends at byte 50");
  Bytes two;
  two.header(0, 2).kvU32("a", 1).kvU32("bb", 2);
  EXPECT_EQ(rejection(std::span(two.bytes()).first(52)),
            "t.gguf: byte 51: expected 4 bytes for the value type of key "
            "'bb', but the file ends at byte 52");
  EXPECT_EQ(rejection(std::span(b.bytes()).first(2)),
            "t.gguf: byte 0: expected 4 bytes for the magic 'GGUF', but the "
            "file ends at byte 2");
}

// A small file with every value type and tensors of several formats, cut at
// every byte: each prefix is refused, with a message, and nothing is read
// out of bounds (the sanitizer build runs this too).
TEST(GgufReject, TruncationAtEveryByte) {
  Writer w;
  w.addMetadata("u8", uint8_t{1});
  w.addMetadata("i8", int8_t{-1});
  w.addMetadata("u16", uint16_t{2});
  w.addMetadata("i16", int16_t{-2});
  w.addMetadata("u32", uint32_t{3});
  w.addMetadata("i32", int32_t{-3});
  w.addMetadata("f32", 0.5f);
  w.addMetadata("bool", true);
  w.addMetadata("string", "text");
  w.addMetadata("u64", uint64_t{4});
  w.addMetadata("i64", int64_t{-4});
  w.addMetadata("f64", 0.25);
  w.addMetadata("strings", std::vector<std::string>{"a", "", "bc"});
  w.addMetadata("bools", std::vector<bool>{true, false});
  w.addMetadata("floats", std::vector<float>{1, 2, 3});
  w.addTensor("a", Format::F32, {5}, std::vector<uint8_t>(20, 1));
  w.addTensor("b", Format::Q8_0, {32, 2}, std::vector<uint8_t>(68, 2));
  w.addTensor("c", Format::FRACTAL64, {64}, std::vector<uint8_t>(30, 3));
  absl::StatusOr<std::vector<uint8_t>> bytes = w.serialize("t.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_TRUE(parse(*bytes).ok());
  for (size_t n = 0; n < bytes->size(); ++n) {
    // An exact copy, so that the sanitizer sees any read past its end.
    std::vector<uint8_t> prefix(bytes->begin(), bytes->begin() + n);
    absl::StatusOr<File> file = parse(prefix);
    ASSERT_FALSE(file.ok()) << "accepted the first " << n << " bytes";
    std::string message(file.status().message());
    EXPECT_EQ(message.substr(0, 13), "t.gguf: byte ") << message;
    EXPECT_EQ(message.find('\n'), std::string_view::npos) << message;
  }
}

} // namespace
} // namespace kf::gguf
