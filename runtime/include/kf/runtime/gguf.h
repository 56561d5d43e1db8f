// Reading GGUF v3 files (docs/formats/gguf.md):
// typed metadata, the tensor table, and zero-copy views of tensor data over a
// memory-mapped file or a caller's buffer.
//
// Every count, length, dimension, type id, offset and size is checked against
// the file's size and for overflow before use, with ggml's reader's rules and
// a few stricter ones; a file that breaks one is refused with a one-line
// error naming the file, the byte and what was expected.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/format.h"
#include "kf/runtime/gguf_value.h"

namespace kf {
class MappedFile;
}

namespace kf::gguf {

inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
// UINT32, a power of two: the alignment of the data section and its tensors.
inline constexpr std::string_view kAlignmentKey = "general.alignment";
// UINT32, ggml's GGML_QNT_VERSION: files with quantized tensors carry it.
inline constexpr std::string_view kQuantizationVersionKey =
    "general.quantization_version";
inline constexpr uint32_t kQuantizationVersion = 2;
// Array of strings "<id>=<mnemonic>", one per private type (ids from
// kFirstPrivateType up) that the file's tensors use. The writer writes it.
inline constexpr std::string_view kPrivateTypesKey =
    "kernelforge.private_types";

struct KeyValue {
  std::string key;
  Value value;

  bool operator==(const KeyValue &) const = default;
};

struct TensorInfo {
  std::string name;
  Format format;
  // ggml order: shape[0] (ne[0]) is the row length, the innermost dimension;
  // 1 to 4 dimensions as the file stores them. numpy's shape is the reverse.
  std::vector<int64_t> shape;
  uint64_t offset = 0; // from the start of the data section
  uint64_t bytes = 0;  // without the padding that follows the tensor

  int64_t elements() const;
  // elements() / shape[0]: the rows of shape[0] elements; 0 if shape[0] is 0.
  int64_t rows() const;
};

// "[4096, 32000]": a shape as messages and tools print it.
std::string shapeString(std::span<const int64_t> shape);
// A key or tensor name in single quotes, with quotes, backslashes and control
// bytes escaped: names come from files, and messages stay on one line.
std::string quoted(std::string_view name);

class File {
public:
  // Maps `path` read-only and parses it; tensor views point into the mapping.
  static absl::StatusOr<File> open(const std::string &path);
  // Parses `bytes`, which must outlive the File; `name` stands for the file
  // in error messages. open() parses its mapping with this same code.
  static absl::StatusOr<File> parse(std::span<const uint8_t> bytes,
                                    std::string name);

  File(File &&) noexcept;
  File &operator=(File &&) noexcept;
  ~File();

  const std::string &name() const { return name_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // File offset of the data section: tensor offsets are relative to it.
  uint64_t dataOffset() const { return dataOffset_; }
  // The whole file.
  std::span<const uint8_t> bytes() const { return bytes_; }

  // In file order.
  std::span<const KeyValue> metadata() const { return metadata_; }
  const Value *find(std::string_view key) const;
  // The value of `key` as T (see Value::as), or an error naming the file, the
  // key and the type it has.
  template <typename T> absl::StatusOr<T> get(std::string_view key) const;

  // In file order, which is data order.
  std::span<const TensorInfo> tensors() const { return tensors_; }
  const TensorInfo *findTensor(std::string_view name) const;
  // The bytes of a tensor of this file, in place.
  std::span<const uint8_t> data(const TensorInfo &tensor) const {
    return bytes_.subspan(dataOffset_ + tensor.offset, tensor.bytes);
  }
  // Drops the whole pages of `bytes` (a tensor's data(), or part of it) from
  // resident memory once they have been copied elsewhere
  // (MappedFile::release); nothing for parsed bytes.
  void release(std::span<const uint8_t> bytes) const;

  // What a compiled plan was compiled for: 16 hex digits of a 64-bit FNV-1a
  // hash of the file's header (its metadata and tensor table, everything
  // before the tensor data), so that a plan binds only the file it was
  // compiled from, or one of the same metadata and tensors.
  std::string fingerprint() const;

private:
  File() = default;
  friend class Parser;

  std::string name_;
  std::unique_ptr<MappedFile> mapping_; // null when parsing a caller's bytes
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t dataOffset_ = 0;
  std::vector<KeyValue> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> keyIndex_;
  std::map<std::string, size_t, std::less<>> tensorIndex_;
};

template <typename T> absl::StatusOr<T> File::get(std::string_view key) const {
  const Value *value = find(key);
  if (!value)
    return absl::NotFoundError(
        absl::StrCat(name_, ": no key '", toAbsl(key), "'"));
  if (std::optional<T> typed = value->as<T>())
    return *std::move(typed);
  return absl::InvalidArgumentError(absl::StrCat(
      name_, ": key '", toAbsl(key), "' has type ", value->typeDescription(),
      ", expected ", Value::describe<T>()));
}

} // namespace kf::gguf
