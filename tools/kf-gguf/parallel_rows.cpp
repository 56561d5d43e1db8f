#include "parallel_rows.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace kf::gguf_tool {

absl::Status
parallelRows(int64_t rows, int64_t rowElements, int threads, Progress &progress,
             std::string_view label,
             absl::FunctionRef<absl::Status(int64_t, std::span<float>)> work) {
  // Batches of about 64 Ki elements: few enough atomic operations, small
  // enough batches to keep every thread busy to the end.
  int64_t batch = std::max<int64_t>(1, (int64_t{1} << 16) / rowElements);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  absl::Status error;
  auto run = [&](bool draws) {
    std::vector<float> scratch(rowElements);
    while (!failed.load(std::memory_order_relaxed)) {
      int64_t begin = next.fetch_add(batch);
      if (begin >= rows)
        return;
      int64_t end = std::min(rows, begin + batch);
      for (int64_t r = begin; r < end; ++r) {
        if (absl::Status s = work(r, scratch); !s.ok()) {
          std::lock_guard lock(errorMutex);
          if (error.ok())
            error = s;
          failed = true;
          return;
        }
      }
      progress.add(end - begin);
      if (draws)
        progress.draw(label);
    }
  };
  int64_t batches = (rows + batch - 1) / batch;
  std::vector<std::jthread> helpers;
  for (int64_t i = 1; i < std::min<int64_t>(threads, batches); ++i)
    helpers.emplace_back(run, false);
  run(true);
  helpers.clear(); // joins
  progress.draw(label, /*force=*/true);
  return error;
}

} // namespace kf::gguf_tool
