#include "parallel_rows.h"

#include <algorithm>
#include <vector>

#include "kf/runtime/status_macros.h"
#include "kf/runtime/thread_pool.h"

namespace kf::gguf_tool {

absl::Status
parallelRows(int64_t rows, int64_t rowElements, int threads, Progress &progress,
             std::string_view label,
             absl::FunctionRef<absl::Status(int64_t, std::span<float>)> work) {
  // Batches of about 64 Ki elements: few enough atomic operations, small
  // enough batches to keep every thread busy to the end.
  int64_t batch = std::max<int64_t>(1, (int64_t{1} << 16) / rowElements);
  int64_t batches = (rows + batch - 1) / batch;
  ThreadPool pool(static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(batches, threads))));
  std::vector<std::vector<float>> scratch(pool.size());
  absl::Status status =
      parallelClaim(pool, rows, batch,
                    [&](int64_t begin, int64_t end, int t) -> absl::Status {
                      scratch[t].resize(rowElements);
                      for (int64_t r = begin; r < end; ++r)
                        KF_RETURN_IF_ERROR(work(r, scratch[t]));
                      progress.add(end - begin);
                      // The calling thread draws.
                      if (t == 0)
                        progress.draw(label);
                      return absl::OkStatus();
                    });
  progress.draw(label, /*force=*/true);
  return status;
}

} // namespace kf::gguf_tool
