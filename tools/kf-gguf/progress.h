// A progress bar on a terminal: rows done out of a total, redrawn in place.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace kf::gguf_tool {

class Progress {
public:
  // Draws on `out`, or nowhere when it is null (output that is not a
  // terminal would fill with redrawn lines).
  Progress(std::ostream *out, uint64_t total) : out_(out), total_(total) {}

  // From any thread.
  void add(uint64_t rows) { done_.fetch_add(rows, std::memory_order_relaxed); }
  // From one thread; redraws at most ten times a second unless `force`.
  void draw(std::string_view label, bool force = false);
  // Leaves the last line drawn on the terminal.
  void finish();

  // One line: "[#####     ]  50% 5/10 rows label".
  static std::string render(uint64_t done, uint64_t total,
                            std::string_view label);

private:
  std::ostream *out_;
  uint64_t total_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point lastDraw_{};
  bool drawn_ = false;
};

} // namespace kf::gguf_tool
