#include "bandwidth.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kf/runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kf::bench {

namespace {

// Each stream advances this many bytes per step: four 64-byte lines, so
// that even one stream keeps several loads in flight.
constexpr size_t kStep = 256;

// __builtin_prefetch's locality for each hint: 3 is prefetcht0 (into L1),
// 2 prefetcht1 (L2), 0 prefetchnta (non-temporal: past the caches where the
// CPU can). -1: no software prefetch.
enum Hint { kNone = -1, kNta = 0, kT1 = 2, kT0 = 3 };

// How far ahead each hint reaches, per stream: the kernels' own distances
// (1 KiB into L1, 4 KiB into L2; docs/codegen.md, "Weight prefetch").
constexpr int distance(int hint) { return hint == kT1 ? 4096 : 1024; }

constexpr std::string_view hintName(int hint) {
  switch (hint) {
  case kT0:
    return "t0";
  case kT1:
    return "t1";
  case kNta:
    return "nta";
  default:
    return "";
  }
}

template <int H> inline void prefetchStep(const uint8_t *p) {
  if constexpr (H != kNone)
    for (size_t b = 0; b < kStep; b += 64)
      __builtin_prefetch(p + distance(H) + b, 0, H);
}

using ReadFn = uint64_t (*)(const uint8_t *base, size_t stride, size_t len);

// The reads of one thread: `Streams` runs of `len` bytes each, `stride`
// bytes apart, read in lockstep. Returns a value that depends on every byte
// so that the loads cannot be removed. A prefetch past the buffer's end
// cannot fault.
template <int Streams, int H>
uint64_t readPortable(const uint8_t *base, size_t stride, size_t len) {
  uint64_t acc[Streams][4] = {};
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s) {
      const uint8_t *p = base + s * stride + o;
      prefetchStep<H>(p);
      for (size_t b = 0; b < kStep; b += 32)
        for (int l = 0; l < 4; ++l) {
          uint64_t v;
          std::memcpy(&v, p + b + 8 * l, 8);
          acc[s][l] += v;
        }
    }
  uint64_t r = 0;
  for (auto &a : acc)
    for (uint64_t v : a)
      r ^= v;
  return r;
}

#if defined(__x86_64__)
template <int Streams, int H>
__attribute__((target("avx2"))) uint64_t readAvx2(const uint8_t *base,
                                                  size_t stride, size_t len) {
  __m256i acc[Streams][4];
  for (auto &a : acc)
    for (auto &v : a)
      v = _mm256_setzero_si256();
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s) {
      const uint8_t *p = base + s * stride + o;
      prefetchStep<H>(p);
      for (int l = 0; l < 8; ++l)
        acc[s][l % 4] = _mm256_add_epi64(
            acc[s][l % 4],
            _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + 32 * l)));
    }
  __m256i r = _mm256_setzero_si256();
  for (auto &a : acc)
    for (auto &v : a)
      r = _mm256_xor_si256(r, v);
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), r);
  return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
}

template <int Streams, int H>
__attribute__((target("avx512f"))) uint64_t
readAvx512(const uint8_t *base, size_t stride, size_t len) {
  __m512i acc[Streams][4];
  for (auto &a : acc)
    for (auto &v : a)
      v = _mm512_setzero_si512();
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s) {
      const uint8_t *p = base + s * stride + o;
      prefetchStep<H>(p);
      for (int l = 0; l < 4; ++l)
        acc[s][l] = _mm512_add_epi64(acc[s][l], _mm512_loadu_si512(p + 64 * l));
    }
  __m512i r = _mm512_setzero_si512();
  for (auto &a : acc)
    for (auto &v : a)
      r = _mm512_xor_si512(r, v);
  // Stored and folded by hand: GCC 12's _mm512_reduce_* and extract
  // intrinsics trip -Wuninitialized inside its own headers.
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, r);
  uint64_t folded = 0;
  for (uint64_t v : lanes)
    folded ^= v;
  return folded;
}
#endif

constexpr int kStreams[] = {1, 2, 4, 8};
constexpr int kHints[] = {kNone, kT0, kT1, kNta};
constexpr size_t kPatterns = std::size(kStreams) * std::size(kHints);

// One entry per pattern, in readPatterns() order: stream counts outer.
template <template <int, int> class Reader> struct Table {
  template <size_t... I>
  static constexpr std::array<ReadFn, kPatterns>
  make(std::index_sequence<I...>) {
    return {Reader<kStreams[I / std::size(kHints)],
                   kHints[I % std::size(kHints)]>::fn...};
  }
  static constexpr std::array<ReadFn, kPatterns> fns =
      make(std::make_index_sequence<kPatterns>());
};

template <int S, int H> struct Portable {
  static constexpr ReadFn fn = readPortable<S, H>;
};
#if defined(__x86_64__)
template <int S, int H> struct Avx2 {
  static constexpr ReadFn fn = readAvx2<S, H>;
};
template <int S, int H> struct Avx512 {
  static constexpr ReadFn fn = readAvx512<S, H>;
};
#endif

std::string_view pick(std::span<const ReadFn> &fns) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    fns = Table<Avx512>::fns;
    return "avx512";
  }
  if (__builtin_cpu_supports("avx2")) {
    fns = Table<Avx2>::fns;
    return "avx2";
  }
#endif
  fns = Table<Portable>::fns;
  return "portable";
}

// Keeps the sums, so that the compiler cannot drop the loads.
std::atomic<uint64_t> sink;

} // namespace

std::string ReadPattern::name() const {
  std::string s = absl::StrCat(streams, streams > 1 ? " streams" : " stream");
  if (!prefetch.empty())
    absl::StrAppend(&s, " + prefetch", std::string(prefetch), " ",
                    prefetchBytes % 1024 == 0
                        ? absl::StrCat(prefetchBytes / 1024, " KiB")
                        : absl::StrCat(prefetchBytes, " B"));
  return s;
}

std::span<const ReadPattern> readPatterns() {
  static const std::array<ReadPattern, kPatterns> patterns = [] {
    std::array<ReadPattern, kPatterns> p;
    for (size_t i = 0; i < kPatterns; ++i) {
      int hint = kHints[i % std::size(kHints)];
      p[i] = {kStreams[i / std::size(kHints)], hintName(hint),
              hint == kNone ? 0 : distance(hint)};
    }
    return p;
  }();
  return patterns;
}

absl::StatusOr<Bandwidth> measureReadBandwidth(ThreadPool &pool,
                                               std::span<const uint8_t> buffer,
                                               int runs) {
  Bandwidth result;
  std::span<const ReadFn> fns;
  result.isa = pick(fns);
  result.runs = runs;
  std::span<const ReadPattern> patterns = readPatterns();
  const int threads = pool.size();
  const int mostStreams = kStreams[std::size(kStreams) - 1];
  if (buffer.size() < uint64_t{mostStreams} * kStep * threads)
    return absl::InvalidArgumentError(
        absl::StrCat("a bandwidth buffer of ", buffer.size(),
                     " bytes is too small for ", threads, " threads"));
  // Every thread reads `len` bytes from each of its streams.
  const size_t perThread = buffer.size() / threads;
  auto pass = [&](size_t p) {
    const int streams = patterns[p].streams;
    const size_t len = perThread / streams / kStep * kStep;
    pool.run([&](int t) {
      sink.fetch_xor(fns[p](buffer.data() + t * perThread, len, len),
                     std::memory_order_relaxed);
    });
    return uint64_t{len} * streams * threads;
  };
  // The patterns take turns, run after run, so that a spell of load from
  // elsewhere slows them alike instead of sinking one of them.
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> seconds(patterns.size());
  std::vector<uint64_t> bytes(patterns.size());
  for (int r = -1; r < runs; ++r)
    for (size_t p = 0; p < patterns.size(); ++p) {
      Clock::time_point start = Clock::now();
      bytes[p] = pass(p);
      double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (r >= 0) // the first round is untimed: it faults in code and TLBs
        seconds[p].push_back(s);
    }
  for (size_t p = 0; p < patterns.size(); ++p) {
    double m = median(seconds[p]);
    result.bytes = std::max(result.bytes, bytes[p]);
    result.figures.push_back({patterns[p], m > 0 ? bytes[p] / m / 1e9 : 0});
  }
  for (const PatternFigure &f : result.figures)
    if (f.gbps > result.gbps) {
      result.gbps = f.gbps;
      result.best = f.pattern.name();
    }
  return result;
}

double BandwidthSeries::medianGbps() const {
  std::vector<double> v;
  for (const Bandwidth &b : probes)
    v.push_back(b.gbps);
  return median(v);
}

double BandwidthSeries::minGbps() const {
  double m = 0;
  for (const Bandwidth &b : probes)
    m = m == 0 ? b.gbps : std::min(m, b.gbps);
  return m;
}

double BandwidthSeries::maxGbps() const {
  double m = 0;
  for (const Bandwidth &b : probes)
    m = std::max(m, b.gbps);
  return m;
}

} // namespace kf::bench
