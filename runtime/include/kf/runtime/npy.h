// numpy's .npy format, version 1.0, for float32 arrays: what `numpy.load`
// reads back with the tensor's numpy shape.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kf {

// The header of a little-endian float32, C-order array of `shape` (numpy
// order: the outermost dimension first), padded so that the data starts at a
// multiple of 64 bytes as numpy writes it.
std::vector<uint8_t> npyFloat32Header(std::span<const int64_t> shape);

// Writes `values`, which must hold the product of `shape` elements, as a
// float32 .npy file at `path`, atomically (AtomicFile).
absl::Status writeNpyFloat32(const std::string &path,
                             std::span<const int64_t> shape,
                             std::span<const float> values);

} // namespace kf
