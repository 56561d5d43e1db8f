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
  uint32_t ggml_type;    // id in GGUF files
  uint32_t block_elems;  // elements per block
  uint32_t block_bytes;  // bytes per block
  Format dot_format;     // activation format of the reference dot product
  FormatRole role;

  constexpr double bits_per_weight() const {
    return 8.0 * block_bytes / block_elems;
  }
  constexpr bool is_private() const { return ggml_type >= kFirstPrivateType; }
};

inline constexpr FormatInfo kFormats[] = {
#define KF_FORMAT(E, name, ggml, elems, bytes, dot, role)                      \
  {Format::E, name, ggml, elems, bytes, Format::dot, FormatRole::role},
#include "kf/runtime/formats.def"
};

// All known formats, in ggml_type order.
inline constexpr std::span<const FormatInfo> all_formats() { return kFormats; }

// The table row of `f`. Every enumerator has a row, so this never fails.
constexpr const FormatInfo &format_info(Format f) {
  for (const FormatInfo &info : kFormats)
    if (info.format == f)
      return info;
  __builtin_unreachable(); // every enumerator comes from a table row
}

// Lookups by mnemonic ("q8_0") and by GGUF type id; nullopt when unknown.
constexpr std::optional<Format> format_from_name(std::string_view name) {
  for (const FormatInfo &info : kFormats)
    if (info.name == name)
      return info.format;
  return std::nullopt;
}

constexpr std::optional<Format> format_from_ggml_type(uint32_t ggml_type) {
  for (const FormatInfo &info : kFormats)
    if (info.ggml_type == ggml_type)
      return info.format;
  return std::nullopt;
}

// Bytes of a row of `elems` elements, or nullopt when `elems` is negative or
// not a whole number of blocks, or the size overflows.
constexpr std::optional<uint64_t> row_bytes(Format f, int64_t elems) {
  const FormatInfo &info = format_info(f);
  if (elems < 0 || elems % info.block_elems != 0)
    return std::nullopt;
  uint64_t blocks = static_cast<uint64_t>(elems) / info.block_elems;
  if (blocks > std::numeric_limits<uint64_t>::max() / info.block_bytes)
    return std::nullopt;
  return blocks * info.block_bytes;
}

} // namespace kf
