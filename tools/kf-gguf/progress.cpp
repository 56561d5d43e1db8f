#include "progress.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kf/runtime/absl_compat.h"

namespace kf::gguf_tool {

std::string Progress::render(uint64_t done, uint64_t total,
                             std::string_view label) {
  constexpr uint64_t kWidth = 30;
  uint64_t filled = total == 0 ? kWidth : done * kWidth / total;
  uint64_t percent = total == 0 ? 100 : done * 100 / total;
  return absl::StrFormat("[%s%s] %3d%% %d/%d rows %s", std::string(filled, '#'),
                         std::string(kWidth - filled, ' '), percent, done,
                         total, toAbsl(label));
}

void Progress::draw(std::string_view label, bool force) {
  if (!out_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - lastDraw_ < std::chrono::milliseconds(100))
    return;
  lastDraw_ = now;
  drawn_ = true;
  // Back to the start of the line, then clear what a longer label left.
  *out_ << '\r' << render(done_.load(std::memory_order_relaxed), total_, label)
        << "\x1b[K" << std::flush;
}

void Progress::finish() {
  if (out_ && drawn_)
    *out_ << '\n' << std::flush;
}

} // namespace kf::gguf_tool
