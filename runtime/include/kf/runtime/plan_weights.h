// The weights of a plan bound from a model file (docs/engine.md, "Weights"):
// each plan weight found by name among the GGUF file's tensors, checked
// against the format and shape the plan was compiled for, and packed to
// its layout in parallel on the thread pool — or, when the plan reads it as
// stored, used in place in the file's mapping. A tensor's file pages are
// released as soon as it is packed, so the file and its packed copy are
// never both resident.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/page_buffer.h"
#include "kf/runtime/plan.h"
#include "kf/runtime/thread_pool.h"

namespace kf {

// How far a load is, for a progress bar another thread draws: the file
// bytes of the weights to pack (set before packing starts) and those
// packed so far.
struct LoadProgress {
  std::atomic<uint64_t> done{0}, total{0};
};

class PlanWeights {
public:
  // Maps `path` and binds `plan`'s weights. `progress`, when given, counts
  // each tensor part's file bytes as it is packed, from any thread. Fails,
  // in one line
  // naming the file and the weight, on a missing tensor, another format or
  // shape than the plan's, or a layout that does not pack it.
  static absl::StatusOr<PlanWeights> load(const Plan &plan,
                                          const std::string &path,
                                          ThreadPool &pool,
                                          LoadProgress *progress = nullptr);

  // Weight i of the plan, as the executor binds it.
  const std::vector<std::span<const uint8_t>> &spans() const { return spans_; }
  // Bytes of the packed copies the loader holds (weights read in place are
  // the file's).
  uint64_t packedBytes() const { return packedBytes_; }
  // File bytes of the plan's weights.
  uint64_t sourceBytes() const { return sourceBytes_; }

private:
  PlanWeights() = default;

  std::unique_ptr<gguf::File> file_;
  std::vector<PageBuffer> packed_;
  std::vector<std::span<const uint8_t>> spans_;
  uint64_t packedBytes_ = 0;
  uint64_t sourceBytes_ = 0;
};

// The bytes a plan weight is bound with: its packed copy in its layout (an
// expert stack packed expert by expert), or its file bytes when it is read
// as stored.
absl::StatusOr<uint64_t> planWeightBytes(const PlanWeight &weight);

// The memory a session of a model's plans holds (docs/engine.md, "Memory"):
// the packed copies of the weights they read (each once, by name and
// layout), the weights read in place from the file's mapping (resident once
// read; a table looked up by token counts one row), the state, and every
// plan's arena.
struct SessionMemory {
  uint64_t packedWeights = 0;
  uint64_t mappedWeights = 0;
  uint64_t state = 0;
  uint64_t arenas = 0;
  uint64_t total() const {
    return packedWeights + mappedWeights + state + arenas;
  }
};

// The plans' weights, each once (by name and layout), and for each plan the
// index of each of its weights among them.
Plan mergeWeights(std::span<const Plan *const> plans,
                  std::vector<std::vector<size_t>> &indices);

absl::StatusOr<SessionMemory> sessionMemory(std::span<const Plan *const> plans);

} // namespace kf
