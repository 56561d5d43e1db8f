// The pieces under the timings: the reference kernel against kf::dot, the
// output check, medians and the bandwidth probe.
#include <atomic>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "bandwidth.h"
#include "buffer.h"
#include "check.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/thread_pool.h"
#include "matmul.h"
#include "matmul_kernel.h"
#include "timing.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;

// M activation rows and N weight rows of K random values in `f` and its
// activation format.
struct Problem {
  Format format;
  int64_t m, n, k;
  std::vector<uint8_t> weights, activations;
  std::vector<float> out;

  Problem(Format f, int64_t m, int64_t n, int64_t k, uint64_t seed)
      : format(f), m(m), n(n), k(k) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<float> row(k);
    const Format af = formatInfo(f).dotFormat;
    weights.resize(*rowBytes(f, k) * n);
    activations.resize(*rowBytes(af, k) * m);
    for (int64_t j = 0; j < n; ++j) {
      for (float &v : row)
        v = normal(rng);
      const uint64_t b = *rowBytes(f, k);
      EXPECT_TRUE(quantize(f, row, {weights.data() + j * b, b}).ok());
    }
    for (int64_t i = 0; i < m; ++i) {
      for (float &v : row)
        v = normal(rng);
      const uint64_t b = *rowBytes(af, k);
      EXPECT_TRUE(
          quantizeActivation(af, row, {activations.data() + i * b, b}).ok());
    }
    out.assign(m * n, NAN);
  }

  MatmulArgs args() {
    return {format, m, n, k, weights.data(), activations.data(), out.data()};
  }

  absl::Status run(const MatmulKernel &kernel, ThreadPool &pool) {
    MatmulArgs a = args();
    return parallelRows(
        pool, n,
        [&](int64_t begin, int64_t end) { return kernel.run(a, begin, end); },
        kernel.rowGroup);
  }
};

class ReferenceKernel : public ::testing::TestWithParam<Format> {};

TEST_P(ReferenceKernel, EqualsDotBitForBit) {
  const Format f = GetParam();
  Problem p(f, 3, 11, 512, 5);
  ThreadPool pool(3);
  MatmulKernel kernel = referenceKernel();
  ASSERT_TRUE(kernel.supports(f));
  ASSERT_TRUE(p.run(kernel, pool).ok());
  const uint64_t wb = *rowBytes(f, p.k),
                 ab = *rowBytes(formatInfo(f).dotFormat, p.k);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      absl::StatusOr<float> want = dot(f, {p.weights.data() + j * wb, wb},
                                       {p.activations.data() + i * ab, ab});
      ASSERT_TRUE(want.ok());
      EXPECT_EQ(std::bit_cast<uint32_t>(p.out[i * p.n + j]),
                std::bit_cast<uint32_t>(*want))
          << i << "," << j;
    }
  EXPECT_TRUE(checkOutput(p.args(), Agreement::Exact, 3, 1, 1).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Formats, ReferenceKernel,
    ::testing::Values(Format::F32, Format::BF16, Format::Q8_0, Format::Q4_0,
                      Format::Q4_1, Format::MXFP4, Format::Q4_K, Format::Q6_K,
                      Format::IQ2_XXS, Format::FRACTAL64),
    [](const auto &info) { return std::string(formatInfo(info.param).name); });

TEST(ReferenceKernel, RejectsKOutsideTheBlocks) {
  Problem p(Format::Q8_0, 1, 2, 64, 1);
  MatmulArgs a = p.args();
  a.k = 48;
  EXPECT_THAT(referenceKernel().run(a, 0, 2).message(),
              HasSubstr("not a whole number of q8_0 blocks"));
}

TEST(CheckOutput, ExactCatchesOneUlp) {
  Problem p(Format::Q4_0, 2, 9, 256, 2);
  ThreadPool pool(2);
  ASSERT_TRUE(p.run(referenceKernel(), pool).ok());
  // Row 4 begins thread 1's block: a sampled row whatever the draw.
  p.out[1 * p.n + 4] = std::nextafter(p.out[1 * p.n + 4], INFINITY);
  absl::Status s = checkOutput(p.args(), Agreement::Exact, 2, 1, 1);
  EXPECT_THAT(s.message(),
              HasSubstr("kernel output (activation row 1, weight row 4)"));
}

TEST(CheckOutput, ReorderedWithinTheDerivedBound) {
  Problem p(Format::Q8_0, 2, 5, 1024, 3);
  ThreadPool pool(1);
  ASSERT_TRUE(p.run(referenceKernel(), pool).ok());
  // The bound for output (0, 0), recomputed from the decoded rows.
  std::vector<float> w(p.k), a(p.k);
  ASSERT_TRUE(dequantize(Format::Q8_0, {p.weights.data(), 34 * 32}, w).ok());
  ASSERT_TRUE(
      dequantize(Format::Q8_0, {p.activations.data(), 34 * 32}, a).ok());
  double magnitude = 0;
  for (int64_t x = 0; x < p.k; ++x)
    magnitude += std::fabs(double(w[x]) * a[x]);
  const double bound = reorderedTolerance(p.k, magnitude);
  ASSERT_GT(bound, 0);
  const float exact = p.out[0];
  p.out[0] = static_cast<float>(exact + 0.5 * bound);
  EXPECT_TRUE(checkOutput(p.args(), Agreement::Reordered, 1, 1, 1).ok());
  EXPECT_FALSE(checkOutput(p.args(), Agreement::Exact, 1, 1, 1).ok());
  p.out[0] = static_cast<float>(exact + 2 * bound);
  EXPECT_THAT(checkOutput(p.args(), Agreement::Reordered, 1, 1, 1).message(),
              HasSubstr("reordering bound"));
}

TEST(Timing, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({9, 1, 1, 1, 100}), 1);
}

TEST(Timing, RepsAndWarmUp) {
  std::vector<int64_t> calls;
  RepPolicy policy;
  policy.reps = 4;
  absl::StatusOr<Timing> t = timeCalls(policy, [&](int64_t c) {
    calls.push_back(c);
    return absl::OkStatus();
  });
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->seconds.size(), 4u);
  EXPECT_EQ(calls, (std::vector<int64_t>{0, 1, 2, 3, 4}));

  policy.reps.reset();
  policy.minSeconds = 0;
  t = timeCalls(policy, [](int64_t) { return absl::OkStatus(); });
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->seconds.size(), size_t{RepPolicy::kMinReps});

  t = timeCalls(policy, [](int64_t c) {
    return c == 2 ? absl::InternalError("third call") : absl::OkStatus();
  });
  EXPECT_EQ(t.status().message(), "third call");
}

TEST(BufferCache, HandsTheSameMemoryOnWhileItFits) {
  BufferCache cache;
  absl::StatusOr<PageBuffer> a = cache.take(3 << 20);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->size(), 3u << 20);
  EXPECT_GE(a->capacity(), a->size());
  a->data()[0] = 7;
  const uint8_t *memory = a->data();
  cache.give(*std::move(a));
  absl::StatusOr<PageBuffer> b = cache.take(1 << 20);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), memory);
  EXPECT_EQ(b->size(), 1u << 20);
  EXPECT_EQ(b->data()[0], 7);
  cache.give(*std::move(b));
  absl::StatusOr<PageBuffer> c = cache.take(uint64_t{64} << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->size(), uint64_t{64} << 20);
  EXPECT_EQ(c->data()[0], 0); // a new mapping
}

TEST(Bandwidth, EveryReadPatternMeasured) {
  absl::StatusOr<PageBuffer> buffer = PageBuffer::allocate(uint64_t{4} << 20);
  ASSERT_TRUE(buffer.ok());
  std::fill(buffer->data(), buffer->data() + buffer->size(), 1);
  ThreadPool pool(2);
  absl::StatusOr<Bandwidth> bw = measureReadBandwidth(pool, buffer->span(), 3);
  ASSERT_TRUE(bw.ok()) << bw.status();
  ASSERT_EQ(bw->figures.size(), readPatterns().size());
  // Stream counts 1 to 8, each with no software prefetch and three kinds.
  EXPECT_EQ(readPatterns().size(), 16u);
  double best = 0;
  std::string bestName;
  for (const PatternFigure &f : bw->figures) {
    EXPECT_GT(f.gbps, 0) << f.pattern.name();
    if (f.gbps > best) {
      best = f.gbps;
      bestName = f.pattern.name();
    }
  }
  EXPECT_EQ(bw->gbps, best);
  EXPECT_EQ(bw->best, bestName);
  EXPECT_EQ(bw->runs, 3);
  EXPECT_LE(bw->bytes, buffer->size());

  EXPECT_FALSE(measureReadBandwidth(pool, buffer->span().first(1024), 3).ok());
}

TEST(Bandwidth, PatternNames) {
  EXPECT_EQ((ReadPattern{1, "", 0}).name(), "1 stream");
  EXPECT_EQ((ReadPattern{4, "t0", 1024}).name(),
            "4 streams + prefetcht0 1 KiB");
  EXPECT_EQ((ReadPattern{2, "nta", 96}).name(), "2 streams + prefetchnta 96 B");
}

// The roofline over a run is the median of its probes; a kernel is flagged
// when it reads faster than the fastest of them.
TEST(Bandwidth, SeriesAndProbeFailures) {
  BandwidthSeries series;
  series.threads = 2;
  for (double g : {40.0, 44.0, 41.0, 39.0}) {
    series.probes.emplace_back();
    series.probes.back().gbps = g;
  }
  EXPECT_EQ(series.medianGbps(), 40.5);
  EXPECT_EQ(series.minGbps(), 39.0);
  EXPECT_EQ(series.maxGbps(), 44.0);

  CaseResult r;
  r.cold = true;
  r.floorBytes = 43'000'000; // read in 1 ms: 43 GB/s
  r.rounds.push_back(Timing{{1e-3, 1e-3}});
  r.rounds.push_back(Timing{{1.2e-3}});
  r.rounds.push_back(Timing{{0.9e-3}});
  r.dramGbps = series.medianGbps();
  r.dramMaxGbps = series.maxGbps();
  EXPECT_EQ(r.seconds(), 1e-3);
  EXPECT_NEAR(r.spread(), 0.3, 1e-12);
  EXPECT_EQ(r.reps(), 2);
  EXPECT_EQ(r.minCallSeconds(), 0.9e-3);
  EXPECT_GT(r.rooflinePercent(), 100); // beyond the median probe
  EXPECT_FALSE(r.beatsProbe());        // but within the fastest
  r.floorBytes = 45'000'000;
  EXPECT_TRUE(r.beatsProbe());
  r.cold = false; // hot weights come from the caches
  EXPECT_FALSE(r.beatsProbe());
}

} // namespace
} // namespace kf::bench
