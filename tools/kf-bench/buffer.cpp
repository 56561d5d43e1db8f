#include "buffer.h"

#include <utility>

namespace kf::bench {

absl::StatusOr<Buffer> BufferCache::take(uint64_t bytes) {
  Buffer b = std::move(kept_);
  if (b.resize(bytes))
    return b;
  b = Buffer();
  return Buffer::allocate(bytes);
}

void BufferCache::give(Buffer b) { kept_ = std::move(b); }

} // namespace kf::bench
