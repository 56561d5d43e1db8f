// The large buffers of a benchmark run: the runtime's huge-page buffers,
// handed from phase to phase.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "kf/runtime/page_buffer.h"

namespace kf::bench {

// The one large buffer of a run, handed from phase to phase (bandwidth probe,
// oneDNN's weight sets, each format's), in huge pages so that a cold weight
// stream pays no TLB miss every 4 KiB, which neither the roofline nor
// oneDNN's figures should include. The first touch of gigabytes of
// fresh huge pages costs seconds (on a VM, several per GiB, as the host
// backs them), touching them again costs nothing.
class BufferCache {
public:
  // A buffer of `bytes` with unspecified contents: the kept one when its
  // capacity allows, otherwise a new one, the kept one freed first so that
  // the two never take memory at once.
  absl::StatusOr<PageBuffer> take(uint64_t bytes);
  // Keeps `b` for the next take.
  void give(PageBuffer b);

private:
  PageBuffer kept_;
};

} // namespace kf::bench
