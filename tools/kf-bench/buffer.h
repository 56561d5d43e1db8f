// Large page-aligned buffers for weight sets and the bandwidth probe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace kf::bench {

// Anonymous memory from mmap, released on destruction. Working sets of
// gigabytes are allocated here rather than with new so that a machine short
// of memory gets an error message, not an exception, and so that transparent
// huge pages can be asked for: without them a cold weight stream pays a TLB
// miss every 4 KiB, which neither the roofline nor oneDNN's figures should
// include.
class Buffer {
public:
  Buffer() = default;
  Buffer(Buffer &&other) noexcept;
  Buffer &operator=(Buffer &&other) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer();

  // `bytes` zeroed bytes, 2 MiB-aligned in address when huge pages are on.
  static absl::StatusOr<Buffer> allocate(uint64_t bytes);

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }
  std::span<uint8_t> span() { return {data_, size_}; }
  std::span<const uint8_t> span() const { return {data_, size_}; }

private:
  void release();

  uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
  // What was mapped: `size_` rounded up, plus alignment slack.
  void *map_ = nullptr;
  size_t map_bytes_ = 0;
};

} // namespace kf::bench
