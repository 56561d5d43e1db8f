// The GGUF reader: one pass over the bytes, every field bounds-checked before
// it is read and every value checked before it is used.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "absl/functional/function_ref.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gguf/rules.h"
#include "kf/runtime/gguf.h"

#include "kf/runtime/mapped_file.h"
#include "kf/runtime/status_macros.h"
#include <cstdio>

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian and is read in place");

namespace kf::gguf {

namespace {

// The least bytes a metadata entry (8-byte key length, a 1-byte key, 4-byte
// type, 1-byte value) and a tensor info (name length, 1-byte name, dimension
// count, one dimension, type, offset) take: the header's counts are checked
// against the file size with these. Nothing is reserved for a count, so
// memory only grows with what is actually read, even in a huge file whose
// counts are corrupt.
constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

// Calls f(std::type_identity<T>()) with the C++ type of scalar type `type`.
template <typename F> auto withScalarType(ValueType type, F &&f) {
  switch (type) {
  case ValueType::Uint8:
    return f(std::type_identity<uint8_t>());
  case ValueType::Int8:
    return f(std::type_identity<int8_t>());
  case ValueType::Uint16:
    return f(std::type_identity<uint16_t>());
  case ValueType::Int16:
    return f(std::type_identity<int16_t>());
  case ValueType::Uint32:
    return f(std::type_identity<uint32_t>());
  case ValueType::Int32:
    return f(std::type_identity<int32_t>());
  case ValueType::Float32:
    return f(std::type_identity<float>());
  case ValueType::Bool:
    return f(std::type_identity<bool>());
  case ValueType::String:
    return f(std::type_identity<std::string>());
  case ValueType::Uint64:
    return f(std::type_identity<uint64_t>());
  case ValueType::Int64:
    return f(std::type_identity<int64_t>());
  case ValueType::Float64:
    return f(std::type_identity<double>());
  case ValueType::Array:
    break;
  }
  std::abort(); // callers pass scalar types only
}

std::string notABool(std::string_view subject, uint8_t byte) {
  return absl::StrCat(toAbsl(subject), " is ", byte,
                      ", expected a bool (0 or 1)");
}

} // namespace

// Fills a File from its bytes. Every error names the byte where the field at
// fault starts.
class Parser {
public:
  explicit Parser(File &file) : file_(file), bytes_(file.bytes_) {}

  absl::Status parse() {
    KF_ASSIGN_OR_RETURN(Header header, readHeader());
    KF_RETURN_IF_ERROR(readMetadata(header.kvCount));
    KF_RETURN_IF_ERROR(readTensorInfos(header.tensorCount));
    return checkData();
  }

private:
  // Describes what is being read; called only to word an error.
  using Subject = absl::FunctionRef<std::string()>;

  struct Header {
    int64_t tensorCount;
    int64_t kvCount;
  };

  absl::Status error(uint64_t at, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_.name_, ": byte ", at, ": ", message));
  }
  absl::Status error(uint64_t at, const absl::Status &rule) const {
    return error(at, rule.message());
  }

  uint64_t remaining() const { return bytes_.size() - pos_; }

  // The next `n` bytes, which the file must hold.
  absl::StatusOr<const uint8_t *> take(uint64_t n, Subject what) {
    if (n > remaining())
      return error(pos_,
                   absl::StrCat("expected ", n, " bytes for ", what(),
                                ", but the file ends at byte ", bytes_.size()));
    const uint8_t *p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  template <typename T> absl::StatusOr<T> read(Subject what) {
    KF_ASSIGN_OR_RETURN(const uint8_t *p, take(sizeof(T), what));
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
  }

  absl::StatusOr<std::string_view> readString(Subject what) {
    uint64_t at = pos_;
    KF_ASSIGN_OR_RETURN(uint64_t length, read<uint64_t>([&] {
                          return absl::StrCat("the length of ", what());
                        }));
    if (length > kMaxStringBytes)
      return error(at, stringTooLong(what(), length));
    KF_ASSIGN_OR_RETURN(const uint8_t *p, take(length, what));
    return std::string_view(reinterpret_cast<const char *>(p), length);
  }

  template <typename T> absl::StatusOr<Value> readScalar(Subject what) {
    if constexpr (std::is_same_v<T, std::string>) {
      KF_ASSIGN_OR_RETURN(std::string_view s, readString(what));
      return Value(std::string(s));
    } else if constexpr (std::is_same_v<T, bool>) {
      uint64_t at = pos_;
      KF_ASSIGN_OR_RETURN(uint8_t byte, read<uint8_t>(what));
      if (byte > 1)
        return error(at, notABool(what(), byte));
      return Value(byte == 1);
    } else {
      KF_ASSIGN_OR_RETURN(T value, read<T>(what));
      return Value(value);
    }
  }

  template <typename T>
  absl::StatusOr<Value> readArray(uint64_t count, Subject what) {
    auto element = [&](uint64_t i) {
      return absl::StrCat("element ", i, " of ", what());
    };
    auto all = [&] {
      return absl::StrCat("the ", count, " elements of ", what());
    };
    std::vector<T> elements;
    if constexpr (std::is_same_v<T, std::string>) {
      // Each string takes at least its 8-byte length.
      if (count > remaining() / 8)
        return error(pos_,
                     absl::StrCat("the element count ", count, " of ", what(),
                                  " needs at least 8 bytes per string, "
                                  "but the file ends at byte ",
                                  bytes_.size()));
      for (uint64_t i = 0; i < count; ++i) {
        KF_ASSIGN_OR_RETURN(std::string_view s,
                            readString([&] { return element(i); }));
        elements.emplace_back(s);
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      uint64_t at = pos_;
      KF_ASSIGN_OR_RETURN(const uint8_t *p, take(count, all));
      elements.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        if (p[i] > 1)
          return error(at + i, notABool(element(i), p[i]));
        elements.push_back(p[i] == 1);
      }
    } else {
      // count <= kMaxArrayElements, so the product cannot overflow.
      KF_ASSIGN_OR_RETURN(const uint8_t *p, take(count * sizeof(T), all));
      elements.resize(count);
      if (count > 0)
        std::memcpy(elements.data(), p, count * sizeof(T));
    }
    return Value(std::move(elements));
  }

  // A value type id, which must name a type of GGUF.
  absl::StatusOr<ValueType> readValueType(Subject what) {
    uint64_t at = pos_;
    KF_ASSIGN_OR_RETURN(uint32_t id, read<uint32_t>(what));
    if (id >= kValueTypeCount)
      return error(at, absl::StrCat(what(), " is ", id, ", expected 0 to ",
                                    kValueTypeCount - 1));
    return static_cast<ValueType>(id);
  }

  absl::StatusOr<Header> readHeader() {
    KF_ASSIGN_OR_RETURN(const uint8_t *magic,
                        take(kMagic.size(), [] { return "the magic 'GGUF'"; }));
    if (std::memcmp(magic, kMagic.data(), kMagic.size()) != 0)
      return error(0, absl::StrCat("expected the magic 'GGUF', found '",
                                   absl::CHexEscape(absl::string_view(
                                       reinterpret_cast<const char *>(magic),
                                       kMagic.size())),
                                   "'"));
    uint64_t at = pos_;
    KF_ASSIGN_OR_RETURN(file_.version_,
                        read<uint32_t>([] { return "the version"; }));
    // ggml reads version 2 as 3 (they differ in nothing it checks). A version
    // whose low half is zero is most likely another one byte-swapped.
    if (file_.version_ != 2 && file_.version_ != kVersion)
      return error(
          at, absl::StrCat("GGUF version ", file_.version_,
                           file_.version_ != 0 && (file_.version_ & 0xffff) == 0
                               ? " (byte-swapped: a big-endian file?)"
                               : "",
                           ", expected 2 or 3"));
    Header header;
    uint64_t tensorsAt = pos_;
    KF_ASSIGN_OR_RETURN(header.tensorCount,
                        read<int64_t>([] { return "the tensor count"; }));
    uint64_t kvsAt = pos_;
    KF_ASSIGN_OR_RETURN(header.kvCount,
                        read<int64_t>([] { return "the metadata key count"; }));
    auto checkCount = [&](uint64_t at, int64_t count, std::string_view what,
                          uint64_t minBytes) {
      if (count < 0)
        return error(at, absl::StrCat("the ", toAbsl(what), " count is ", count,
                                      ", expected >= 0"));
      if (uint64_t(count) > remaining() / minBytes)
        return error(at,
                     absl::StrCat("the ", toAbsl(what), " count ", count,
                                  " needs at least ", minBytes, " bytes per ",
                                  toAbsl(what), ", but the file ends at byte ",
                                  bytes_.size()));
      return absl::OkStatus();
    };
    KF_RETURN_IF_ERROR(checkCount(tensorsAt, header.tensorCount, "tensor",
                                  kMinTensorInfoBytes));
    KF_RETURN_IF_ERROR(
        checkCount(kvsAt, header.kvCount, "metadata key", kMinKeyValueBytes));
    return header;
  }

  absl::Status readMetadata(int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      uint64_t at = pos_;
      KF_ASSIGN_OR_RETURN(std::string_view key, readString([&] {
                            return absl::StrCat("the name of key ", i);
                          }));
      if (key.empty())
        return error(at, absl::StrCat("key ", i, " has an empty name"));
      if (auto first = file_.keyIndex_.find(key);
          first != file_.keyIndex_.end())
        return error(at, absl::StrCat("duplicate key ", quoted(key),
                                      ", first at byte ",
                                      keyStarts_[first->second]));
      auto subject = [&] { return absl::StrCat("key ", quoted(key)); };
      KF_ASSIGN_OR_RETURN(Value value, readValue(subject));
      keyStarts_.push_back(at);
      file_.keyIndex_.emplace(key, file_.metadata_.size());
      file_.metadata_.push_back({std::string(key), std::move(value)});
    }
    return checkReservedKeys();
  }

  // The type and value of a metadata entry.
  absl::StatusOr<Value> readValue(Subject key) {
    auto field = [&](std::string_view what) {
      return [&key, what] { return absl::StrCat(toAbsl(what), " of ", key()); };
    };
    KF_ASSIGN_OR_RETURN(ValueType type, readValueType(field("the value type")));
    if (type != ValueType::Array)
      return withScalarType(type, [&](auto t) {
        return readScalar<typename decltype(t)::type>(field("the value"));
      });
    uint64_t elementAt = pos_;
    KF_ASSIGN_OR_RETURN(ValueType element,
                        readValueType(field("the element type")));
    if (element == ValueType::Array)
      return error(elementAt,
                   absl::StrCat(key(), " is an array of arrays, expected "
                                       "an array of scalars or strings"));
    uint64_t countAt = pos_;
    KF_ASSIGN_OR_RETURN(uint64_t count,
                        read<uint64_t>(field("the element count")));
    if (count > kMaxArrayElements)
      return error(countAt, arrayTooLong(key(), count));
    return withScalarType(element, [&](auto t) {
      return readArray<typename decltype(t)::type>(count, key);
    });
  }

  // general.alignment and kernelforge.private_types, which say how to read
  // the tensors.
  absl::Status checkReservedKeys() {
    if (auto it = file_.keyIndex_.find(kAlignmentKey);
        it != file_.keyIndex_.end()) {
      absl::StatusOr<uint32_t> alignment =
          alignmentFrom(file_.metadata_[it->second].value);
      if (!alignment.ok())
        return error(keyStarts_[it->second], alignment.status());
      file_.alignment_ = *alignment;
    }
    if (auto it = file_.keyIndex_.find(kPrivateTypesKey);
        it != file_.keyIndex_.end()) {
      absl::StatusOr<std::vector<Format>> declared =
          declaredPrivateTypes(file_.metadata_[it->second].value);
      if (!declared.ok())
        return error(keyStarts_[it->second], declared.status());
      declaredPrivate_ = *std::move(declared);
    }
    return absl::OkStatus();
  }

  // A tensor's type id as a format of the table; a private one must be
  // declared in kernelforge.private_types.
  absl::StatusOr<Format> readFormat(const std::string &tensor) {
    uint64_t at = pos_;
    KF_ASSIGN_OR_RETURN(uint32_t id, read<uint32_t>([&] {
                          return absl::StrCat("the type of tensor ",
                                              quoted(tensor));
                        }));
    std::optional<Format> format = formatFromGgmlType(id);
    if (!format)
      return error(at, absl::StrCat("tensor ", quoted(tensor), " has type ", id,
                                    ", which is not in Kernelforge's format "
                                    "table (formats.def)"));
    if (formatInfo(*format).isPrivate() &&
        std::find(declaredPrivate_.begin(), declaredPrivate_.end(), *format) ==
            declaredPrivate_.end())
      return error(at,
                   absl::StrCat("tensor ", quoted(tensor), " has private type ",
                                privateTypeEntry(*format),
                                ", expected it declared in ",
                                toAbsl(kPrivateTypesKey)));
    return *format;
  }

  absl::Status readTensorInfos(int64_t count) {
    // Offsets must be exactly the running sum of the padded sizes, as ggml's
    // reader requires: tensors then neither overlap nor leave gaps.
    uint64_t expectedOffset = 0;
    for (int64_t i = 0; i < count; ++i) {
      uint64_t at = pos_;
      TensorInfo t;
      KF_ASSIGN_OR_RETURN(std::string_view name, readString([&] {
                            return absl::StrCat("the name of tensor ", i);
                          }));
      if (absl::Status s = checkTensorName(name); !s.ok())
        return error(at, s);
      if (auto first = file_.tensorIndex_.find(name);
          first != file_.tensorIndex_.end())
        return error(at, absl::StrCat("duplicate tensor name ", quoted(name),
                                      ", first at byte ",
                                      tensorStarts_[first->second]));
      t.name = std::string(name);
      auto field = [&](std::string_view what) {
        return [&t, what] {
          return absl::StrCat(toAbsl(what), " of tensor ", quoted(t.name));
        };
      };
      uint64_t dimsAt = pos_;
      KF_ASSIGN_OR_RETURN(uint32_t dims,
                          read<uint32_t>(field("the dimension count")));
      if (absl::Status s = checkDimCount(t.name, dims); !s.ok())
        return error(dimsAt, s);
      for (uint32_t d = 0; d < dims; ++d) {
        KF_ASSIGN_OR_RETURN(int64_t n, read<int64_t>([&] {
                              return absl::StrCat("dimension ", d,
                                                  " of tensor ",
                                                  quoted(t.name));
                            }));
        t.shape.push_back(n);
      }
      KF_ASSIGN_OR_RETURN(t.format, readFormat(t.name));
      absl::StatusOr<uint64_t> bytes = tensorBytes(t.name, t.format, t.shape);
      if (!bytes.ok())
        return error(at, bytes.status());
      t.bytes = *bytes;
      uint64_t offsetAt = pos_;
      KF_ASSIGN_OR_RETURN(t.offset, read<uint64_t>(field("the offset")));
      if (t.offset != expectedOffset)
        return error(offsetAt,
                     absl::StrCat("tensor ", quoted(t.name), " has offset ",
                                  t.offset, ", expected ", expectedOffset));
      std::optional<uint64_t> size = padded(t.bytes, file_.alignment_);
      if (!size ||
          __builtin_add_overflow(expectedOffset, *size, &expectedOffset))
        return error(at, absl::StrCat("tensor ", quoted(t.name),
                                      " ends past 2^64 bytes of data"));
      tensorStarts_.push_back(at);
      file_.tensorIndex_.emplace(t.name, file_.tensors_.size());
      file_.tensors_.push_back(std::move(t));
    }
    dataBytes_ = expectedOffset;
    return absl::OkStatus();
  }

  // The data section starts at the next multiple of the alignment, except in
  // a file without tensors, which ends with its metadata (as gguf-py writes
  // vocab files). It holds every tensor and the padding after each.
  absl::Status checkData() {
    bool hasTensors = !file_.tensors_.empty();
    file_.dataOffset_ = hasTensors ? *padded(pos_, file_.alignment_) : pos_;
    auto beyondFile = [&](uint64_t start, uint64_t bytes, Subject what) {
      uint64_t end;
      if (!__builtin_add_overflow(start, bytes, &end) && end <= bytes_.size())
        return absl::OkStatus();
      return error(start,
                   absl::StrCat("expected ", bytes, " bytes for ", what(),
                                ", but the file ends at byte ", bytes_.size()));
    };
    // In order, stopping at the first that does not fit: each start is then
    // at most the end of the file plus padding, so no sum overflows.
    for (const TensorInfo &t : file_.tensors_)
      KF_RETURN_IF_ERROR(beyondFile(file_.dataOffset_ + t.offset, t.bytes, [&] {
        return absl::StrCat("the data of tensor ", quoted(t.name));
      }));
    return beyondFile(file_.dataOffset_, dataBytes_, [&] {
      return absl::StrCat("the data section (each tensor padded to ",
                          file_.alignment_, " bytes)");
    });
  }

  File &file_;
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  // Where each metadata entry and tensor info starts, for errors that point
  // back at them.
  std::vector<uint64_t> keyStarts_;
  std::vector<uint64_t> tensorStarts_;
  std::vector<Format> declaredPrivate_;
  uint64_t dataBytes_ = 0; // the data section, tensors and padding
};

absl::StatusOr<File> File::parse(std::span<const uint8_t> bytes,
                                 std::string name) {
  File file;
  file.name_ = std::move(name);
  file.bytes_ = bytes;
  KF_RETURN_IF_ERROR(Parser(file).parse());
  return file;
}

absl::StatusOr<File> File::open(const std::string &path) {
  KF_ASSIGN_OR_RETURN(MappedFile mapping, MappedFile::open(path));
  auto owned = std::make_unique<MappedFile>(std::move(mapping));
  KF_ASSIGN_OR_RETURN(File file, parse(owned->bytes(), path));
  file.mapping_ = std::move(owned);
  return file;
}

File::File(File &&) noexcept = default;
File &File::operator=(File &&) noexcept = default;
File::~File() = default;

const Value *File::find(std::string_view key) const {
  auto it = keyIndex_.find(key);
  return it == keyIndex_.end() ? nullptr : &metadata_[it->second].value;
}

const TensorInfo *File::findTensor(std::string_view name) const {
  auto it = tensorIndex_.find(name);
  return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

std::string File::fingerprint() const {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a's offset basis
  for (uint8_t byte : bytes_.first(dataOffset_)) {
    hash ^= byte;
    hash *= 0x100000001b3ull; // FNV-1a's prime
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  return hex;
}

void File::release(std::span<const uint8_t> bytes) const {
  if (mapping_)
    mapping_->release(bytes);
}

int64_t TensorInfo::elements() const {
  // The reader checked that the product fits unless a dimension is zero.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t TensorInfo::rows() const {
  return shape[0] == 0 ? 0 : elements() / shape[0];
}

} // namespace kf::gguf
