#include "kf/runtime/mapped_file.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "io/system_error.h"

namespace kf {

absl::StatusOr<MappedFile> MappedFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return systemError(errno, path, "cannot open");
  struct stat st;
  absl::Status status;
  void *data = nullptr;
  size_t size = 0;
  if (fstat(fd, &st) != 0) {
    status = systemError(errno, path, "cannot stat");
  } else if (!S_ISREG(st.st_mode)) {
    status =
        absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  } else if (st.st_size > 0) { // an empty file cannot be mapped
    size = static_cast<size_t>(st.st_size);
    data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED)
      status = systemError(errno, path, "cannot map");
  }
  close(fd); // the mapping keeps the file open
  if (!status.ok())
    return status;
  return MappedFile(static_cast<const uint8_t *>(data), size);
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

MappedFile::~MappedFile() {
  if (data_)
    munmap(const_cast<uint8_t *>(data_), size_);
}

void MappedFile::release(std::span<const uint8_t> range) const {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(range.data());
  uintptr_t end = begin + range.size();
  begin = (begin + page - 1) / page * page;
  end = end / page * page;
  if (begin < end)
    // Advice only: nothing to report if the kernel declines it.
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

} // namespace kf
