#include "gguf/rules.h"

#include <algorithm>
#include <bit>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/gguf.h"

namespace kf::gguf {

namespace {

absl::Status invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

} // namespace

std::string shapeString(std::span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string quoted(std::string_view name) {
  return absl::StrCat("'", absl::Utf8SafeCHexEscape(toAbsl(name)), "'");
}

std::string stringTooLong(std::string_view subject, uint64_t bytes) {
  return absl::StrCat(toAbsl(subject), " is ", bytes,
                      " bytes long, expected at most ", kMaxStringBytes);
}

std::string arrayTooLong(std::string_view subject, uint64_t elements) {
  return absl::StrCat(toAbsl(subject), " has ", elements,
                      " elements, expected at most ", kMaxArrayElements);
}

absl::Status checkTensorName(std::string_view name) {
  if (name.empty())
    return invalid("a tensor has an empty name");
  if (name.size() > kMaxNameBytes)
    return invalid(absl::StrCat("tensor name ", quoted(name), " is ",
                                name.size(), " bytes long, expected at most ",
                                kMaxNameBytes));
  return absl::OkStatus();
}

absl::Status checkDimCount(std::string_view tensor, uint64_t dims) {
  if (dims == 0 || dims > kMaxDims)
    return invalid(absl::StrCat("tensor ", quoted(tensor), " has ", dims,
                                " dimensions, expected 1 to ", kMaxDims));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> tensorBytes(std::string_view tensor, Format format,
                                     std::span<const int64_t> shape) {
  if (absl::Status s = checkDimCount(tensor, shape.size()); !s.ok())
    return s;
  const FormatInfo &info = formatInfo(format);
  auto describe = [&] {
    return absl::StrCat("tensor ", quoted(tensor), " of shape ",
                        shapeString(shape));
  };
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return invalid(absl::StrCat(describe(), " has dimension ", i, " = ",
                                  shape[i], ", expected >= 0"));
  if (info.role == FormatRole::Activation)
    return invalid(absl::StrCat("tensor ", quoted(tensor), " has format ",
                                toAbsl(info.name),
                                ", an activation format; expected a weight "
                                "format"));
  if (shape[0] % info.blockElems != 0)
    return invalid(absl::StrCat("tensor ", quoted(tensor), " has rows of ",
                                shape[0], " elements, expected a multiple of ",
                                info.blockElems, " (the block size of ",
                                toAbsl(info.name), ")"));
  // As ggml: a tensor with a zero dimension is empty, whatever the others.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return 0;
  int64_t elements = 1;
  for (int64_t n : shape)
    if (__builtin_mul_overflow(elements, n, &elements))
      return invalid(
          absl::StrCat(describe(), " has more than 2^63 - 1 elements"));
  std::optional<uint64_t> row = rowBytes(format, shape[0]);
  uint64_t bytes = 0;
  if (!row ||
      __builtin_mul_overflow(*row, uint64_t(elements / shape[0]), &bytes))
    return invalid(absl::StrCat(describe(), " in ", toAbsl(info.name),
                                " has more than 2^64 - 1 bytes"));
  return bytes;
}

absl::StatusOr<uint32_t> alignmentFrom(const Value &value) {
  std::optional<uint32_t> alignment = value.as<uint32_t>();
  if (!alignment)
    return invalid(absl::StrCat("key ", quoted(kAlignmentKey), " has type ",
                                value.typeDescription(), ", expected uint32"));
  if (!std::has_single_bit(*alignment))
    return invalid(absl::StrCat(toAbsl(kAlignmentKey), " is ", *alignment,
                                ", expected a power of two"));
  return *alignment;
}

std::optional<uint64_t> padded(uint64_t bytes, uint32_t alignment) {
  uint64_t sum;
  if (__builtin_add_overflow(bytes, alignment - 1, &sum))
    return std::nullopt;
  return sum & ~uint64_t{alignment - 1};
}

std::string privateTypeEntry(Format f) {
  const FormatInfo &info = formatInfo(f);
  return absl::StrCat(info.ggmlType, "=", toAbsl(info.name));
}

absl::StatusOr<std::vector<Format>> declaredPrivateTypes(const Value &value) {
  auto entries = value.as<std::span<const std::string>>();
  if (!entries)
    return invalid(absl::StrCat("key ", quoted(kPrivateTypesKey), " has type ",
                                value.typeDescription(),
                                ", expected array of string"));
  std::vector<Format> declared;
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string &entry = (*entries)[i];
    auto problem = [&](std::string_view what) {
      return invalid(absl::StrCat(toAbsl(kPrivateTypesKey), "[", i, "] is ",
                                  quoted(entry), ": ", toAbsl(what)));
    };
    size_t eq = entry.find('=');
    uint32_t id;
    if (eq == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(entry.data(), eq), &id))
      return problem("expected '<type id>=<format>', e.g. '" +
                     privateTypeEntry(Format::FRACTAL64) + "'");
    std::string_view name = std::string_view(entry).substr(eq + 1);
    std::optional<Format> format = formatFromGgmlType(id);
    if (id < kFirstPrivateType)
      return problem(absl::StrCat(
          "expected a private type id (>= ", kFirstPrivateType, ")"));
    if (!format)
      return problem(absl::StrCat("Kernelforge has no private type ", id));
    if (formatInfo(*format).name != name)
      return problem(absl::StrCat("Kernelforge's private type ", id, " is ",
                                  toAbsl(formatInfo(*format).name)));
    if (std::find(declared.begin(), declared.end(), *format) != declared.end())
      return problem("declared twice");
    declared.push_back(*format);
  }
  return declared;
}

} // namespace kf::gguf
