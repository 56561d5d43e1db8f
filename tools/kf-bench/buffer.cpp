#include "buffer.h"

#include <utility>

namespace kf::bench {

absl::StatusOr<PageBuffer> BufferCache::take(uint64_t bytes) {
  PageBuffer b = std::move(kept_);
  if (b.resize(bytes))
    return b;
  b = PageBuffer();
  return PageBuffer::allocate(bytes);
}

void BufferCache::give(PageBuffer b) { kept_ = std::move(b); }

} // namespace kf::bench
