#include "kf/runtime/progress_bar.h"

#include <unistd.h>

#include <chrono>

namespace kf {

ProgressBar::ProgressBar(const LoadProgress &progress, std::string label,
                         std::FILE *stream)
    : progress_(progress), label_(std::move(label)), stream_(stream) {
  if (!isatty(fileno(stream_)))
    return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    // Redrawn five times a second: smooth enough, and no load of note.
    while (!stop_.wait_for(lock, std::chrono::milliseconds(200),
                           [this] { return stopping_; }))
      draw();
  });
}

ProgressBar::~ProgressBar() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  thread_.join();
  draw();
  std::fputc('\n', stream_);
  std::fflush(stream_);
}

void ProgressBar::draw() const {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const uint64_t total = progress_.total.load(std::memory_order_relaxed);
  const uint64_t done = progress_.done.load(std::memory_order_relaxed);
  const double share = total > 0 ? static_cast<double>(done) / total : 0.0;
  std::fprintf(stream_, "\r%s %3.0f%% (%.1f of %.1f GiB)", label_.c_str(),
               100 * share, done / gib, total / gib);
  std::fflush(stream_);
}

} // namespace kf
