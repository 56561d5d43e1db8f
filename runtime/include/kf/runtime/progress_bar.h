// A progress bar for a weight load (LoadProgress), drawn on a terminal by a
// thread of its own while the pool packs: one line redrawn in place a few
// times a second, ended when the bar goes out of scope. Nothing is drawn
// when the stream is not a terminal (a log, a test), so output stays clean.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "kf/runtime/plan_weights.h"

namespace kf {

class ProgressBar {
public:
  // Draws "`label` NN% (X of Y GiB)" on `stream` until destroyed, if
  // `stream` is a terminal.
  ProgressBar(const LoadProgress &progress, std::string label,
              std::FILE *stream = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &operator=(const ProgressBar &) = delete;

private:
  void draw() const;

  const LoadProgress &progress_;
  const std::string label_;
  std::FILE *const stream_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace kf
