// The huge-page buffers the packed weights and the benchmarks' weight sets
// live in.
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "kf/runtime/page_buffer.h"
#include "gtest/gtest.h"

namespace kf {
namespace {

constexpr uint64_t kHugePage = uint64_t{2} << 20;

TEST(PageBuffer, ZeroedAndOnAHugePageBoundary) {
  absl::StatusOr<PageBuffer> b = PageBuffer::allocate(kHugePage + 3);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->size(), kHugePage + 3);
  // Whole base pages past the bytes asked for, less than a huge page more.
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_GE(b->capacity(), (b->size() + page - 1) / page * page);
  EXPECT_EQ(b->capacity() % page, 0u);
  EXPECT_LT(b->capacity(), b->size() + kHugePage + page);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % kHugePage, 0u);
  for (uint64_t i = 0; i < b->size(); i += 4093)
    ASSERT_EQ(b->data()[i], 0) << i;
  b->data()[b->capacity() - 1] = 1; // the whole capacity is usable
  EXPECT_TRUE(b->resize(b->capacity()));
  EXPECT_FALSE(b->resize(b->capacity() + 1));
  EXPECT_EQ(b->size(), b->capacity());
}

// A buffer smaller than a huge page takes base pages: backed by a huge
// page, a few KiB would hold 2 MiB resident.
TEST(PageBuffer, SmallBuffersTakeBasePages) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  absl::StatusOr<PageBuffer> b = PageBuffer::allocate(page + 1);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->capacity(), 2 * page);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % page, 0u);
}

TEST(PageBuffer, MovesItsMemory) {
  absl::StatusOr<PageBuffer> a = PageBuffer::allocate(100);
  ASSERT_TRUE(a.ok());
  a->data()[99] = 5;
  const uint8_t *memory = a->data();
  PageBuffer b = *std::move(a);
  EXPECT_EQ(b.data(), memory);
  EXPECT_EQ(b.span().size(), 100u);
  EXPECT_EQ(b.span()[99], 5);
  PageBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), memory);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.size(), 0u);
}

TEST(PageBuffer, EmptyAndImpossibleSizes) {
  absl::StatusOr<PageBuffer> empty = PageBuffer::allocate(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->data(), nullptr);
  EXPECT_EQ(empty->size(), 0u);
  // More than the address space: an error, not an exception or a crash.
  absl::StatusOr<PageBuffer> huge = PageBuffer::allocate(UINT64_MAX - 5);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(huge.status().message(),
            "cannot allocate 18446744073709551610 bytes");
}

} // namespace
} // namespace kf
