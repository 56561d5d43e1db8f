#include "kf/runtime/session.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "kf/runtime/gguf.h"

namespace kf {

namespace {

// The run buffers of a model's plan, by the names kf-build-plan gives the
// function's arguments and results: tokens, positions, logits, next token;
// then, if any, outputs of names of their own (kf-compile --layer-outputs).
constexpr std::string_view kBuffers[] = {"arg0", "arg1", "result0", "result1"};
constexpr size_t kOutputs = std::size(kBuffers);

absl::Status checkBuffers(const std::string &artifact, const Plan &plan,
                          const Plan &prefill) {
  bool ok = plan.inputs.size() >= kOutputs;
  for (size_t i = 0; ok && i < kOutputs; ++i)
    ok = plan.inputs[i].name == kBuffers[i];
  if (!ok)
    return absl::InvalidArgumentError(absl::StrCat(
        artifact, ": plan ", plan.name,
        " does not take a model's tokens and positions and give its logits "
        "and next token"));
  if (plan.inputs.size() != prefill.inputs.size())
    return absl::InvalidArgumentError(
        absl::StrCat(artifact, ": plans ", prefill.name, " and ", plan.name,
                     " give different outputs"));
  for (size_t i = kOutputs; i < plan.inputs.size(); ++i)
    if (plan.inputs[i].name.starts_with("arg") ||
        plan.inputs[i].name != prefill.inputs[i].name)
      return absl::InvalidArgumentError(absl::StrCat(
          artifact, ": plan ", plan.name, "'s run buffer ", plan.inputs[i].name,
          " is not an output the prefill gives too"));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::unique_ptr<Session>>
Session::open(const std::string &artifact, const std::string &model,
              ThreadPool &pool, LoadProgress *progress) {
  absl::StatusOr<PlanLibrary> library = PlanLibrary::open(artifact);
  if (!library.ok())
    return library.status();
  std::unique_ptr<Session> session(new Session());
  session->pool_ = &pool;
  session->artifact_ = artifact;
  session->library_ = std::make_unique<PlanLibrary>(*std::move(library));
  size_t prefillIndex = 0, decodeIndex = 0;
  const Plan *prefill = session->library_->find("prefill", &prefillIndex);
  const Plan *decode = session->library_->find("decode", &decodeIndex);
  if (!prefill || !decode)
    return absl::InvalidArgumentError(
        absl::StrCat(artifact, ": a model's artifact holds plans named "
                               "prefill and decode"));
  for (const Plan *plan : {prefill, decode})
    if (absl::Status s = checkBuffers(artifact, *plan, *prefill); !s.ok())
      return s;

  // The plans bind only the file they were compiled from.
  if (!prefill->model.empty()) {
    absl::StatusOr<gguf::File> file = gguf::File::open(model);
    if (!file.ok())
      return file.status();
    if (std::string fingerprint = file->fingerprint();
        fingerprint != prefill->model)
      return absl::FailedPreconditionError(absl::StrCat(
          artifact, " was compiled for another model file (fingerprint ",
          prefill->model, "); ", model, " is ", fingerprint,
          ": compile it for this file with kf-compile -m"));
  }

  // The weights both plans read (by name and layout) are packed once.
  const Plan *plans[] = {prefill, decode};
  std::vector<std::vector<size_t>> index;
  Plan weights = mergeWeights(plans, index);
  absl::StatusOr<SessionMemory> memory = sessionMemory(plans);
  if (!memory.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(artifact, ": ", memory.status().message()));
  session->memory_ = *memory;
  absl::StatusOr<PlanWeights> packed =
      PlanWeights::load(weights, model, pool, progress);
  if (!packed.ok())
    return packed.status();
  session->weights_ = std::make_unique<PlanWeights>(*std::move(packed));
  std::vector<std::vector<std::span<const uint8_t>>> bound(2);
  for (size_t p = 0; p < 2; ++p)
    for (size_t w : index[p])
      bound[p].push_back(session->weights_->spans()[w]);

  const size_t stateBytes = static_cast<size_t>(prefill->stateBytes);
  session->state_ = allocateAligned(stateBytes);
  if (!session->state_)
    return absl::ResourceExhaustedError(absl::StrCat(
        artifact, ": cannot allocate a state of ", stateBytes, " bytes"));
  std::span<uint8_t> state(session->state_.get(), stateBytes);
  for (auto [p, plan, executor] : {std::tuple{0, prefill, &session->prefill_},
                                   std::tuple{1, decode, &session->decode_}}) {
    size_t libraryIndex = p == 0 ? prefillIndex : decodeIndex;
    absl::StatusOr<Executor> e = Executor::create(
        *plan, session->library_->kernels(libraryIndex), bound[p], state);
    if (!e.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(artifact, ": ", plan->name, ": ", e.status().message()));
    *executor = std::make_unique<Executor>(*std::move(e));
  }
  // Logits: result0's bytes for one row (the last token's).
  session->logits_.resize(
      static_cast<size_t>(prefill->inputs[2].bytes.at(1) / 4));
  session->next_.resize(1);
  for (size_t i = kOutputs; i < prefill->inputs.size(); ++i)
    session->outputs_.push_back({prefill->inputs[i].name, {}});
  session->runOutputs_.resize(session->outputs_.size());
  return session;
}

int64_t Session::prefillChunk() const { return prefill_->plan().maxRows; }

int64_t Session::maxContext() const { return prefill_->plan().maxContext; }

int64_t Session::stateBytes() const { return prefill_->plan().stateBytes; }

absl::StatusOr<std::span<const float>>
Session::prefill(std::span<const int32_t> tokens) {
  if (tokens.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(artifact_, ": a prompt of no tokens"));
  if (absl::Status s = check(tokens, 0); !s.ok())
    return s;
  // A prompt longer than the plan's rows runs in chunks, each continuing
  // the sequence where the one before left it.
  for (Output &output : outputs_)
    output.bytes.clear();
  absl::StatusOr<std::span<const float>> logits;
  for (size_t first = 0; first < tokens.size();
       first += static_cast<size_t>(prefillChunk())) {
    logits = run(
        *prefill_,
        tokens.subspan(first, std::min(tokens.size() - first,
                                       static_cast<size_t>(prefillChunk()))),
        static_cast<int64_t>(first));
    if (!logits.ok())
      return logits;
  }
  return logits;
}

absl::StatusOr<std::span<const float>> Session::decode(int32_t token) {
  if (position_ == 0)
    return absl::FailedPreconditionError(absl::StrCat(
        artifact_, ": a decode step continues a sequence: prefill first"));
  std::span<const int32_t> tokens(&token, 1);
  if (absl::Status s = check(tokens, position_); !s.ok())
    return s;
  for (Output &output : outputs_)
    output.bytes.clear();
  return run(*decode_, tokens, position_);
}

absl::Status Session::check(std::span<const int32_t> tokens,
                            int64_t first) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (maxContext() > 0 && first + n > maxContext())
    return absl::OutOfRangeError(
        absl::StrCat(artifact_, ": a sequence of ", first + n,
                     " tokens; the plan's caches hold ", maxContext(),
                     " (kf-compile --max-context)"));
  // A token outside the vocabulary would make the embedding read zeros:
  // the caller's error, said here.
  for (int32_t token : tokens)
    if (token < 0 || token >= vocabulary())
      return absl::InvalidArgumentError(
          absl::StrCat(artifact_, ": token ", token, " is outside the ",
                       vocabulary(), "-token vocabulary"));
  return absl::OkStatus();
}

absl::StatusOr<std::span<const float>>
Session::run(Executor &executor, std::span<const int32_t> tokens,
             int64_t first) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  positions_.resize(tokens.size());
  for (int64_t t = 0; t < n; ++t)
    positions_[t] = first + t;
  std::vector<int32_t> input(tokens.begin(), tokens.end());
  std::vector<std::span<uint8_t>> buffers = {
      {reinterpret_cast<uint8_t *>(input.data()), input.size() * 4},
      {reinterpret_cast<uint8_t *>(positions_.data()), positions_.size() * 8},
      {reinterpret_cast<uint8_t *>(logits_.data()), logits_.size() * 4},
      {reinterpret_cast<uint8_t *>(next_.data()), next_.size() * 4}};
  for (size_t i = 0; i < runOutputs_.size(); ++i) {
    runOutputs_[i].resize(
        static_cast<size_t>(executor.plan().inputs[kOutputs + i].bytes.at(n)));
    buffers.push_back(runOutputs_[i]);
  }
  // A run that fails midway leaves the state half written: the sequence
  // must start again.
  if (absl::Status s = executor.run(*pool_, n, buffers); !s.ok()) {
    position_ = 0;
    return absl::Status(
        s.code(),
        absl::StrCat(artifact_, ": ", executor.plan().name, ": ", s.message()));
  }
  position_ = first + n;
  for (size_t i = 0; i < outputs_.size(); ++i)
    outputs_[i].bytes.insert(outputs_[i].bytes.end(), runOutputs_[i].begin(),
                             runOutputs_[i].end());
  return std::span<const float>(logits_);
}

} // namespace kf
