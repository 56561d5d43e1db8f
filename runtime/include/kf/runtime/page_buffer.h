// Large anonymous buffers backed by transparent huge pages where the
// system allows: the packed weights of a session, and the weight sets and
// bandwidth probe of the benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace kf {

// Anonymous memory from mmap, released on destruction. Gigabytes are
// allocated here rather than with new so that a machine short of memory
// gets an error message, not an exception, and so that a large buffer
// starts on a 2 MiB boundary with huge pages asked for (MADV_HUGEPAGE,
// which Linux's default "madvise" setting requires): with 4 KiB pages a
// weight stream pays a TLB miss, and a page walk that itself misses the
// caches, every 4 KiB (docs/engine.md, "Weights"). A buffer under 2 MiB,
// and the part of one past its last whole 2 MiB, keep base pages: a huge
// page is resident whole, however few of its bytes are used.
class PageBuffer {
public:
  PageBuffer() = default;
  PageBuffer(PageBuffer &&other) noexcept;
  PageBuffer &operator=(PageBuffer &&other) noexcept;
  PageBuffer(const PageBuffer &) = delete;
  PageBuffer &operator=(const PageBuffer &) = delete;
  ~PageBuffer();

  // `bytes` zeroed bytes, 2 MiB-aligned in address from 2 MiB up; the
  // pages are the system's to back on first touch, by whichever thread
  // touches them.
  static absl::StatusOr<PageBuffer> allocate(uint64_t bytes);

  // The bytes usable without a new mapping.
  uint64_t capacity() const { return capacity_; }
  // Makes the size `bytes`, keeping the contents, when the capacity allows;
  // returns whether it did.
  bool resize(uint64_t bytes);

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }
  std::span<uint8_t> span() { return {data_, size_}; }
  std::span<const uint8_t> span() const { return {data_, size_}; }

private:
  void release();

  uint8_t *data_ = nullptr;
  uint64_t size_ = 0, capacity_ = 0;
  // What was mapped: the capacity plus alignment slack.
  void *map_ = nullptr;
  size_t mapBytes_ = 0;
};

} // namespace kf
