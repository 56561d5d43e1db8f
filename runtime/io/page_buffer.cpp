// Huge-page-backed anonymous buffers (kf/runtime/page_buffer.h).
#include "kf/runtime/page_buffer.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kf {

namespace {

constexpr uint64_t kHugePage = uint64_t{2} << 20;

} // namespace

PageBuffer::PageBuffer(PageBuffer &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      map_(std::exchange(other.map_, nullptr)),
      mapBytes_(std::exchange(other.mapBytes_, 0)) {}

PageBuffer &PageBuffer::operator=(PageBuffer &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    map_ = std::exchange(other.map_, nullptr);
    mapBytes_ = std::exchange(other.mapBytes_, 0);
  }
  return *this;
}

PageBuffer::~PageBuffer() { release(); }

void PageBuffer::release() {
  if (map_)
    munmap(map_, mapBytes_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = capacity_ = mapBytes_ = 0;
}

absl::StatusOr<PageBuffer> PageBuffer::allocate(uint64_t bytes) {
  PageBuffer b;
  if (bytes == 0)
    return b;
  // One huge page of slack lets the start be moved to a 2 MiB boundary, the
  // only alignment at which the kernel backs a range with huge pages.
  uint64_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < bytes || rounded + kHugePage < rounded)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes"));
  size_t length = rounded + kHugePage;
  void *map = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes: ", std::strerror(errno)));
  auto address = reinterpret_cast<uintptr_t>(map);
  uintptr_t aligned = (address + kHugePage - 1) / kHugePage * kHugePage;
  // Advice only: without transparent huge pages the buffer still works.
  madvise(reinterpret_cast<void *>(aligned), rounded, MADV_HUGEPAGE);
  b.map_ = map;
  b.mapBytes_ = length;
  b.data_ = reinterpret_cast<uint8_t *>(aligned);
  b.size_ = bytes;
  b.capacity_ = rounded;
  return b;
}

bool PageBuffer::resize(uint64_t bytes) {
  if (bytes > capacity_)
    return false;
  size_ = bytes;
  return true;
}

} // namespace kf
