// A compiled model running one sequence (docs/engine.md, "Sessions"): an
// artifact's prefill and decode plans bound to a model file's weights and
// to one state, with the sequence's position. A prefill starts a sequence
// at position 0; each decode step appends one token. The weights both plans
// read are packed once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/executor.h"
#include "kf/runtime/plan_library.h"
#include "kf/runtime/plan_weights.h"
#include "kf/runtime/thread_pool.h"

namespace kf {

class Session {
public:
  // Opens the artifact at `artifact` (kf-compile --emit=plan), which must
  // hold plans named "prefill" and "decode", and binds their weights from
  // the GGUF file at `model`, packed on `pool` (`progress`, when given,
  // counts the bytes packed: PlanWeights::load). Fails, in one line naming
  // the file, on an artifact that does not load here, a plan missing, or a
  // model file whose tensors are not those the plans were compiled for.
  static absl::StatusOr<std::unique_ptr<Session>>
  open(const std::string &artifact, const std::string &model, ThreadPool &pool,
       LoadProgress *progress = nullptr);

  // Starts a sequence: `tokens` at positions 0, 1, ..., in runs of the
  // prefill plan of at most prefillChunk() tokens each (a chunked prefill).
  // The logits of the last one, valid until the next call. A refused call
  // (one line naming the artifact) leaves the sequence as it was.
  absl::StatusOr<std::span<const float>>
  prefill(std::span<const int32_t> tokens);
  // The next token of the sequence, at position(); its logits.
  absl::StatusOr<std::span<const float>> decode(int32_t token);

  // Runs the plans on `pool` from now on (the plans give the same results
  // on any number of threads), so that one packed copy of the weights
  // serves several thread counts.
  void setThreadPool(ThreadPool &pool) { pool_ = &pool; }

  // Times every step of the runs from now on (Executor::setProfiling);
  // the plans' executors, whose profile() it is.
  void setProfiling(bool on) {
    prefill_->setProfiling(on);
    decode_->setProfiling(on);
  }
  const Executor &prefillExecutor() const { return *prefill_; }
  const Executor &decodeExecutor() const { return *decode_; }

  // The plans' outputs beyond the logits (kf-compile --layer-outputs: each
  // layer's "blk.L.streams", "blk.L.experts" and "blk.L.entries",
  // docs/graph.md "Layer probes"), and the bytes of one of them for every
  // token of the last prefill or decode call, row after row.
  struct Output {
    std::string name;
    std::vector<uint8_t> bytes;
  };
  const std::vector<Output> &outputs() const { return outputs_; }

  // Tokens of the sequence so far: the next one's position.
  int64_t position() const { return position_; }
  // The most tokens one run of the prefill plan takes (a prefill chunk), and
  // the longest sequence (0: the plans hold no caches, and bound none).
  int64_t prefillChunk() const;
  int64_t maxContext() const;
  int64_t vocabulary() const { return static_cast<int64_t>(logits_.size()); }
  // Packed bytes of the weights and bytes of the state.
  uint64_t packedWeightBytes() const { return weights_->packedBytes(); }
  // What the session holds (kf-compile --emit=stats predicts the same).
  const SessionMemory &memory() const { return memory_; }
  int64_t stateBytes() const;

private:
  Session() = default;
  // Fails, in one line, on a sequence longer than maxContext() after
  // `tokens` at position `first`, or a token outside the vocabulary.
  absl::Status check(std::span<const int32_t> tokens, int64_t first) const;
  // Runs `tokens` at positions first, first + 1, ...; the sequence is
  // then first + tokens long.
  absl::StatusOr<std::span<const float>>
  run(Executor &executor, std::span<const int32_t> tokens, int64_t first);

  std::string artifact_; // for messages
  ThreadPool *pool_ = nullptr;
  std::unique_ptr<PlanLibrary> library_;
  std::unique_ptr<PlanWeights> weights_;
  SessionMemory memory_;
  AlignedBytes state_;
  std::unique_ptr<Executor> prefill_, decode_;
  int64_t position_ = 0;
  std::vector<int64_t> positions_;
  std::vector<float> logits_;
  std::vector<int32_t> next_;
  std::vector<Output> outputs_;
  // Each output's bytes of one run, before they join its `bytes`.
  std::vector<std::vector<uint8_t>> runOutputs_;
};

} // namespace kf
