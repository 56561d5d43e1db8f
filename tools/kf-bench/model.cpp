#include "model.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bandwidth.h"
#include "buffer.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/deepseek_v4/reference/weights.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/plan_library.h"
#include "kf/runtime/plan_weights.h"
#include "kf/runtime/session.h"
#include "kf/runtime/status_macros.h"
#include "machine.h"
#include "timing.h"

namespace kf::bench {

namespace {

namespace dsv4 = kf::deepseek_v4;

constexpr int kBandwidthRuns = 3;

double seconds(std::chrono::steady_clock::time_point from) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - from)
      .count();
}

// The bytes of weights one decode token reads: every weight of the decode
// plan once, but of an expert stack the share of experts a token routes to
// (its expert steps' slots of experts) and of a table looked up by token
// (the embedding) one row.
absl::StatusOr<double> decodeWeightBytes(const Plan &plan) {
  std::vector<double> share(plan.weights.size(), 1.0);
  for (const PlanStep &step : plan.steps) {
    if (step.kind == StepKind::Experts && !step.operands.empty())
      share[step.operands[0].index] =
          std::min(1.0, static_cast<double>(step.experts.slots) /
                            static_cast<double>(step.experts.experts));
    if (plan.kernels[step.kernel].starts_with("kf_embed_"))
      for (const PlanOperand &op : step.operands)
        if (op.kind == OperandKind::Weight)
          share[op.index] =
              1.0 / static_cast<double>(plan.weights[op.index].shape.front());
  }
  double bytes = 0;
  for (size_t w = 0; w < plan.weights.size(); ++w) {
    KF_ASSIGN_OR_RETURN(uint64_t b, planWeightBytes(plan.weights[w]));
    bytes += static_cast<double>(b) * share[w];
  }
  return bytes;
}

// Medians, least and most of a figure over the rounds.
struct Spread {
  std::vector<double> values;
  double median() const { return bench::median(values); }
  double min() const { return *std::min_element(values.begin(), values.end()); }
  double max() const { return *std::max_element(values.begin(), values.end()); }
};

struct ThreadFigures {
  int threads = 0;
  Spread prefill, decode; // tokens/s
  BandwidthSeries bandwidth;
  uint64_t packedBytes = 0;
  int64_t stateBytes = 0;
};

int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

} // namespace

absl::Status runModel(const ModelOptions &o, std::ostream &out) {
  KF_ASSIGN_OR_RETURN(PlanLibrary library, PlanLibrary::open(o.plan));
  const Plan *decodePlan = library.find("decode");
  const Plan *prefillPlan = library.find("prefill");
  if (!decodePlan || !prefillPlan)
    return absl::InvalidArgumentError(absl::StrCat(
        o.plan, ": a model's artifact holds plans named prefill and decode"));
  if (o.prompt < 1 || o.prompt > prefillPlan->maxRows ||
      o.prompt + o.decode > prefillPlan->maxContext)
    return absl::InvalidArgumentError(
        absl::StrCat("--prompt ", o.prompt, " and --decode ", o.decode,
                     ": the plans take "
                     "prompts of 1 to ",
                     prefillPlan->maxRows, " tokens and sequences of ",
                     prefillPlan->maxContext));
  KF_ASSIGN_OR_RETURN(double decodeBytes, decodeWeightBytes(*decodePlan));

  // The sessions, one per thread count, each run once untimed; what they
  // hold is the peak resident size, before the reference and the probe.
  KF_ASSIGN_OR_RETURN(dsv4::Config config, [&]() {
    absl::StatusOr<gguf::File> file = gguf::File::open(o.model);
    return file.ok() ? dsv4::Config::fromGguf(*file)
                     : absl::StatusOr<dsv4::Config>(file.status());
  }());
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> draw(
      0, static_cast<int32_t>(config.nVocab) - 1);
  std::vector<int32_t> prompt(static_cast<size_t>(o.prompt));
  for (int32_t &t : prompt)
    t = draw(rng);
  std::vector<ThreadFigures> figures(o.threads.size());
  std::vector<std::unique_ptr<ThreadPool>> pools;
  std::vector<std::unique_ptr<Session>> sessions;
  for (size_t t = 0; t < o.threads.size(); ++t) {
    pools.push_back(std::make_unique<ThreadPool>(o.threads[t]));
    KF_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::open(o.plan, o.model, *pools.back()));
    KF_RETURN_IF_ERROR(session->prefill(prompt).status());
    KF_RETURN_IF_ERROR(session->decode(prompt.front()).status());
    figures[t].threads = o.threads[t];
    figures[t].bandwidth.threads = o.threads[t];
    figures[t].packedBytes = session->packedWeightBytes();
    figures[t].stateBytes = session->stateBytes();
    sessions.push_back(std::move(session));
  }
  const int64_t rss = peakResidentBytes();

  // The reference on the same file, single-threaded, and the DRAM probe.
  KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(o.model));
  KF_ASSIGN_OR_RETURN(dsv4::reference::Weights weights,
                      dsv4::reference::Weights::fromGguf(config, file));
  Spread referencePrefill, referenceDecode;
  const uint64_t probeBytes = defaultColdSet(l3CacheBytes()).bytes;
  KF_ASSIGN_OR_RETURN(Buffer probeBuffer, Buffer::allocate(probeBytes));
  std::memset(probeBuffer.data(), 0x5a, probeBuffer.size());

  // Rounds over everything, the probe again in each, so that a figure and
  // its floor are measured under the same load.
  for (int round = 0; round < o.rounds; ++round) {
    for (size_t t = 0; t < o.threads.size(); ++t) {
      KF_ASSIGN_OR_RETURN(
          Bandwidth bw,
          measureReadBandwidth(*pools[t], probeBuffer.span(), kBandwidthRuns));
      figures[t].bandwidth.probes.push_back(std::move(bw));
      Session &session = *sessions[t];
      auto start = std::chrono::steady_clock::now();
      KF_ASSIGN_OR_RETURN(std::span<const float> logits,
                          session.prefill(prompt));
      figures[t].prefill.values.push_back(o.prompt / seconds(start));
      int32_t next = static_cast<int32_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
      std::vector<double> steps;
      for (int step = 0; step < o.decode; ++step) {
        start = std::chrono::steady_clock::now();
        KF_ASSIGN_OR_RETURN(logits, session.decode(next));
        steps.push_back(seconds(start));
        next = static_cast<int32_t>(
            std::max_element(logits.begin(), logits.end()) - logits.begin());
      }
      if (!steps.empty())
        figures[t].decode.values.push_back(1.0 / median(steps));
    }
    dsv4::reference::Model reference(
        weights, dsv4::reference::Options{.simulateQuantization = true});
    auto start = std::chrono::steady_clock::now();
    std::vector<float> logits = reference.prefill(prompt).logits;
    referencePrefill.values.push_back(o.prompt / seconds(start));
    std::vector<double> steps;
    for (int step = 0; step < std::min(o.decode, 8); ++step) {
      int32_t next = static_cast<int32_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
      start = std::chrono::steady_clock::now();
      logits = reference.decode(next).logits;
      steps.push_back(seconds(start));
    }
    if (!steps.empty())
      referenceDecode.values.push_back(1.0 / median(steps));
  }

  // Weights a last-level cache holds are not read from DRAM: the roofline
  // is then the cache's, which the probe does not measure.
  const uint64_t l3 = l3CacheBytes();
  const bool fitsInL3 = l3 > 0 && decodeBytes < static_cast<double>(l3);
  if (!o.json) {
    if (fitsInL3)
      out << absl::StrFormat(
          "note: the %.2f MiB of weights a decode token reads fit in the "
          "%.0f MiB L3, so decode may beat the DRAM floor: a model larger "
          "than the L3 is the roofline's test\n",
          decodeBytes / (1 << 20), l3 / double(1 << 20));
    out << absl::StrFormat(
        "kf-bench model: %s on %s: a prompt of %d tokens, %d decode steps, "
        "%d rounds (medians [min, max])\n",
        o.plan, o.model, o.prompt, o.decode, o.rounds);
    out << absl::StrFormat(
        "decode reads %.2f MiB of weights a token; barriers: prefill %d, "
        "decode %d a run; reference (1 thread): prefill %.1f, decode %.1f "
        "tokens/s\n",
        decodeBytes / (1 << 20), prefillPlan->barriers(),
        decodePlan->barriers(), referencePrefill.median(),
        referenceDecode.median());
    out << "threads  prefill tok/s             decode tok/s              "
           "DRAM GB/s  decode floor tok/s  of floor  x reference "
           "(prefill, decode)\n";
  }
  for (const ThreadFigures &f : figures) {
    const double gbps = f.bandwidth.medianGbps();
    const double floorTokens = gbps * 1e9 / decodeBytes;
    const double ofFloor = f.decode.median() / floorTokens;
    if (o.json) {
      out << absl::StrFormat(
          "{\"plan\": \"%s\", \"model\": \"%s\", \"threads\": %d, "
          "\"prompt\": %d, \"decode_steps\": %d, \"rounds\": %d, "
          "\"prefill_tokens_per_s\": %.3f, \"prefill_min\": %.3f, "
          "\"prefill_max\": %.3f, \"decode_tokens_per_s\": %.3f, "
          "\"decode_min\": %.3f, \"decode_max\": %.3f, \"dram_gbps\": %.3f, "
          "\"decode_weight_bytes\": %.0f, \"weights_fit_in_l3\": %s, "
          "\"decode_floor_tokens_per_s\": "
          "%.3f, \"of_floor\": %.4f, \"reference_prefill_tokens_per_s\": "
          "%.3f, \"reference_decode_tokens_per_s\": %.3f, "
          "\"prefill_barriers\": %d, \"decode_barriers\": %d, "
          "\"packed_weight_bytes\": %d, \"state_bytes\": %d, "
          "\"peak_rss_bytes\": %d}\n",
          o.plan, o.model, f.threads, o.prompt, o.decode, o.rounds,
          f.prefill.median(), f.prefill.min(), f.prefill.max(),
          f.decode.median(), f.decode.min(), f.decode.max(), gbps, decodeBytes,
          fitsInL3 ? "true" : "false", floorTokens, ofFloor,
          referencePrefill.median(), referenceDecode.median(),
          prefillPlan->barriers(), decodePlan->barriers(), f.packedBytes,
          f.stateBytes, rss);
      continue;
    }
    out << absl::StrFormat(
        "%7d  %8.1f [%8.1f, %8.1f]  %8.1f [%8.1f, %8.1f]  %9.1f  %18.1f  "
        "%7.1f%%  %7.1fx, %7.1fx\n",
        f.threads, f.prefill.median(), f.prefill.min(), f.prefill.max(),
        f.decode.median(), f.decode.min(), f.decode.max(), gbps, floorTokens,
        100 * ofFloor, f.prefill.median() / referencePrefill.median(),
        f.decode.median() / referenceDecode.median());
  }
  if (!o.json && !figures.empty())
    out << absl::StrFormat(
        "packed weights %.2f MiB, state %.2f MiB, peak resident %.2f MiB "
        "(the sessions, before the reference and the probe)\n",
        figures.front().packedBytes / double(1 << 20),
        figures.front().stateBytes / double(1 << 20), rss / double(1 << 20));
  return absl::OkStatus();
}

} // namespace kf::bench
