#include "kf/runtime/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/system_error.h"

namespace kf {

namespace {

// The directory part of `path`, to sync after the rename.
std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

absl::StatusOr<AtomicFile> AtomicFile::create(std::string path) {
  // O_EXCL on a name unique to this process and call, so that concurrent
  // writers never share a temporary file; mode 0666 lets the umask decide the
  // permissions as it would for a plain open() of the target.
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0;; ++attempt) {
    std::string temp =
        absl::StrCat(path, ".tmp-", getpid(), "-", counter.fetch_add(1));
    int fd =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
      return AtomicFile(std::move(path), std::move(temp), fd);
    int err = errno;
    if (err != EEXIST || attempt == 100)
      return systemError(err, path, absl::StrCat("cannot create ", temp));
  }
}

AtomicFile::AtomicFile(AtomicFile &&other) noexcept
    : path_(std::move(other.path_)),
      tempPath_(std::exchange(other.tempPath_, {})),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    close(fd_);
  if (!tempPath_.empty())
    unlink(tempPath_.c_str());
}

absl::Status AtomicFile::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return systemError(errno, path_, "cannot write");
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::commit() {
  if (fsync(fd_) != 0)
    return systemError(errno, path_, "cannot sync");
  if (close(std::exchange(fd_, -1)) != 0)
    return systemError(errno, path_, "cannot close");
  if (rename(tempPath_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    return systemError(err, path_,
                       absl::StrCat("cannot rename ", tempPath_, " over it"));
  }
  tempPath_.clear();
  std::string dir = directoryOf(path_);
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    return systemError(errno, path_, "cannot open its directory to sync it");
  absl::Status status =
      fsync(dirFd) == 0
          ? absl::OkStatus()
          : systemError(errno, path_, "cannot sync its directory");
  close(dirFd);
  return status;
}

} // namespace kf
