#include "model.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bandwidth.h"
#include "buffer.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/parameters.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/deepseek_v4/reference/weights.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/host_cpu.h"
#include "kf/runtime/plan_library.h"
#include "kf/runtime/plan_weights.h"
#include "kf/runtime/progress_bar.h"
#include "kf/runtime/session.h"
#include "kf/runtime/status_macros.h"
#include "machine.h"
#include "ports.h"
#include "timing.h"

namespace kf::bench {

namespace {

namespace dsv4 = kf::deepseek_v4;

constexpr int kBandwidthRuns = 3;
// The int8 peak: rounds and seconds per run of kf-bench ports' timing.
constexpr int kPeakRounds = 5;
constexpr double kPeakSeconds = 0.02;

double seconds(std::chrono::steady_clock::time_point from) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - from)
      .count();
}

// What one token of a plan reads and computes: every weight once, but of an
// expert stack the share of experts a token routes to (its expert steps'
// slots of experts) and of a table looked up by token (the embedding) one
// row, which it reads but does not multiply.
struct TokenWeights {
  double bytes = 0;
  double multiplyAdds = 0;
  // Each weight's bytes and the share of it one token reads; a table's
  // share is a row.
  struct Part {
    double bytes, share;
    bool lookedUp;
  };
  std::vector<Part> parts;

  // The weight bytes a run of `tokens` tokens reads: every dense weight
  // once, a row of a table a token, and of an expert stack the experts any
  // of the tokens routes to: 1 − (1 − share)^tokens of them where each
  // token's experts are drawn independently and uniformly, as a synthetic
  // model's are (a trained router's tokens share experts more, and read
  // fewer).
  double bytesFor(int64_t tokens) const {
    double total = 0;
    const auto n = static_cast<double>(tokens);
    for (const Part &part : parts)
      total +=
          part.bytes * (part.lookedUp ? std::min(1.0, n * part.share)
                                      : 1.0 - std::pow(1.0 - part.share, n));
    return total;
  }
};

absl::StatusOr<TokenWeights> tokenWeights(const Plan &plan) {
  std::vector<double> share(plan.weights.size(), 1.0);
  const std::vector<bool> lookedUp = plan.tokenLookups();
  for (const PlanStep &step : plan.steps)
    if (step.kind == StepKind::Experts && !step.operands.empty())
      share[step.operands[0].index] =
          std::min(1.0, static_cast<double>(step.experts.slots) /
                            static_cast<double>(step.experts.experts));
  for (size_t w = 0; w < plan.weights.size(); ++w)
    if (lookedUp[w])
      share[w] = 1.0 / static_cast<double>(plan.weights[w].shape.front());
  TokenWeights token;
  for (size_t w = 0; w < plan.weights.size(); ++w) {
    KF_ASSIGN_OR_RETURN(uint64_t b, planWeightBytes(plan.weights[w]));
    token.bytes += static_cast<double>(b) * share[w];
    token.parts.push_back({static_cast<double>(b), share[w], lookedUp[w]});
    double elements = 1;
    for (int64_t d : plan.weights[w].shape)
      elements *= static_cast<double>(d);
    if (!lookedUp[w])
      token.multiplyAdds += elements * share[w];
  }
  return token;
}

// Medians, least and most of a figure over the rounds.
struct Spread {
  std::vector<double> values;
  double median() const { return bench::median(values); }
  double min() const { return *std::min_element(values.begin(), values.end()); }
  double max() const { return *std::max_element(values.begin(), values.end()); }
};

// What a step's time counts under: its kernel's op (the kernel name's words
// before its first parameter, e.g. "rms_norm" of kf_rms_norm_d4096_w_...),
// "experts" for an expert step, with the format of the packed weight it
// reads; and its layer ("blk.N" of the op's name, "outside the layers" for
// the embedding, the head and their hyper-connections).
std::string opKind(const Plan &plan, const PlanStep &step) {
  std::vector<absl::string_view> words =
      absl::StrSplit(plan.kernels[step.kernel], '_');
  std::string kind = step.kind == StepKind::Experts ? "experts"
                     : words.size() > 1             ? std::string(words[1])
                                                    : plan.kernels[step.kernel];
  for (size_t i = 2;
       step.kind != StepKind::Experts && i < words.size() &&
       !std::any_of(words[i].begin(), words[i].end(), absl::ascii_isdigit);
       ++i)
    absl::StrAppend(&kind, "_", words[i]);
  for (const PlanOperand &op : step.operands)
    if (op.kind == OperandKind::Weight && plan.weights[op.index].layout) {
      absl::StrAppend(&kind, " ",
                      toAbsl(formatInfo(plan.weights[op.index].format).name));
      break;
    }
  return kind;
}

std::string layerOf(const PlanStep &step) {
  if (!step.name.starts_with("blk."))
    return "outside the layers";
  size_t dot = step.name.find('.', 4);
  return step.name.substr(0, dot);
}

// Shares of the threads' time (work and barrier waits summed over the
// threads) by op kind and by layer, of one profiled run of a plan.
struct TimeShares {
  std::map<std::string, double> byKind, byLayer;
};

TimeShares timeShares(const Plan &plan, const StepTimes &times) {
  TimeShares shares;
  double total = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    total += times.work[s] + times.wait[s];
  if (total <= 0)
    return shares;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    shares.byKind[opKind(plan, step)] += times.work[s] / total;
    shares.byKind["(waiting at barriers)"] += times.wait[s] / total;
    shares.byLayer[layerOf(step)] += (times.work[s] + times.wait[s]) / total;
  }
  return shares;
}

struct ThreadFigures {
  int threads = 0;
  std::vector<Spread> prefill; // tokens/s, one per prompt
  Spread decode;               // tokens/s
  BandwidthSeries bandwidth;
  TimeShares prefillShares, decodeShares;
  StepTimes decodeSteps; // the profiled decode run's
};

// The weight bytes one run of `step` on one token row reads: of an expert
// stack the experts its slots route to; of a matmul, whose items are its
// output rows, those rows (a grouped linear's group starts at an offset,
// and its operand reaches to the weight's end); else its weight operands'
// extents. None for a step that reads no weight or looks a row up in a
// table.
std::optional<double> stepWeightBytes(const Plan &plan, const PlanStep &step,
                                      const std::vector<bool> &lookedUp) {
  if (step.kind == StepKind::Experts)
    return static_cast<double>(
               std::min(step.experts.slots, step.experts.experts)) *
           static_cast<double>(step.experts.expertBytes);
  const bool rowItems = step.items.perRow == 0 && step.items.fixed > 0;
  double bytes = 0;
  for (const PlanOperand &op : step.operands) {
    if (op.kind != OperandKind::Weight)
      continue;
    if (lookedUp[op.index])
      return std::nullopt;
    const auto extent = static_cast<double>(op.bytes.at(1));
    const PlanWeight &weight = plan.weights[op.index];
    // The plan was bound with these weights: their sizes are known.
    const auto whole = static_cast<double>(planWeightBytes(weight).value_or(0));
    bytes +=
        rowItems && weight.shape.size() >= 2 && whole > 0
            ? std::min(extent, whole * static_cast<double>(step.items.fixed) /
                                   static_cast<double>(weight.shape.end()[-2]))
            : extent;
  }
  if (bytes == 0)
    return std::nullopt;
  return bytes;
}

// One decode step's profile: its time and barrier wait a token (the
// threads' mean), and the rate it reads its weights at over that time.
struct StepFigure {
  std::string name, kind;
  bool barrier = false;
  double seconds = 0, waitSeconds = 0;
  std::optional<double> weightBytes;
  std::optional<double> gbps() const {
    if (!weightBytes || seconds <= 0)
      return std::nullopt;
    return *weightBytes / seconds / 1e9;
  }
};

std::vector<StepFigure> stepFigures(const Plan &plan, const StepTimes &times,
                                    int threads) {
  std::vector<StepFigure> figures;
  if (times.runs == 0)
    return figures;
  const std::vector<bool> lookedUp = plan.tokenLookups();
  const double per = static_cast<double>(times.runs) * threads;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    figures.push_back({step.name, opKind(plan, step), step.barrierBefore,
                       times.work[s] / per, times.wait[s] / per,
                       stepWeightBytes(plan, step, lookedUp)});
  }
  return figures;
}

int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// A figure of the reference for JSON: null when it did not run.
std::string jsonNumber(bool ran, double figure) {
  return ran ? absl::StrFormat("%.3f", figure) : "null";
}

std::string jsonSteps(const std::vector<StepFigure> &steps) {
  auto number = [](std::optional<double> v) {
    return v ? absl::StrFormat("%.6g", *v) : std::string("null");
  };
  return absl::StrCat(
      "[",
      absl::StrJoin(
          steps, ", ",
          [&](std::string *out, const StepFigure &step) {
            absl::StrAppend(
                out, absl::StrFormat(
                         "{\"name\": \"%s\", \"kind\": \"%s\", "
                         "\"barrier\": %s, \"seconds\": %.6g, "
                         "\"wait_seconds\": %.6g, "
                         "\"weight_bytes\": %s, \"gbps\": %s}",
                         step.name, step.kind, step.barrier ? "true" : "false",
                         step.seconds, step.waitSeconds,
                         number(step.weightBytes), number(step.gbps())));
          }),
      "]");
}

std::string jsonShares(const std::map<std::string, double> &shares) {
  return absl::StrCat("{",
                      absl::StrJoin(shares, ", ",
                                    [](std::string *out, const auto &share) {
                                      absl::StrAppend(
                                          out, absl::StrFormat("\"%s\": %.4f",
                                                               share.first,
                                                               share.second));
                                    }),
                      "}");
}

// The shares as rows (largest in the last column first), a column per
// thread count and plan.
void printShares(std::ostream &out, std::string_view title,
                 const std::vector<ThreadFigures> &figures, int prompt,
                 const std::map<std::string, double> TimeShares::*table) {
  std::vector<std::pair<std::string, const TimeShares *>> columns;
  for (const ThreadFigures &f : figures) {
    columns.push_back({absl::StrFormat("%dt prefill %d", f.threads, prompt),
                       &f.prefillShares});
    columns.push_back(
        {absl::StrFormat("%dt decode", f.threads), &f.decodeShares});
  }
  std::set<std::string> names;
  for (const auto &[name, shares] : columns)
    for (const auto &[row, share] : shares->*table)
      names.insert(row);
  std::vector<std::string> rows(names.begin(), names.end());
  auto shareOf = [&](const TimeShares *shares, const std::string &row) {
    auto found = (shares->*table).find(row);
    return found == (shares->*table).end() ? 0.0 : found->second;
  };
  // Largest first; equal shares by name.
  std::sort(rows.begin(), rows.end(),
            [&](const std::string &a, const std::string &b) {
              const double x = shareOf(columns.back().second, a),
                           y = shareOf(columns.back().second, b);
              return x != y ? x > y : a < b;
            });
  out << absl::StrFormat("%-28s", title);
  for (const auto &[name, shares] : columns)
    out << absl::StrFormat("  %16s", name);
  out << "\n";
  for (const std::string &row : rows) {
    out << absl::StrFormat("%-28s", row);
    for (const auto &[name, shares] : columns)
      out << absl::StrFormat("  %15.1f%%", 100 * shareOf(shares, row));
    out << "\n";
  }
}

} // namespace

absl::Status runModel(const ModelOptions &o, std::ostream &out) {
  KF_ASSIGN_OR_RETURN(PlanLibrary library, PlanLibrary::open(o.plan));
  const Plan *decodePlan = library.find("decode");
  const Plan *prefillPlan = library.find("prefill");
  if (!decodePlan || !prefillPlan)
    return absl::InvalidArgumentError(absl::StrCat(
        o.plan, ": a model's artifact holds plans named prefill and decode"));
  const int maxRows = static_cast<int>(prefillPlan->maxRows);
  std::vector<int> prompts = o.prompts;
  if (prompts.empty())
    for (int p : {1, 64, maxRows})
      if (p <= maxRows &&
          std::find(prompts.begin(), prompts.end(), p) == prompts.end())
        prompts.push_back(p);
  const int longest = *std::max_element(prompts.begin(), prompts.end());
  // A prompt longer than the plan's rows runs in chunks.
  if (longest + o.decode > prefillPlan->maxContext)
    return absl::InvalidArgumentError(absl::StrCat(
        "--prompt ", longest, " and --decode ", o.decode,
        ": the plans hold sequences of ", prefillPlan->maxContext, " tokens"));
  KF_ASSIGN_OR_RETURN(TokenWeights decodeToken, tokenWeights(*decodePlan));
  KF_ASSIGN_OR_RETURN(TokenWeights prefillToken, tokenWeights(*prefillPlan));
  const double decodeBytes = decodeToken.bytes;

  KF_ASSIGN_OR_RETURN(dsv4::Config config, [&]() {
    absl::StatusOr<gguf::File> file = gguf::File::open(o.model);
    return file.ok() ? dsv4::Config::fromGguf(*file)
                     : absl::StatusOr<dsv4::Config>(file.status());
  }());
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> draw(
      0, static_cast<int32_t>(config.nVocab) - 1);
  std::vector<int32_t> tokens(static_cast<size_t>(longest));
  for (int32_t &t : tokens)
    t = draw(rng);
  auto prompt = [&](int length) {
    return std::span<const int32_t>(tokens).first(static_cast<size_t>(length));
  };

  // One session, packed once, runs on each thread count's pool in turn,
  // once untimed; what it holds is the peak resident size, before the
  // reference and the probe.
  std::vector<ThreadFigures> figures(o.threads.size());
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int threads : o.threads) {
    pools.push_back(std::make_unique<ThreadPool>(
        threads,
        o.pin ? pinningOrder(hostCores(), threads) : std::vector<int>{}));
    if (pools.back()->pinFailures() > 0)
      return absl::FailedPreconditionError(
          absl::StrCat("--pin: ", pools.back()->pinFailures(), " of ", threads,
                       " threads could not be pinned to a CPU"));
  }
  LoadProgress progress;
  absl::StatusOr<std::unique_ptr<Session>> opened = [&] {
    ProgressBar bar(progress, "kf-bench: packing the weights");
    return Session::open(o.plan, o.model, *pools.back(), &progress);
  }();
  KF_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, std::move(opened));
  for (size_t t = 0; t < o.threads.size(); ++t) {
    session->setThreadPool(*pools[t]);
    KF_RETURN_IF_ERROR(session->prefill(prompt(longest)).status());
    KF_RETURN_IF_ERROR(session->decode(tokens.front()).status());
    figures[t].threads = o.threads[t];
    figures[t].bandwidth.threads = o.threads[t];
    figures[t].prefill.resize(prompts.size());
  }
  const int64_t rss = peakResidentBytes();

  // The reference on the same file, single-threaded, if its fp32 weights
  // fit beside the session; the DRAM probe; the int8 peak of one core.
  const uint64_t referenceBytes =
      static_cast<uint64_t>(dsv4::countParameters(config).total) * 4;
  const uint64_t memory = physicalMemoryBytes();
  std::optional<dsv4::reference::Weights> weights;
  if (memory == 0 ||
      referenceBytes + static_cast<uint64_t>(rss) <= memory / 4 * 3) {
    KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(o.model));
    KF_ASSIGN_OR_RETURN(weights,
                        dsv4::reference::Weights::fromGguf(config, file));
  }
  Spread referencePrefill, referenceDecode;
  const uint64_t probeBytes = defaultColdSet(l3CacheBytes()).bytes;
  KF_ASSIGN_OR_RETURN(PageBuffer probeBuffer, PageBuffer::allocate(probeBytes));
  std::memset(probeBuffer.data(), 0x5a, probeBuffer.size());
  // Off x86-64 there is no peak to compare with (the column says so).
  absl::StatusOr<Int8Peak> peak = measureInt8Peak(kPeakRounds, kPeakSeconds);

  // Decode steps after the longest prompt, each timed: its tokens/s is the
  // median step's.
  auto decodeRun =
      [&](std::span<const float> logits) -> absl::StatusOr<double> {
    std::vector<double> steps;
    for (int step = 0; step < o.decode; ++step) {
      int32_t next = static_cast<int32_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
      auto start = std::chrono::steady_clock::now();
      KF_ASSIGN_OR_RETURN(logits, session->decode(next));
      steps.push_back(seconds(start));
    }
    return 1.0 / median(steps);
  };

  // Rounds over everything, the probe again in each, so that a figure and
  // its floor are measured under the same load.
  for (int round = 0; round < o.rounds; ++round) {
    for (size_t t = 0; t < o.threads.size(); ++t) {
      KF_ASSIGN_OR_RETURN(
          Bandwidth bw,
          measureReadBandwidth(*pools[t], probeBuffer.span(), kBandwidthRuns));
      figures[t].bandwidth.probes.push_back(std::move(bw));
      session->setThreadPool(*pools[t]);
      std::span<const float> logits;
      for (size_t p = 0; p < prompts.size(); ++p) {
        auto start = std::chrono::steady_clock::now();
        KF_ASSIGN_OR_RETURN(logits, session->prefill(prompt(prompts[p])));
        figures[t].prefill[p].values.push_back(prompts[p] / seconds(start));
      }
      if (prompts.back() != longest) {
        KF_ASSIGN_OR_RETURN(logits, session->prefill(prompt(longest)));
      }
      KF_ASSIGN_OR_RETURN(double decode, decodeRun(logits));
      figures[t].decode.values.push_back(decode);
    }
    if (!weights)
      continue;
    dsv4::reference::Model reference(
        *weights, dsv4::reference::Options{.simulateQuantization = true});
    auto start = std::chrono::steady_clock::now();
    std::vector<float> logits = reference.prefill(prompt(longest)).logits;
    referencePrefill.values.push_back(longest / seconds(start));
    std::vector<double> steps;
    for (int step = 0; step < std::min(o.decode, 8); ++step) {
      int32_t next = static_cast<int32_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
      start = std::chrono::steady_clock::now();
      logits = reference.decode(next).logits;
      steps.push_back(seconds(start));
    }
    referenceDecode.values.push_back(1.0 / median(steps));
  }

  // Where the time goes: one profiled prefill of the longest prompt and
  // its decode steps on each thread count, after the timed rounds (the
  // clock reads cost a little).
  for (size_t t = 0; t < o.threads.size(); ++t) {
    session->setThreadPool(*pools[t]);
    session->setProfiling(true);
    KF_ASSIGN_OR_RETURN(std::span<const float> logits,
                        session->prefill(prompt(longest)));
    KF_RETURN_IF_ERROR(decodeRun(logits).status());
    figures[t].prefillShares =
        timeShares(*prefillPlan, session->prefillExecutor().profile());
    figures[t].decodeShares =
        timeShares(*decodePlan, session->decodeExecutor().profile());
    figures[t].decodeSteps = session->decodeExecutor().profile();
  }
  session->setProfiling(false);

  // Weights a last-level cache holds are not read from DRAM: the roofline
  // is then the cache's, which the probe does not measure.
  const uint64_t l3 = l3CacheBytes();
  const bool fitsInL3 = l3 > 0 && decodeBytes < static_cast<double>(l3);
  // A prefill's multiply-adds per second (one a token and weight it
  // multiplies) over the threads' peak.
  auto ofPeak = [&](double tokensPerSecond, int threads) {
    return peak.ok() ? prefillToken.multiplyAdds * tokensPerSecond /
                           (peak->macsPerSecond * threads)
                     : 0.0;
  };
  // A prefill's tokens/s if it only streamed the weights it reads at the
  // probed bandwidth: the floor a short prompt, which reads most experts
  // for a few tokens each, meets before the int8 peak.
  auto prefillFloor = [&](int tokens, double gbps) {
    return tokens * gbps * 1e9 / prefillToken.bytesFor(tokens);
  };
  const size_t longestIndex = static_cast<size_t>(
      std::max_element(prompts.begin(), prompts.end()) - prompts.begin());
  if (o.json) {
    for (const ThreadFigures &f : figures) {
      const double gbps = f.bandwidth.medianGbps();
      const double floorTokens = gbps * 1e9 / decodeBytes;
      std::vector<std::string> prefill;
      for (size_t p = 0; p < prompts.size(); ++p)
        prefill.push_back(absl::StrFormat(
            "{\"prompt\": %d, \"tokens_per_s\": %.3f, \"min\": %.3f, "
            "\"max\": %.3f, \"of_int8_peak\": %.4f, "
            "\"weight_bytes\": %.0f, \"dram_floor_tokens_per_s\": %.3f, "
            "\"of_dram_floor\": %.4f}",
            prompts[p], f.prefill[p].median(), f.prefill[p].min(),
            f.prefill[p].max(), ofPeak(f.prefill[p].median(), f.threads),
            prefillToken.bytesFor(prompts[p]), prefillFloor(prompts[p], gbps),
            f.prefill[p].median() / prefillFloor(prompts[p], gbps)));
      out << absl::StrFormat(
          "{\"plan\": \"%s\", \"model\": \"%s\", \"threads\": %d, "
          "\"decode_steps\": %d, \"rounds\": %d, \"prefill\": [%s], "
          "\"int8_peak_macs_per_s_per_thread\": %.4g, "
          "\"prefill_multiply_adds_per_token\": %.0f, "
          "\"decode_tokens_per_s\": %.3f, "
          "\"decode_min\": %.3f, \"decode_max\": %.3f, \"dram_gbps\": %.3f, "
          "\"decode_weight_bytes\": %.0f, \"weights_fit_in_l3\": %s, "
          "\"decode_floor_tokens_per_s\": %.3f, \"of_floor\": %.4f, "
          "\"reference_prefill_tokens_per_s\": %s, "
          "\"reference_decode_tokens_per_s\": %s, "
          "\"prefill_barriers\": %d, \"decode_barriers\": %d, "
          "\"prefill_time_by_kind\": %s, \"decode_time_by_kind\": %s, "
          "\"prefill_time_by_layer\": %s, \"decode_time_by_layer\": %s, "
          "\"packed_weight_bytes\": %d, \"state_bytes\": %d, "
          "\"peak_rss_bytes\": %d%s}\n",
          o.plan, o.model, f.threads, o.decode, o.rounds,
          absl::StrJoin(prefill, ", "), peak.ok() ? peak->macsPerSecond : 0.0,
          prefillToken.multiplyAdds, f.decode.median(), f.decode.min(),
          f.decode.max(), gbps, decodeBytes, fitsInL3 ? "true" : "false",
          floorTokens, f.decode.median() / floorTokens,
          jsonNumber(weights.has_value(), referencePrefill.median()),
          jsonNumber(weights.has_value(), referenceDecode.median()),
          prefillPlan->barriers(), decodePlan->barriers(),
          jsonShares(f.prefillShares.byKind), jsonShares(f.decodeShares.byKind),
          jsonShares(f.prefillShares.byLayer),
          jsonShares(f.decodeShares.byLayer), session->packedWeightBytes(),
          session->stateBytes(), rss,
          o.steps ? absl::StrCat(", \"decode_step_profile\": ",
                                 jsonSteps(stepFigures(
                                     *decodePlan, f.decodeSteps, f.threads)))
                  : std::string());
    }
    return absl::OkStatus();
  }

  if (fitsInL3)
    out << absl::StrFormat(
        "note: the %.2f MiB of weights a decode token reads fit in the "
        "%.0f MiB L3, so decode may beat the DRAM floor: a model larger "
        "than the L3 is the roofline's test\n",
        decodeBytes / (1 << 20), l3 / double(1 << 20));
  out << absl::StrFormat(
      "kf-bench model: %s on %s: prompts of %s tokens, %d decode steps after "
      "the longest, %d rounds (medians [min, max])\n",
      o.plan, o.model, absl::StrJoin(prompts, ", "), o.decode, o.rounds);
  out << absl::StrFormat(
      "a token multiplies %.3g weights; decode reads %.2f MiB of weights a "
      "token; barriers: prefill %d, decode %d a run\n",
      prefillToken.multiplyAdds, decodeBytes / (1 << 20),
      prefillPlan->barriers(), decodePlan->barriers());
  if (peak.ok())
    out << absl::StrFormat(
        "int8 peak: %.1f G multiply-adds/s a thread (%.2f %s a cycle at "
        "%.2f GHz, %d each)\n",
        peak->macsPerSecond / 1e9, peak->perCycle, peak->instruction, peak->ghz,
        peak->macsPerInstruction);
  else
    out << "int8 peak: not measured (" << peak.status().message() << ")\n";
  if (weights)
    out << absl::StrFormat(
        "reference (1 thread): prefill %d tokens %.1f, decode %.1f "
        "tokens/s\n",
        longest, referencePrefill.median(), referenceDecode.median());
  else
    out << absl::StrFormat(
        "reference: not run, its fp32 weights (%.1f GiB) and the session "
        "(%.1f GiB) would exceed 3/4 of the %.1f GiB of memory\n",
        referenceBytes / double(1 << 30), rss / double(1 << 30),
        memory / double(1 << 30));
  out << "threads  prompt  prefill tok/s             of int8 peak  "
         "weights read MiB  DRAM floor tok/s  of floor\n";
  for (const ThreadFigures &f : figures)
    for (size_t p = 0; p < prompts.size(); ++p) {
      const double floor = prefillFloor(prompts[p], f.bandwidth.medianGbps());
      out << absl::StrFormat(
          "%7d  %6d  %8.1f [%8.1f, %8.1f]  %11.1f%%  %16.2f  %16.1f  "
          "%7.1f%%\n",
          f.threads, prompts[p], f.prefill[p].median(), f.prefill[p].min(),
          f.prefill[p].max(), 100 * ofPeak(f.prefill[p].median(), f.threads),
          prefillToken.bytesFor(prompts[p]) / (1 << 20), floor,
          100 * f.prefill[p].median() / floor);
    }
  out << "threads  decode tok/s              DRAM GB/s  decode floor tok/s  "
         "of floor  x reference (prefill, decode)\n";
  for (const ThreadFigures &f : figures) {
    const double gbps = f.bandwidth.medianGbps();
    const double floorTokens = gbps * 1e9 / decodeBytes;
    out << absl::StrFormat(
        "%7d  %8.1f [%8.1f, %8.1f]  %9.1f  %18.1f  %7.1f%%  %s\n", f.threads,
        f.decode.median(), f.decode.min(), f.decode.max(), gbps, floorTokens,
        100 * f.decode.median() / floorTokens,
        weights ? absl::StrFormat("%7.1fx, %7.1fx",
                                  f.prefill[longestIndex].median() /
                                      referencePrefill.median(),
                                  f.decode.median() / referenceDecode.median())
                : std::string("-"));
  }
  out << "where the time goes (share of the threads' time; one profiled "
         "run):\n";
  printShares(out, "op kind", figures, longest, &TimeShares::byKind);
  printShares(out, "layer", figures, longest, &TimeShares::byLayer);
  if (o.steps)
    for (const ThreadFigures &f : figures) {
      out << absl::StrFormat(
          "decode steps, %d threads (one profiled run; time a token, the "
          "threads' mean; GB/s: the step's weight bytes over its time)\n",
          f.threads);
      out << " step  name                          kind                    "
             "barrier       us  wait us  weights MiB    GB/s\n";
      const std::vector<StepFigure> steps =
          stepFigures(*decodePlan, f.decodeSteps, f.threads);
      for (size_t s = 0; s < steps.size(); ++s) {
        const StepFigure &step = steps[s];
        const std::optional<double> gbps = step.gbps();
        const std::string line = absl::StrFormat(
            "%5d  %-28s  %-22s  %7s  %7.1f  %7.1f  %11s  %6s", s, step.name,
            step.kind, step.barrier ? "yes" : "", step.seconds * 1e6,
            step.waitSeconds * 1e6,
            step.weightBytes
                ? absl::StrFormat("%.2f", *step.weightBytes / (1 << 20))
                : std::string(),
            gbps ? absl::StrFormat("%.1f", *gbps) : std::string());
        out << absl::StripTrailingAsciiWhitespace(line) << "\n";
      }
    }
  out << absl::StrFormat(
      "packed weights %.2f MiB, state %.2f MiB, peak resident %.2f MiB "
      "(the session, before the reference and the probe)\n",
      session->packedWeightBytes() / double(1 << 20),
      session->stateBytes() / double(1 << 20), rss / double(1 << 20));
  return absl::OkStatus();
}

} // namespace kf::bench
