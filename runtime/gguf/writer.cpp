#include "kf/runtime/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <set>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "gguf/rules.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/atomic_file.h"
#include "kf/runtime/status_macros.h"

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian and is written from memory as it is");

namespace kf::gguf {

struct Writer::Layout {
  std::vector<uint8_t> head;         // header, metadata, tensor infos, padding
  std::vector<uint64_t> tensorBytes; // without padding, in file order
  uint32_t alignment = kDefaultAlignment;
};

namespace {

// Appends little-endian fields.
class Encoder {
public:
  explicit Encoder(std::vector<uint8_t> &out) : out_(out) {}

  template <typename T> void put(T value) {
    static_assert(std::is_arithmetic_v<T>);
    append(&value, sizeof value);
  }
  void put(bool value) { put<uint8_t>(value); }
  void put(std::string_view s) {
    put<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  void put(const std::string &s) { put(std::string_view(s)); }

  void put(const Value &value) {
    put<uint32_t>(static_cast<uint32_t>(value.type()));
    if (value.isArray()) {
      put<uint32_t>(static_cast<uint32_t>(value.elementType()));
      put<uint64_t>(value.size());
    }
    std::visit(
        [&](const auto &v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (!detail::kIsVector<T>) {
            put(v);
          } else if constexpr (std::is_arithmetic_v<typename T::value_type> &&
                               !std::is_same_v<T, std::vector<bool>>) {
            append(v.data(), v.size() * sizeof(typename T::value_type));
          } else {
            for (const auto &element : v) // bool or std::string
              put(element);
          }
        },
        value.storage());
  }

private:
  void append(const void *data, size_t n) {
    const auto *p = static_cast<const uint8_t *>(data);
    out_.insert(out_.end(), p, p + n);
  }

  std::vector<uint8_t> &out_;
};

absl::Status invalid(std::string_view file, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(toAbsl(file), ": ", message));
}

// The limits the reader enforces on string lengths and array sizes.
std::optional<std::string> valueProblem(const std::string &key,
                                        const Value &value) {
  auto subject = [&] { return absl::StrCat("key ", quoted(key)); };
  if (const auto *s = value.getIf<std::string>();
      s && s->size() > kMaxStringBytes)
    return stringTooLong(subject(), s->size());
  if (value.isArray() && value.size() > kMaxArrayElements)
    return arrayTooLong(subject(), value.size());
  if (const auto *strings = value.getIf<std::vector<std::string>>())
    for (size_t i = 0; i < strings->size(); ++i)
      if ((*strings)[i].size() > kMaxStringBytes)
        return stringTooLong(absl::StrCat("element ", i, " of ", subject()),
                             (*strings)[i].size());
  return std::nullopt;
}

} // namespace

Writer Writer::copyOf(const File &file) {
  Writer writer;
  for (const KeyValue &kv : file.metadata())
    writer.addMetadata(kv.key, kv.value);
  for (const TensorInfo &t : file.tensors())
    writer.addTensor(t.name, t.format, t.shape, file.data(t));
  return writer;
}

void Writer::addMetadata(std::string key, Value value) {
  metadata_.push_back({std::move(key), std::move(value)});
}

void Writer::addTensor(std::string name, Format format,
                       std::vector<int64_t> shape, Data data) {
  tensors_.push_back(
      {std::move(name), format, std::move(shape), std::move(data)});
}

absl::StatusOr<uint32_t> Writer::checkMetadata(std::string_view name) const {
  uint32_t alignment = kDefaultAlignment;
  std::set<std::string_view> keys;
  for (size_t i = 0; i < metadata_.size(); ++i) {
    const KeyValue &kv = metadata_[i];
    if (kv.key.empty())
      return invalid(name, absl::StrCat("key ", i, " has an empty name"));
    if (kv.key.size() > kMaxStringBytes)
      return invalid(name, stringTooLong(absl::StrCat("the name of key ", i),
                                         kv.key.size()));
    if (!keys.insert(kv.key).second)
      return invalid(name, absl::StrCat("duplicate key ", quoted(kv.key)));
    if (std::optional<std::string> problem = valueProblem(kv.key, kv.value))
      return invalid(name, *problem);
    if (kv.key == kAlignmentKey) {
      absl::StatusOr<uint32_t> value = alignmentFrom(kv.value);
      if (!value.ok())
        return invalid(name, value.status().message());
      alignment = *value;
    }
  }
  return alignment;
}

absl::StatusOr<std::vector<uint64_t>>
Writer::checkTensors(std::string_view name) const {
  std::vector<uint64_t> sizes;
  std::set<std::string_view> names;
  for (const Tensor &t : tensors_) {
    if (absl::Status s = checkTensorName(t.name); !s.ok())
      return invalid(name, s.message());
    if (!names.insert(t.name).second)
      return invalid(name,
                     absl::StrCat("duplicate tensor name ", quoted(t.name)));
    absl::StatusOr<uint64_t> bytes = tensorBytes(t.name, t.format, t.shape);
    if (!bytes.ok())
      return invalid(name, bytes.status().message());
    size_t given = std::visit(
        [&](const auto &d) -> size_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(d)>, Producer>)
            return *bytes; // fills what it is given
          else
            return d.size();
        },
        t.data);
    if (given != *bytes)
      return invalid(name,
                     absl::StrCat("tensor ", quoted(t.name), " has ", given,
                                  " bytes of data, expected ", *bytes));
    sizes.push_back(*bytes);
  }
  return sizes;
}

std::vector<std::string> Writer::privateTypeEntries() const {
  std::vector<uint32_t> ids;
  for (const Tensor &t : tensors_)
    if (const FormatInfo &info = formatInfo(t.format); info.isPrivate())
      ids.push_back(info.ggmlType);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::string> entries;
  for (uint32_t id : ids)
    entries.push_back(privateTypeEntry(*formatFromGgmlType(id)));
  return entries;
}

std::vector<const KeyValue *>
Writer::metadataToWrite(const KeyValue &privateTypes) const {
  bool needed = privateTypes.value.size() > 0;
  bool added = false;
  std::vector<const KeyValue *> written;
  for (const KeyValue &kv : metadata_) {
    if (kv.key != kPrivateTypesKey) {
      written.push_back(&kv);
      continue;
    }
    added = true;
    if (needed)
      written.push_back(&privateTypes);
  }
  if (needed && !added)
    written.push_back(&privateTypes);
  return written;
}

absl::StatusOr<Writer::Layout> Writer::layout(std::string_view name) const {
  Layout layout;
  KF_ASSIGN_OR_RETURN(layout.alignment, checkMetadata(name));
  KF_ASSIGN_OR_RETURN(layout.tensorBytes, checkTensors(name));
  KeyValue privateTypes{std::string(kPrivateTypesKey), privateTypeEntries()};
  std::vector<const KeyValue *> written = metadataToWrite(privateTypes);

  Encoder out(layout.head);
  for (char c : kMagic)
    out.put<uint8_t>(static_cast<uint8_t>(c));
  out.put<uint32_t>(kVersion);
  out.put<int64_t>(static_cast<int64_t>(tensors_.size()));
  out.put<int64_t>(static_cast<int64_t>(written.size()));
  for (const KeyValue *kv : written) {
    out.put(kv->key);
    out.put(kv->value);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor &t = tensors_[i];
    out.put(t.name);
    out.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (int64_t n : t.shape)
      out.put<int64_t>(n);
    out.put<uint32_t>(formatInfo(t.format).ggmlType);
    out.put<uint64_t>(offset);
    std::optional<uint64_t> size =
        padded(layout.tensorBytes[i], layout.alignment);
    if (!size || __builtin_add_overflow(offset, *size, &offset))
      return invalid(name, absl::StrCat("tensor ", quoted(t.name),
                                        " ends past 2^64 bytes of data"));
  }
  if (!tensors_.empty())
    layout.head.resize(*padded(layout.head.size(), layout.alignment), 0);
  return layout;
}

absl::Status Writer::emit(std::string_view name, const Layout &layout,
                          Sink sink) const {
  static constexpr uint8_t kZeros[4096] = {};
  KF_RETURN_IF_ERROR(sink(layout.head));
  std::vector<uint8_t> produced;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor &t = tensors_[i];
    uint64_t bytes = layout.tensorBytes[i];
    std::span<const uint8_t> data;
    if (const auto *view = std::get_if<std::span<const uint8_t>>(&t.data)) {
      data = *view;
    } else if (const auto *owned = std::get_if<std::vector<uint8_t>>(&t.data)) {
      data = *owned;
    } else {
      produced.assign(bytes, 0);
      if (absl::Status s = std::get<Producer>(t.data)(produced); !s.ok())
        return absl::Status(s.code(),
                            absl::StrCat(toAbsl(name), ": tensor ",
                                         quoted(t.name), ": ", s.message()));
      data = produced;
    }
    KF_RETURN_IF_ERROR(sink(data));
    for (uint64_t pad = *padded(bytes, layout.alignment) - bytes; pad > 0;) {
      uint64_t n = std::min<uint64_t>(pad, sizeof kZeros);
      KF_RETURN_IF_ERROR(sink(std::span(kZeros, n)));
      pad -= n;
    }
  }
  return absl::OkStatus();
}

absl::Status Writer::write(const std::string &path) const {
  KF_ASSIGN_OR_RETURN(Layout layout, this->layout(path));
  KF_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(path));
  KF_RETURN_IF_ERROR(emit(path, layout, [&](std::span<const uint8_t> bytes) {
    return out.write(bytes);
  }));
  return out.commit();
}

absl::StatusOr<std::vector<uint8_t>>
Writer::serialize(std::string_view name) const {
  KF_ASSIGN_OR_RETURN(Layout layout, this->layout(name));
  std::vector<uint8_t> bytes;
  KF_RETURN_IF_ERROR(emit(name, layout, [&](std::span<const uint8_t> data) {
    bytes.insert(bytes.end(), data.begin(), data.end());
    return absl::OkStatus();
  }));
  return bytes;
}

} // namespace kf::gguf
