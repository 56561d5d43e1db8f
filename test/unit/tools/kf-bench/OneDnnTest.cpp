// kf-bench's oneDNN matmuls compute the product of the inputs they report,
// on every weight copy, and hand their weight set on between Ms.
#include <cmath>
#include <cstring>

#include "onednn.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

template <typename T> T at(std::span<const uint8_t> bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

TEST(OneDnnMatmul, Int8IsTheExactProductOnEveryCopy) {
  const int64_t m = 5, k = 67, n = 13;
  ASSERT_TRUE(setOnednnThreads(2).ok());
  // A 64 KiB set: a few copies, however oneDNN pads its layout.
  auto mm = OneDnnMatmul::create(OneDnnType::Int8, m, k, n, 64 << 10, 1);
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_GE((*mm)->copies(), 2);
  EXPECT_GE((*mm)->weightBytes(), uint64_t(k * n));
  for (int64_t call = 0; call < (*mm)->copies(); ++call) {
    ASSERT_TRUE((*mm)->run(call).ok());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t want = 0;
        for (int64_t x = 0; x < k; ++x)
          want += int32_t(at<uint8_t>((*mm)->a(), i * k + x)) *
                  int32_t(at<int8_t>((*mm)->b(), x * n + j));
        ASSERT_EQ(at<int32_t>((*mm)->c(), i * n + j), want)
            << "copy " << call << " (" << i << ", " << j << ")";
      }
    EXPECT_TRUE((*mm)->check(3).ok());
  }
  EXPECT_FALSE((*mm)->implementation().empty());
}

TEST(OneDnnMatmul, F32WithinRoundoff) {
  const int64_t m = 3, k = 129, n = 7;
  auto mm = OneDnnMatmul::create(OneDnnType::F32, m, k, n, 0, 2);
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_EQ((*mm)->copies(), 1);
  ASSERT_TRUE((*mm)->run(0).ok());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t x = 0; x < k; ++x) {
        double p = double(at<float>((*mm)->a(), i * k + x)) *
                   at<float>((*mm)->b(), x * n + j);
        want += p;
        magnitude += std::fabs(p);
      }
      EXPECT_NEAR(at<float>((*mm)->c(), i * n + j), want,
                  k * std::ldexp(1.0, -24) * magnitude);
    }
  EXPECT_TRUE((*mm)->check(4).ok());
}

TEST(OneDnnMatmul, CheckCatchesAWrongProduct) {
  auto mm = OneDnnMatmul::create(OneDnnType::Int8, 1, 32, 1, 0, 5);
  ASSERT_TRUE(mm.ok());
  // Never run: C is still all zeros, which the random product is not.
  EXPECT_THAT((*mm)->check(1).message(),
              ::testing::HasSubstr("oneDNN u8s8s32 output (0, 0) is 0"));
}

TEST(OneDnnMatmul, WeightSetHandedOnWhenTheLayoutAgrees) {
  const int64_t k = 64, n = 32;
  auto first = OneDnnMatmul::create(OneDnnType::Int8, 1, k, n, 64 << 10, 1);
  ASSERT_TRUE(first.ok());
  std::vector<uint8_t> b((*first)->b().begin(), (*first)->b().end());
  int64_t copies = (*first)->copies();
  auto second = OneDnnMatmul::create(OneDnnType::Int8, 1, k, n, 64 << 10, 2,
                                     std::move(*first));
  ASSERT_TRUE(second.ok());
  // Same M, so the same layout: the set, and the plain weights it holds,
  // are the first one's.
  EXPECT_EQ((*second)->copies(), copies);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), (*second)->b().begin()));
  ASSERT_TRUE((*second)->run(1).ok());
  EXPECT_TRUE((*second)->check(1).ok());
}

} // namespace
} // namespace kf::bench
