// Huge-page-backed anonymous buffers (kf/runtime/page_buffer.h).
#include "kf/runtime/page_buffer.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
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
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // A huge page of slack lets a large buffer's start move to a 2 MiB
  // boundary, the only alignment at which the kernel backs a range with
  // huge pages.
  const bool huge = bytes >= kHugePage;
  const uint64_t pages = (bytes + page - 1) / page * page;
  const uint64_t length = pages + (huge ? kHugePage : 0);
  if (pages < bytes || length < pages || length > SIZE_MAX)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes"));
  void *map = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes: ", std::strerror(errno)));
  const auto address = reinterpret_cast<uintptr_t>(map);
  const uintptr_t start =
      huge ? (address + kHugePage - 1) / kHugePage * kHugePage : address;
  // Huge pages over the buffer's whole 2 MiB pages only: its tail, like a
  // small buffer, in base pages, as a huge page is resident whole however
  // few of its bytes are touched. Advice only: without transparent huge
  // pages the buffer still works.
  if (huge)
    madvise(reinterpret_cast<void *>(start), bytes / kHugePage * kHugePage,
            MADV_HUGEPAGE);
  b.map_ = map;
  b.mapBytes_ = length;
  b.data_ = reinterpret_cast<uint8_t *>(start);
  b.size_ = bytes;
  b.capacity_ = address + length - start;
  return b;
}

bool PageBuffer::resize(uint64_t bytes) {
  if (bytes > capacity_)
    return false;
  size_ = bytes;
  return true;
}

} // namespace kf
