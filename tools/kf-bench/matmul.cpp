#include "matmul.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bandwidth.h"
#include "buffer.h"
#include "case_text.h"
#include "check.h"
#include "child_process.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "kf/runtime/thread_pool.h"
#include "machine.h"
#include "onednn.h"
#include "report.h"

namespace kf::bench {

namespace {

// Shapes beyond these are not matmuls anyone runs on a CPU, and keeping
// every product of two of them far inside 64 bits keeps the arithmetic on
// sizes simple.
constexpr int64_t kMaxDimension = int64_t{1} << 24;
constexpr int kMaxThreads = 1024;
constexpr int kBandwidthRuns = 3;
constexpr int kMaxRounds = 1000;

// Lets the threads of whatever ran last (oneDNN's OpenMP threads spin after
// a parallel region, the pool's after a task) go to sleep before the next
// measurement, so they do not take a core from it.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

// Row r of N(0, 1) values, drawn from its own seed so that no result
// depends on which thread draws it.
void randomRow(uint64_t seed, int64_t r, std::span<float> row) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15u + r);
  std::normal_distribution<float> normal;
  for (float &v : row)
    v = normal(rng);
}

// N x K weights of `f` in the runtime layout, quantized by kf::quantize from
// random rows on `threads` threads.
absl::StatusOr<std::vector<uint8_t>>
randomWeights(Format f, int64_t n, int64_t k, uint64_t seed, int threads) {
  const uint64_t bytes = *rowBytes(f, k);
  std::vector<uint8_t> weights(bytes * n);
  ThreadPool pool(threads);
  KF_RETURN_IF_ERROR(parallelRows(pool, n, [&](int64_t begin, int64_t end) {
    std::vector<float> row(k);
    for (int64_t r = begin; r < end; ++r) {
      randomRow(seed, r, row);
      KF_RETURN_IF_ERROR(quantize(f, row, {weights.data() + r * bytes, bytes}));
    }
    return absl::OkStatus();
  }));
  return weights;
}

// M activation rows: their floats, and the reference's quantization of them
// into `f`'s activation format.
struct Activations {
  std::vector<float> floats;
  std::vector<uint8_t> quantized;
};

absl::StatusOr<Activations> randomActivations(Format f, int64_t m, int64_t k,
                                              uint64_t seed) {
  const Format af = formatInfo(f).dotFormat;
  const uint64_t bytes = *rowBytes(af, k);
  Activations a;
  a.floats.resize(m * k);
  a.quantized.resize(m * bytes);
  for (int64_t i = 0; i < m; ++i) {
    std::span<float> row(a.floats.data() + i * k, k);
    randomRow(seed, i, row);
    KF_RETURN_IF_ERROR(
        quantizeActivation(af, row, {a.quantized.data() + i * bytes, bytes}));
  }
  return a;
}

// Copies of one weight matrix at distinct addresses, cycled call by call.
struct WeightSet {
  PageBuffer buffer;
  uint64_t matrixBytes = 0;
  int64_t copies = 0;

  const uint8_t *copy(int64_t call) const {
    return buffer.data() + (call % copies) * matrixBytes;
  }
};

// Hands out call numbers that continue from case to case, so that a case
// does not start with the copies the previous one has just read, still in
// cache, but with the one read longest ago.
class Cycle {
public:
  int64_t next() { return next_++; }

private:
  int64_t next_ = 0;
};

// Copies of `matrix` filling the cold set (one when hot), in `cache`'s
// buffer.
absl::StatusOr<WeightSet> makeWeightSet(const MatmulOptions &o,
                                        std::span<const uint8_t> matrix,
                                        uint64_t setBytes, BufferCache &cache) {
  WeightSet set;
  set.matrixBytes = matrix.size();
  set.copies = o.cold ? copiesIn(setBytes, set.matrixBytes) : 1;
  KF_ASSIGN_OR_RETURN(set.buffer, cache.take(set.matrixBytes * set.copies));
  // The caches tell matrices apart by address only, so copies of one
  // quantized matrix are as cold as distinct ones, and far cheaper to make
  // than quantizing gigabytes (the IQ quantizers take microseconds per
  // weight).
  for (int64_t c = 0; c < set.copies; ++c)
    std::memcpy(set.buffer.data() + c * set.matrixBytes, matrix.data(),
                set.matrixBytes);
  return set;
}

// The cases of a run in the order every round runs them; round 0 makes
// them, later rounds add their timings.
class Cases {
public:
  explicit Cases(int round) : round_(round) {}
  bool firstRound() const { return round_ == 0; }
  // The next case: `make`d in round 0, found in order later.
  CaseResult &next(absl::FunctionRef<CaseResult()> make,
                   std::vector<CaseResult> &all) {
    if (round_ == 0)
      all.push_back(make());
    return all[next_++];
  }

private:
  int round_;
  size_t next_ = 0;
};

// Records one round's calls of `r`.
void addRound(CaseResult &r, Timing timing, double otherCpus) {
  r.rounds.push_back(std::move(timing));
  r.otherCpus = std::max(r.otherCpus, otherCpus);
}

// One round of oneDNN's int8 and f32 matmuls on every thread count and M.
absl::Status runOnednn(const MatmulOptions &o, const RunInfo &info,
                       BufferCache &cache, Cases &cases,
                       std::vector<CaseResult> &rows) {
  for (OneDnnType type : {OneDnnType::Int8, OneDnnType::F32}) {
    std::unique_ptr<OneDnnMatmul> previous;
    Cycle cycle;
    for (int threads : o.threads) {
      KF_RETURN_IF_ERROR(setOnednnThreads(threads));
      for (int64_t m : o.m) {
        uint64_t seed = o.seed + static_cast<uint64_t>(m);
        KF_ASSIGN_OR_RETURN(
            std::unique_ptr<OneDnnMatmul> mm,
            OneDnnMatmul::create(type, m, o.k, o.n, o.cold ? info.set.bytes : 0,
                                 seed, std::move(previous), &cache));
        auto call = [&](int64_t) { return mm->run(cycle.next()); };
        KF_RETURN_IF_ERROR(call(0));
        KF_RETURN_IF_ERROR(mm->check(seed));
        LoadMeter load;
        load.start();
        KF_ASSIGN_OR_RETURN(Timing timing, timeCalls(o.reps, call));
        CaseResult &r = cases.next(
            [&] {
              CaseResult r;
              r.kernel = "onednn";
              r.format = onednnTypeName(type);
              r.implementation = mm->implementation();
              r.m = m;
              r.k = o.k;
              r.n = o.n;
              r.threads = threads;
              r.cold = o.cold;
              r.weightBytes = r.floorBytes = mm->weightBytes();
              r.copies = mm->copies();
              return r;
            },
            rows);
        addRound(r, std::move(timing), load.stop());
        previous = std::move(mm);
      }
    }
  }
  settle();
  return absl::OkStatus();
}

// oneDNN's cases in every round, limited to `isa`, timed in a child
// process: oneDNN takes its ISA limit once per process, and this one's
// oneDNN runs at its best. Returns the cases, as kernel onednn@ISA, and the
// ISA the child found in effect.
absl::StatusOr<std::pair<std::vector<CaseResult>, std::string>>
runOnednnLimited(const MatmulOptions &o, const RunInfo &info,
                 const std::string &isa) {
  if (onednnTouched())
    return absl::FailedPreconditionError(
        "--onednn-also needs a process that has not run oneDNN yet");
  KF_ASSIGN_OR_RETURN(
      std::string text, runInChild([&]() -> absl::StatusOr<std::string> {
        KF_RETURN_IF_ERROR(setOnednnMaxIsa(isa));
        BufferCache cache;
        std::vector<CaseResult> rows;
        for (int round = 0; round < o.rounds; ++round) {
          Cases cases(round);
          KF_RETURN_IF_ERROR(runOnednn(o, info, cache, cases, rows));
        }
        return absl::StrCat(onednnEffectiveIsa(), "\n", encodeCases(rows));
      }));
  size_t eol = text.find('\n');
  if (eol == std::string::npos)
    return absl::DataLossError("the oneDNN child process's answer is cut");
  std::string effective = text.substr(0, eol);
  KF_ASSIGN_OR_RETURN(std::vector<CaseResult> rows,
                      decodeCases(std::string_view(text).substr(eol + 1)));
  for (CaseResult &r : rows)
    r.kernel = absl::StrCat("onednn@", effective);
  return std::pair{std::move(rows), effective};
}

// What a format's cases read, made once before the rounds: the weights in
// the runtime layout, the activations per M, and each kernel's packed
// layouts of them.
struct PreparedKernel {
  const MatmulKernel *kernel;
  std::vector<uint8_t> packed;                         // empty: `weights`
  std::vector<std::vector<uint8_t>> packedActivations; // per M; or none
};

struct PreparedFormat {
  Format format;
  std::vector<uint8_t> weights;
  std::vector<Activations> activations; // per M
  std::vector<PreparedKernel> kernels;
};

// The error of `kernel` on `f` (at M = m, when m > 0).
absl::Status kernelError(const MatmulKernel &kernel, Format f, int64_t m,
                         const absl::Status &s) {
  return absl::Status(
      s.code(),
      absl::StrCat(kernel.name, " on ", std::string(formatInfo(f).name),
                   m > 0 ? absl::StrCat(", M = ", m) : "", ": ", s.message()));
}

absl::StatusOr<PreparedFormat>
prepareFormat(const MatmulOptions &o, Format f,
              std::span<const MatmulKernel> kernels) {
  PreparedFormat p;
  p.format = f;
  const int mostThreads = *std::max_element(o.threads.begin(), o.threads.end());
  KF_ASSIGN_OR_RETURN(p.weights,
                      randomWeights(f, o.n, o.k, o.seed, mostThreads));
  for (int64_t m : o.m) {
    KF_ASSIGN_OR_RETURN(Activations a,
                        randomActivations(f, m, o.k, o.seed + 1000 + m));
    p.activations.push_back(std::move(a));
  }
  for (const MatmulKernel &kernel : kernels) {
    if (!kernel.supports(f))
      continue;
    if (kernel.rowGroup < 1)
      return kernelError(kernel, f, 0,
                         absl::InvalidArgumentError("row_group is below 1"));
    PreparedKernel k{&kernel, {}, {}};
    if (kernel.packWeights) {
      absl::StatusOr<std::vector<uint8_t>> packed =
          kernel.packWeights(f, o.n, o.k, p.weights);
      if (!packed.ok())
        return kernelError(kernel, f, 0, packed.status());
      k.packed = *std::move(packed);
    }
    if (kernel.packActivations)
      for (size_t mi = 0; mi < o.m.size(); ++mi) {
        absl::StatusOr<std::vector<uint8_t>> packed =
            kernel.packActivations(f, o.m[mi], o.k, p.activations[mi].floats);
        if (!packed.ok())
          return kernelError(kernel, f, o.m[mi], packed.status());
        k.packedActivations.push_back(*std::move(packed));
      }
    p.kernels.push_back(std::move(k));
  }
  return p;
}

// One round of one kernel on one format, every thread count and M; each
// case checked against the reference before its first round is timed.
absl::Status runKernel(const MatmulOptions &o, const RunInfo &info,
                       const PreparedFormat &p, const PreparedKernel &pk,
                       BufferCache &cache, Cases &cases,
                       std::vector<CaseResult> &rows) {
  const MatmulKernel &kernel = *pk.kernel;
  const Format f = p.format;
  KF_ASSIGN_OR_RETURN(WeightSet set,
                      makeWeightSet(o,
                                    kernel.packWeights ? pk.packed : p.weights,
                                    info.set.bytes, cache));
  Cycle cycle;
  for (int threads : o.threads) {
    ThreadPool pool(threads);
    for (size_t mi = 0; mi < o.m.size(); ++mi) {
      const int64_t m = o.m[mi];
      std::vector<float> output(m * o.n);
      MatmulArgs args;
      args.format = f;
      args.m = m;
      args.n = o.n;
      args.k = o.k;
      args.activations = kernel.packActivations
                             ? pk.packedActivations[mi].data()
                             : p.activations[mi].quantized.data();
      args.out = output.data();
      auto call = [&](int64_t) {
        args.weights = set.copy(cycle.next());
        return parallelRows(
            pool, o.n,
            [&](int64_t begin, int64_t end) {
              return kernel.run(args, begin, end);
            },
            kernel.rowGroup);
      };
      std::fill(output.begin(), output.end(), 0.0f);
      if (absl::Status s = call(0); !s.ok())
        return kernelError(kernel, f, m, s);
      if (cases.firstRound()) {
        // Checked in the runtime layouts, which the golden reads.
        MatmulArgs reference = args;
        reference.weights = p.weights.data();
        reference.activations = p.activations[mi].quantized.data();
        if (absl::Status s = checkOutput(reference, kernel.agreement, threads,
                                         kernel.rowGroup, o.seed);
            !s.ok())
          return kernelError(kernel, f, m, s);
      }
      CaseResult &r = cases.next(
          [&] {
            CaseResult r;
            r.kernel = kernel.name;
            r.format = std::string(formatInfo(f).name);
            r.m = m;
            r.k = o.k;
            r.n = o.n;
            r.threads = threads;
            r.cold = o.cold;
            r.weightBytes = set.matrixBytes;
            r.floorBytes = static_cast<uint64_t>(p.weights.size());
            r.copies = set.copies;
            return r;
          },
          rows);
      LoadMeter load;
      load.start();
      absl::StatusOr<Timing> timing = timeCalls(o.reps, call);
      if (!timing.ok())
        return kernelError(kernel, f, m, timing.status());
      addRound(r, *std::move(timing), load.stop());
    }
  }
  cache.give(std::move(set.buffer));
  return absl::OkStatus();
}

} // namespace

double CaseResult::seconds() const {
  std::vector<double> medians;
  for (const Timing &t : rounds)
    medians.push_back(t.median());
  return median(medians);
}

double CaseResult::spread() const {
  double lo = 0, hi = 0;
  for (const Timing &t : rounds) {
    double m = t.median();
    lo = lo == 0 ? m : std::min(lo, m);
    hi = std::max(hi, m);
  }
  double s = seconds();
  return s > 0 ? (hi - lo) / s : 0;
}

double CaseResult::minCallSeconds() const {
  double lo = 0;
  for (const Timing &t : rounds)
    lo = lo == 0 ? t.min() : std::min(lo, t.min());
  return lo;
}

int64_t CaseResult::reps() const {
  return rounds.empty() ? 0 : static_cast<int64_t>(rounds[0].seconds.size());
}

bool CaseResult::beatsProbe() const {
  double s = seconds();
  return cold && s > 0 && dramMaxGbps > 0 && floorBytes / s / 1e9 > dramMaxGbps;
}

double CaseResult::gflops() const {
  double s = seconds();
  return s > 0 ? 2.0 * m * n * k / s / 1e9 : 0;
}
double CaseResult::weightGbps() const {
  double s = seconds();
  return s > 0 ? weightBytes / s / 1e9 : 0;
}
double CaseResult::floorSeconds() const {
  return dramGbps > 0 ? floorBytes / (dramGbps * 1e9) : 0;
}
double CaseResult::rooflinePercent() const {
  double s = seconds();
  return s > 0 ? 100 * floorSeconds() / s : 0;
}
double CaseResult::vsOnednnInt8() const {
  double s = seconds();
  return s > 0 ? onednnInt8Seconds / s : 0;
}
double CaseResult::vsOnednnF32() const {
  double s = seconds();
  return s > 0 ? onednnF32Seconds / s : 0;
}

std::optional<std::string> validate(const MatmulOptions &o) {
  if (o.formats.empty())
    return "--format lists no format";
  if (o.m.empty())
    return "--m lists no M";
  if (o.threads.empty())
    return "--threads lists no thread count";
  for (int64_t m : o.m)
    if (m < 1 || m > kMaxDimension)
      return absl::StrCat("M = ", m, " is out of range: expected 1 to ",
                          kMaxDimension);
  for (auto [name, v] : {std::pair{"K", o.k}, std::pair{"N", o.n}})
    if (v < 1 || v > kMaxDimension)
      return absl::StrCat(name, " = ", v, " is out of range: expected 1 to ",
                          kMaxDimension);
  for (int t : o.threads)
    if (t < 1 || t > kMaxThreads)
      return absl::StrCat("--threads ", t, " is out of range: expected 1 to ",
                          kMaxThreads);
  for (Format f : o.formats) {
    const FormatInfo &info = formatInfo(f);
    const std::string name(info.name);
    if (info.role != FormatRole::Weight)
      return absl::StrCat("format ", name, " is not a weight format");
    if (!hasQuantize(f))
      return absl::StrCat("format ", name, " has no reference quantizer");
    if (!hasDot(f))
      return absl::StrCat("format ", name, " has no reference dot product");
    const FormatInfo &act = formatInfo(info.dotFormat);
    if (!hasQuantizeActivation(act.format))
      return absl::StrCat("format ", name, "'s activation format ",
                          std::string(act.name), " has no quantizer");
    for (const FormatInfo *b : {&info, &act})
      if (o.k % b->blockElems != 0)
        return absl::StrCat("K = ", o.k, " is not a multiple of ",
                            std::string(b->name), "'s block of ", b->blockElems,
                            " elements (format ", name, ")");
  }
  if (!o.reps.reps && !(o.reps.minSeconds >= 0 && o.reps.minSeconds <= 3600))
    return "--min-time is out of range: expected 0 to 3600 seconds";
  if (o.rounds < 1 || o.rounds > kMaxRounds)
    return absl::StrCat("--rounds ", o.rounds,
                        " is out of range: expected 1 to ", kMaxRounds);
  if (o.reps.reps && (*o.reps.reps < 1 || *o.reps.reps > RepPolicy::kMaxReps))
    return absl::StrCat("--reps ", *o.reps.reps,
                        " is out of range: expected 1 to ",
                        RepPolicy::kMaxReps);
  return std::nullopt;
}

absl::Status runMatmul(const MatmulOptions &o,
                       std::span<const MatmulKernel> kernels,
                       std::ostream &out) {
  if (std::optional<std::string> problem = validate(o))
    return absl::InvalidArgumentError(*problem);
  RunInfo info;
  info.options = &o;
  info.l3Bytes = l3CacheBytes();
  info.set = defaultColdSet(info.l3Bytes);
  if (o.setBytes)
    info.set = {
        *o.setBytes,
        *o.setBytes < 4 * info.l3Bytes
            ? "--cold-mib; under 4 x L3, calls may find weights in cache"
            : "--cold-mib"};
  info.onednnVersion = onednnVersion();

  // The largest buffers, against the machine: a shape or set that cannot fit
  // is a one-line error, not an allocation failure halfway through.
  if (uint64_t memory = physicalMemoryBytes(); memory > 0) {
    const uint64_t f32Weights = 4 * uint64_t(o.k) * uint64_t(o.n);
    const uint64_t mMax = *std::max_element(o.m.begin(), o.m.end());
    const uint64_t rows = 4 * mMax * std::max(uint64_t(o.k), uint64_t(o.n));
    const uint64_t largest = std::max({info.set.bytes, f32Weights, rows});
    if (largest > memory / 2)
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the run needs buffers of %.1f GiB (cold set, f32 weights for "
          "oneDNN, or activations and outputs), more than half of this "
          "machine's %.1f GiB",
          largest / double(1 << 30), memory / double(1 << 30)));
  }
  for (Format f : o.formats)
    info.weightBytes.emplace_back(std::string(formatInfo(f).name),
                                  *rowBytes(f, o.k) * o.n);

  // oneDNN's second ISA first: its child process must be forked before this
  // one sets oneDNN's limit or starts a thread.
  std::vector<CaseResult> alsoRows;
  std::optional<std::string> also = o.onednnAlso;
  if (!also && cpuHasAmx()) {
    also = "avx512_core_vnni";
    info.onednnAlsoWhy = "where the best is AMX, by default";
  } else if (also) {
    info.onednnAlsoWhy = "--onednn-also";
  }
  if (also && *also != "none") {
    KF_ASSIGN_OR_RETURN(auto limited, runOnednnLimited(o, info, *also));
    alsoRows = std::move(limited.first);
    info.onednnAlsoIsa = std::move(limited.second);
  }
  if (o.onednnIsa)
    KF_RETURN_IF_ERROR(setOnednnMaxIsa(*o.onednnIsa));
  info.onednnIsa = onednnEffectiveIsa();

  BufferCache cache;
  // The DRAM probe on every thread count, in the cold set's buffer (written,
  // so that its pages are real and not the shared zero page).
  info.bandwidth.resize(o.threads.size());
  auto probe = [&]() -> absl::Status {
    KF_ASSIGN_OR_RETURN(PageBuffer buffer, cache.take(info.set.bytes));
    std::memset(buffer.data(), 0x5a, buffer.size());
    for (size_t t = 0; t < o.threads.size(); ++t) {
      ThreadPool pool(o.threads[t]);
      LoadMeter load;
      load.start();
      KF_ASSIGN_OR_RETURN(
          Bandwidth bw,
          measureReadBandwidth(pool, buffer.span(), kBandwidthRuns));
      bw.otherCpus = load.stop();
      info.bandwidth[t].threads = o.threads[t];
      info.bandwidth[t].probes.push_back(std::move(bw));
    }
    cache.give(std::move(buffer));
    settle();
    return absl::OkStatus();
  };
  KF_RETURN_IF_ERROR(probe());

  std::vector<PreparedFormat> formats;
  for (Format f : o.formats) {
    KF_ASSIGN_OR_RETURN(PreparedFormat p, prepareFormat(o, f, kernels));
    formats.push_back(std::move(p));
  }

  // Progress where a person watches; the output itself comes at the end,
  // when every round's figures are in.
  const bool progress = isatty(STDERR_FILENO);
  std::vector<CaseResult> rows;
  for (int round = 0; round < o.rounds; ++round) {
    if (progress)
      std::cerr << absl::StrFormat("kf-bench: round %d of %d\n", round + 1,
                                   o.rounds);
    Cases cases(round);
    KF_RETURN_IF_ERROR(runOnednn(o, info, cache, cases, rows));
    for (const PreparedFormat &p : formats)
      for (const PreparedKernel &k : p.kernels)
        KF_RETURN_IF_ERROR(runKernel(o, info, p, k, cache, cases, rows));
    KF_RETURN_IF_ERROR(probe());
  }
  // The limited oneDNN's rows after the best one's.
  auto afterOnednn = std::find_if(rows.begin(), rows.end(),
                                  [](auto &r) { return r.kernel != "onednn"; });
  rows.insert(afterOnednn, alsoRows.begin(), alsoRows.end());

  // The roofline of each thread count, and oneDNN's medians for the ratios.
  std::map<std::tuple<std::string, int, int64_t>, double> onednn;
  for (CaseResult &r : rows) {
    const BandwidthSeries &bw = *std::find_if(
        info.bandwidth.begin(), info.bandwidth.end(),
        [&](const BandwidthSeries &b) { return b.threads == r.threads; });
    r.dramGbps = bw.medianGbps();
    r.dramMaxGbps = bw.maxGbps();
    if (r.kernel == "onednn")
      onednn[{r.format, r.threads, r.m}] = r.seconds();
  }
  for (CaseResult &r : rows)
    if (r.kernel != "onednn") {
      r.onednnInt8Seconds = onednn.at(
          {std::string(onednnTypeName(OneDnnType::Int8)), r.threads, r.m});
      r.onednnF32Seconds = onednn.at(
          {std::string(onednnTypeName(OneDnnType::F32)), r.threads, r.m});
    }

  const int kernelWidth = kernelColumnWidth(rows);
  if (!o.json) {
    writeHeader(info, out);
    writeTableHead(kernelWidth, out);
  }
  for (const CaseResult &r : rows) {
    if (o.json)
      writeJson(r, info, out);
    else
      writeRow(r, kernelWidth, out);
  }
  if (!o.json)
    writeFooter(rows, out);
  out.flush();
  return absl::OkStatus();
}

} // namespace kf::bench
