// Shared helpers of the GGUF tests: hand-made files byte by byte, and parses
// that must succeed or fail.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kf/runtime/gguf.h"
#include "gtest/gtest.h"

namespace kf::gguf::testing {

// The checked-in test data (test/data/gguf), passed by CMake.
inline std::string dataPath(std::string_view file) {
  return std::string(KF_TEST_DATA_DIR) + "/gguf/" + std::string(file);
}

// Little-endian fields appended one by one, to make files a writer would
// never produce.
class Bytes {
public:
  template <typename T> Bytes &put(T value) {
    const auto *p = reinterpret_cast<const uint8_t *>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes &u8(uint8_t v) { return put(v); }
  Bytes &u32(uint32_t v) { return put(v); }
  Bytes &u64(uint64_t v) { return put(v); }
  Bytes &i64(int64_t v) { return put(v); }
  Bytes &raw(std::string_view s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  Bytes &str(std::string_view s) { return u64(s.size()).raw(s); }
  Bytes &zeros(size_t n) {
    bytes_.resize(bytes_.size() + n, 0);
    return *this;
  }
  // Zeros up to a multiple of `alignment`.
  Bytes &pad(size_t alignment) {
    return zeros((alignment - bytes_.size() % alignment) % alignment);
  }

  // Magic, version 3 and the two counts.
  Bytes &header(int64_t tensors, int64_t kvs) {
    return raw("GGUF").u32(3).i64(tensors).i64(kvs);
  }
  // A metadata entry with a UINT32 value.
  Bytes &kvU32(std::string_view key, uint32_t v) {
    return str(key).u32(4).u32(v);
  }
  Bytes &kvString(std::string_view key, std::string_view v) {
    return str(key).u32(8).str(v);
  }
  Bytes &tensor(std::string_view name, std::vector<int64_t> shape,
                uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(shape.size()));
    for (int64_t n : shape)
      i64(n);
    return u32(type).u64(offset);
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t> &bytes() const { return bytes_; }

private:
  std::vector<uint8_t> bytes_;
};

inline absl::StatusOr<File> parse(std::span<const uint8_t> bytes) {
  return File::parse(bytes, "t.gguf");
}

// The error message of parsing `bytes`, which must be refused.
inline std::string rejection(std::span<const uint8_t> bytes) {
  absl::StatusOr<File> file = parse(bytes);
  EXPECT_FALSE(file.ok()) << "accepted a file that should be refused";
  return file.ok() ? "" : std::string(file.status().message());
}

} // namespace kf::gguf::testing
