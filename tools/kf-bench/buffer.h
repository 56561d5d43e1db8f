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

// The one large buffer of a run, handed from phase to phase (bandwidth probe,
// oneDNN's weight sets, each format's): the first touch of gigabytes of
// fresh huge pages costs seconds (on a VM, several per GiB, as the host
// backs them), touching them again costs nothing.
class BufferCache {
public:
  // A buffer of `bytes` with unspecified contents: the kept one when its
  // capacity allows, otherwise a new one, the kept one freed first so that
  // the two never take memory at once.
  absl::StatusOr<Buffer> take(uint64_t bytes);
  // Keeps `b` for the next take.
  void give(Buffer b);

private:
  Buffer kept_;
};

} // namespace kf::bench
