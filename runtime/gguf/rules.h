// Internal: the rules every GGUF file obeys, shared by the reader and the
// writer so that the writer never produces a file the reader refuses. Each
// check names its subject; the caller adds where it is (file, byte).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/format.h"
#include "kf/runtime/gguf_value.h"

namespace kf::gguf {

inline constexpr std::string_view kMagic = "GGUF";
// ggml's limits (gguf.cpp: GGUF_MAX_STRING_LENGTH, GGUF_MAX_ARRAY_ELEMENTS;
// ggml.h: GGML_MAX_NAME counts the NUL, GGML_MAX_DIMS).
inline constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxArrayElements = uint64_t{1} << 30;
inline constexpr size_t kMaxNameBytes = 63;
inline constexpr uint64_t kMaxDims = 4;

std::string stringTooLong(std::string_view subject, uint64_t bytes);
std::string arrayTooLong(std::string_view subject, uint64_t elements);

// Non-empty and at most kMaxNameBytes.
absl::Status checkTensorName(std::string_view name);
absl::Status checkDimCount(std::string_view tensor, uint64_t dims);

// The byte size of a tensor of `format` and `shape` (ggml order), after
// checking what ggml checks: 1..4 dimensions, none negative, an element count
// and a byte size that fit 63 and 64 bits, rows a whole number of blocks; and
// that `format` is a weight format.
absl::StatusOr<uint64_t> tensorBytes(std::string_view tensor, Format format,
                                     std::span<const int64_t> shape);

// The value of general.alignment: a UINT32 power of two.
absl::StatusOr<uint32_t> alignmentFrom(const Value &value);

// `bytes` rounded up to a multiple of `alignment`, nullopt on overflow.
std::optional<uint64_t> padded(uint64_t bytes, uint32_t alignment);

// kernelforge.private_types: the entry naming private format `f`
// ("4096=fractal64"), and the formats a value of the key declares.
std::string privateTypeEntry(Format f);
absl::StatusOr<std::vector<Format>> declaredPrivateTypes(const Value &value);

} // namespace kf::gguf
