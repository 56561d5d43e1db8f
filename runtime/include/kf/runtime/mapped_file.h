// A whole file mapped read-only into memory: model weights are read in place,
// and pages the code never touches are never read from disk.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace kf {

class MappedFile {
public:
  // Errors name `path` and the failing call's reason.
  static absl::StatusOr<MappedFile> open(const std::string &path);

  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  // Empty for an empty file (which cannot be mapped).
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Says that the pages wholly inside `range` (a part of bytes()) will not
  // be read again: they leave the process's resident memory (a later read
  // maps them from the file again). Once a weight is repacked, its file
  // bytes need not stay resident beside the packed copy.
  void release(std::span<const uint8_t> range) const;

private:
  MappedFile(const uint8_t *data, size_t size) : data_(data), size_(size) {}

  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace kf
