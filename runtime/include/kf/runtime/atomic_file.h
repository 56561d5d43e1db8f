// Writing a file so that readers see either the old file or the complete new
// one: the bytes go to a temporary file in the target's directory, which
// commit() flushes to disk and renames over the target. Until then the target
// is untouched, and an AtomicFile destroyed before commit() removes its
// temporary file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kf {

class AtomicFile {
public:
  static absl::StatusOr<AtomicFile> create(std::string path);

  AtomicFile(AtomicFile &&other) noexcept;
  AtomicFile &operator=(AtomicFile &&) = delete;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();

  const std::string &path() const { return path_; }

  absl::Status write(std::span<const uint8_t> bytes);
  // fsync, rename over path(), fsync the directory so the rename is durable.
  absl::Status commit();

private:
  AtomicFile(std::string path, std::string tempPath, int fd)
      : path_(std::move(path)), tempPath_(std::move(tempPath)), fd_(fd) {}

  std::string path_;
  std::string tempPath_; // empty once renamed or removed
  int fd_ = -1;
};

} // namespace kf
