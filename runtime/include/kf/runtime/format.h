// The format table: geometry and pairing of every weight and activation format.
// Header-only and constexpr, so the compiler reads the same table without
// linking the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

namespace kf {

enum class Format : uint32_t {
#define KF_FORMAT(E, name, ggml, elems, bytes, dot, role) E = ggml,
#include "kf/runtime/formats.def"
};

enum class FormatRole : uint8_t { Weight, Integer, Activation };

// Type ids from here up are Kernelforge's own formats, unknown to ggml.
inline constexpr uint32_t kFirstPrivateType = 4096;

struct FormatInfo {
  Format format;
  std::string_view name; // mnemonic, e.g. "q8_0"
  uint32_t ggmlType;     // id in GGUF files
  uint32_t blockElems;   // elements per block
  uint32_t blockBytes;   // bytes per block
  Format dotFormat;      // activation format of the reference dot product
  FormatRole role;

  constexpr double bitsPerWeight() const {
    return 8.0 * blockBytes / blockElems;
  }
  constexpr bool isPrivate() const { return ggmlType >= kFirstPrivateType; }
};

inline constexpr FormatInfo kFormats[] = {
#define KF_FORMAT(E, name, ggml, elems, bytes, dot, role)                      \
  {Format::E, name, ggml, elems, bytes, Format::dot, FormatRole::role},
#include "kf/runtime/formats.def"
};

// All known formats, in ggml_type order.
inline constexpr std::span<const FormatInfo> allFormats() { return kFormats; }

// The table row of `f`. Every enumerator has a row, so this never fails.
constexpr const FormatInfo &formatInfo(Format f) {
  for (const FormatInfo &info : kFormats)
    if (info.format == f)
      return info;
  __builtin_unreachable(); // every enumerator comes from a table row
}

// Lookups by mnemonic ("q8_0") and by GGUF type id; nullopt when unknown.
constexpr std::optional<Format> formatFromName(std::string_view name) {
  for (const FormatInfo &info : kFormats)
    if (info.name == name)
      return info.format;
  return std::nullopt;
}

constexpr std::optional<Format> formatFromGgmlType(uint32_t ggmlType) {
  for (const FormatInfo &info : kFormats)
    if (info.ggmlType == ggmlType)
      return info.format;
  return std::nullopt;
}

// Bytes of a row of `elems` elements, or nullopt when `elems` is negative or
// not a whole number of blocks, or the size overflows.
constexpr std::optional<uint64_t> rowBytes(Format f, int64_t elems) {
  const FormatInfo &info = formatInfo(f);
  if (elems < 0 || elems % info.blockElems != 0)
    return std::nullopt;
  uint64_t blocks = static_cast<uint64_t>(elems) / info.blockElems;
  if (blocks > std::numeric_limits<uint64_t>::max() / info.blockBytes)
    return std::nullopt;
  return blocks * info.blockBytes;
}

} // namespace kf
