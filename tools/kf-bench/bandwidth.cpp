#include "bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kf::bench {

namespace {

// Each stream advances this many bytes per step: four 64-byte lines, so
// that even one stream keeps several loads in flight.
constexpr size_t kStep = 256;

using ReadFn = uint64_t (*)(const uint8_t *base, size_t stride, size_t len);

// The reads of one thread: `streams` runs of `len` bytes each, `stride`
// bytes apart, read in lockstep. Returns a value that depends on every byte
// so that the loads cannot be removed.
template <int Streams>
uint64_t read_portable(const uint8_t *base, size_t stride, size_t len) {
  uint64_t acc[Streams][4] = {};
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s)
      for (size_t b = 0; b < kStep; b += 32)
        for (int l = 0; l < 4; ++l) {
          uint64_t v;
          std::memcpy(&v, base + s * stride + o + b + 8 * l, 8);
          acc[s][l] += v;
        }
  uint64_t r = 0;
  for (auto &a : acc)
    for (uint64_t v : a)
      r ^= v;
  return r;
}

#if defined(__x86_64__)
template <int Streams>
__attribute__((target("avx2"))) uint64_t read_avx2(const uint8_t *base,
                                                   size_t stride, size_t len) {
  __m256i acc[Streams][4];
  for (auto &a : acc)
    for (auto &v : a)
      v = _mm256_setzero_si256();
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s) {
      const uint8_t *p = base + s * stride + o;
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

template <int Streams>
__attribute__((target("avx512f"))) uint64_t
read_avx512(const uint8_t *base, size_t stride, size_t len) {
  __m512i acc[Streams][4];
  for (auto &a : acc)
    for (auto &v : a)
      v = _mm512_setzero_si512();
  for (size_t o = 0; o < len; o += kStep)
    for (int s = 0; s < Streams; ++s) {
      const uint8_t *p = base + s * stride + o;
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

struct Variant {
  int streams;
  ReadFn read;
};

std::string_view pick(std::vector<Variant> &variants) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    variants = {{1, read_avx512<1>}, {2, read_avx512<2>}, {4, read_avx512<4>}};
    return "avx512";
  }
  if (__builtin_cpu_supports("avx2")) {
    variants = {{1, read_avx2<1>}, {2, read_avx2<2>}, {4, read_avx2<4>}};
    return "avx2";
  }
#endif
  variants = {
      {1, read_portable<1>}, {2, read_portable<2>}, {4, read_portable<4>}};
  return "portable";
}

// Keeps the sums, so that the compiler cannot drop the loads.
std::atomic<uint64_t> sink;

} // namespace

absl::StatusOr<Bandwidth>
measure_read_bandwidth(ThreadPool &pool, std::span<const uint8_t> buffer,
                       int runs) {
  Bandwidth result;
  std::vector<Variant> variants;
  result.isa = pick(variants);
  result.runs = runs;
  const int threads = pool.size();
  if (buffer.size() < uint64_t{4} * kStep * threads)
    return absl::InvalidArgumentError(
        absl::StrCat("a bandwidth buffer of ", buffer.size(),
                     " bytes is too small for ", threads, " threads"));
  // Every thread reads `len` bytes from each of its streams.
  const size_t per_thread = buffer.size() / threads;
  auto pass = [&](const Variant &v) {
    const size_t len = per_thread / v.streams / kStep * kStep;
    pool.run([&](int t) {
      sink.fetch_xor(v.read(buffer.data() + t * per_thread, len, len),
                     std::memory_order_relaxed);
    });
    return uint64_t{len} * v.streams * threads;
  };
  // The stream counts take turns, run after run, so that a spell of load
  // from elsewhere slows them alike instead of sinking one of them.
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> seconds(variants.size());
  std::vector<uint64_t> bytes(variants.size());
  for (int r = -1; r < runs; ++r)
    for (size_t v = 0; v < variants.size(); ++v) {
      Clock::time_point start = Clock::now();
      bytes[v] = pass(variants[v]);
      double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (r >= 0) // the first round is untimed: it faults in code and TLBs
        seconds[v].push_back(s);
    }
  for (size_t v = 0; v < variants.size(); ++v) {
    double m = median(seconds[v]);
    result.bytes = std::max(result.bytes, bytes[v]);
    result.figures.push_back(
        {variants[v].streams, m > 0 ? bytes[v] / m / 1e9 : 0});
  }
  for (const StreamFigure &f : result.figures)
    result.gbps = std::max(result.gbps, f.gbps);
  return result;
}

} // namespace kf::bench
