// MoE expert dispatch: slots grouped by expert in a fixed order, and one
// kernel call per non-empty bucket that reads the bucket's activation rows
// side by side and the expert's weights, with its results scattered back to
// the slots. The kernel here is a stand-in that records its calls and writes
// values that say which weight bytes and activation row it read.
#include <string>
#include <vector>

#include "kf/runtime/moe_dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<int64_t> bucketOf(const ExpertBuckets &buckets, int64_t e) {
  std::span<const int64_t> b = buckets.bucket(e);
  return {b.begin(), b.end()};
}

TEST(MoeDispatch, BucketsHoldSlotsByExpertInSlotOrder) {
  // Three tokens, two slots each: token 0 -> {2, 0}, 1 -> {0, 1}, 2 -> {2, 3}.
  const std::vector<int32_t> ids = {2, 0, 0, 1, 2, 3};
  absl::StatusOr<ExpertBuckets> buckets = bucketByExpert(ids, 5);
  ASSERT_TRUE(buckets.ok()) << buckets.status();
  EXPECT_EQ(buckets->experts(), 5);
  EXPECT_THAT(buckets->begin, ElementsAre(0, 2, 3, 5, 6, 6));
  EXPECT_THAT(bucketOf(*buckets, 0), ElementsAre(1, 2));
  EXPECT_THAT(bucketOf(*buckets, 1), ElementsAre(3));
  EXPECT_THAT(bucketOf(*buckets, 2), ElementsAre(0, 4));
  EXPECT_THAT(bucketOf(*buckets, 3), ElementsAre(5));
  EXPECT_THAT(bucketOf(*buckets, 4), IsEmpty()); // no token chose it
}

TEST(MoeDispatch, OneTokenFillsBucketsOfOne) {
  // A decode step: one token, k distinct experts.
  absl::StatusOr<ExpertBuckets> buckets =
      bucketByExpert(std::vector<int32_t>{7, 1, 4, 0}, 8);
  ASSERT_TRUE(buckets.ok()) << buckets.status();
  for (int64_t e = 0; e < 8; ++e)
    EXPECT_LE(buckets->bucket(e).size(), 1u) << "expert " << e;
  EXPECT_THAT(buckets->slots, ElementsAre(3, 1, 2, 0));
}

TEST(MoeDispatch, NoSlotsMakeEmptyBuckets) {
  absl::StatusOr<ExpertBuckets> buckets =
      bucketByExpert(std::span<const int32_t>(), 3);
  ASSERT_TRUE(buckets.ok()) << buckets.status();
  EXPECT_THAT(buckets->begin, ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(buckets->slots, IsEmpty());
}

TEST(MoeDispatch, RefusesIdsOutsideTheExperts) {
  absl::StatusOr<ExpertBuckets> buckets =
      bucketByExpert(std::vector<int32_t>{0, 3, -1}, 3);
  ASSERT_FALSE(buckets.ok());
  EXPECT_THAT(std::string(buckets.status().message()),
              HasSubstr("slot 1 routes to expert 3, outside [0, 3)"));
  EXPECT_FALSE(bucketByExpert(std::vector<int32_t>{}, 0).ok());
}

// The stand-in kernel: expert e's "packed weights" are n bytes e * 16 + i;
// an activation row's first byte is its row index. It writes
// y[j][i] = w[i] * 1000 + x_j[0] and records (expert, m) per call.
constexpr int64_t kN = 3, kRowBytes = 4, kExpertBytes = kN;
const uint8_t *gWeights = nullptr;
std::vector<std::pair<int64_t, int64_t>> gCalls;

void fakeKernel(const void *packedW, const void *packedX, float *y, int64_t ldy,
                int64_t m, int64_t nBegin, int64_t nEnd) {
  const auto *w = static_cast<const uint8_t *>(packedW);
  const auto *x = static_cast<const uint8_t *>(packedX);
  gCalls.emplace_back((w - gWeights) / kExpertBytes, m);
  for (int64_t j = 0; j < m; ++j)
    for (int64_t i = nBegin; i < nEnd; ++i)
      y[j * ldy + i] = static_cast<float>(w[i] * 1000 + x[j * kRowBytes]);
}

struct Stack {
  explicit Stack(int64_t experts) : bytes(experts * kExpertBytes) {
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t i = 0; i < kN; ++i)
        bytes[e * kN + i] = static_cast<uint8_t>(e * 16 + i);
    gWeights = bytes.data();
    gCalls.clear();
  }
  ExpertMatmul matmul() const {
    return {fakeKernel, bytes.data(), kExpertBytes, kN};
  }
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> activationRows(int64_t rows) {
  std::vector<uint8_t> x(static_cast<size_t>(rows * kRowBytes), 0xee);
  for (int64_t r = 0; r < rows; ++r)
    x[r * kRowBytes] = static_cast<uint8_t>(r);
  return x;
}

TEST(MoeDispatch, TokenRowsServeEverySlotOfTheirToken) {
  const int64_t tokens = 3, k = 2;
  const std::vector<int32_t> ids = {2, 0, 0, 1, 2, 3};
  Stack stack(5);
  ExpertBuckets buckets = *bucketByExpert(ids, 5);
  std::vector<uint8_t> x = activationRows(tokens);
  std::vector<float> y(ids.size() * kN, -1.0f);
  ASSERT_TRUE(
      runExpertMatmul(stack.matmul(), buckets, {x, kRowBytes, k}, y).ok());
  // Experts ascending, empty ones skipped, m = the bucket's size.
  EXPECT_THAT(gCalls, ElementsAre(std::pair<int64_t, int64_t>{0, 2},
                                  std::pair<int64_t, int64_t>{1, 1},
                                  std::pair<int64_t, int64_t>{2, 2},
                                  std::pair<int64_t, int64_t>{3, 1}));
  for (size_t s = 0; s < ids.size(); ++s)
    for (int64_t i = 0; i < kN; ++i)
      EXPECT_EQ(y[s * kN + i], (ids[s] * 16 + i) * 1000 + s / k)
          << "slot " << s << ", row " << i;
}

TEST(MoeDispatch, SlotRowsServeTheirOwnSlot) {
  const std::vector<int32_t> ids = {1, 0, 1, 0};
  Stack stack(2);
  ExpertBuckets buckets = *bucketByExpert(ids, 2);
  std::vector<uint8_t> x = activationRows(4);
  std::vector<float> y(ids.size() * kN);
  ASSERT_TRUE(
      runExpertMatmul(stack.matmul(), buckets, {x, kRowBytes, 1}, y).ok());
  for (size_t s = 0; s < ids.size(); ++s)
    EXPECT_EQ(y[s * kN], ids[s] * 16 * 1000 + static_cast<float>(s));
}

TEST(MoeDispatch, OneTokenCallsEachOfItsExpertsWithOneColumn) {
  const std::vector<int32_t> ids = {3, 0, 2};
  Stack stack(4);
  ExpertBuckets buckets = *bucketByExpert(ids, 4);
  std::vector<uint8_t> x = activationRows(1);
  std::vector<float> y(ids.size() * kN);
  ASSERT_TRUE(
      runExpertMatmul(stack.matmul(), buckets, {x, kRowBytes, 3}, y).ok());
  EXPECT_THAT(gCalls, ElementsAre(std::pair<int64_t, int64_t>{0, 1},
                                  std::pair<int64_t, int64_t>{2, 1},
                                  std::pair<int64_t, int64_t>{3, 1}));
  for (size_t s = 0; s < ids.size(); ++s)
    EXPECT_EQ(y[s * kN + 2], (ids[s] * 16 + 2) * 1000);
}

TEST(MoeDispatch, RefusesMismatchedBuffers) {
  const std::vector<int32_t> ids = {0, 1};
  Stack stack(2);
  ExpertBuckets buckets = *bucketByExpert(ids, 2);
  std::vector<uint8_t> x = activationRows(2);
  std::vector<float> y(ids.size() * kN);
  absl::Status status = runExpertMatmul(stack.matmul(), buckets,
                                        {x, kRowBytes, 2}, y); // 2 tokens?
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("2 activation rows for 2 slots, expected 1"));
  std::vector<float> shortY(ids.size() * kN - 1);
  EXPECT_FALSE(
      runExpertMatmul(stack.matmul(), buckets, {x, kRowBytes, 1}, shortY).ok());
  EXPECT_TRUE(gCalls.empty());
}

} // namespace
} // namespace kf
