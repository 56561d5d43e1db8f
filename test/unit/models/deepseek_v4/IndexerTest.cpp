// Section numbers (§) are those of docs/models/deepseek_v4_model.md.
#include "kf/deepseek_v4/reference/indexer.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

TEST(IndexerScores, HandComputedInBf16) {
  // 2 heads, head_dim 2: q_0 = (1, 2^-8), q_1 = (0, 2^-8); w = (0.75, 0.25).
  //   K_0 = (1, 1): q_0·K = 1 + 2^-8, a tie between bf16 1 and 1 + 2^-7: to
  //       1; ·0.75 = 0.75. q_1·K = 2^-8; ·0.25 = 2^-10. The sum
  //       0.75 + 2^-10 rounds to bf16 0.75. Without rounding the dot product
  //       it would be 0.75390625.
  //   K_1 = (0.5, 1.25): q_0·K = 0.5048828125 → bf16 0.50390625; ·0.75 =
  //       0.3779296875, a tie (step 2^-9) → 0.37890625. q_1·K = 1.25·2^-8;
  //       ·0.25 = 1.25·2^-10. Sum 0.380126953125 → bf16 0.380859375. Without
  //       rounding the product it would be bf16(0.379150390625) = 0.37890625.
  //   K_2 = (−1, 1): q_0·K = −1 + 2^-8 < 0, so ReLU gives 0; q_1·K = 2^-8:
  //       score 2^-10.
  const std::vector<float> q = {1, 0x1p-8f, 0, 0x1p-8f};
  const std::vector<float> w = {0.75f, 0.25f};
  const std::vector<float> keys = {1, 1, 0.5f, 1.25f, -1, 1};
  std::vector<float> scores(3);
  indexerScores(q, w, keys, 2, 2, scores);
  EXPECT_EQ(scores, (std::vector<float>{0.75f, 0.380859375f, 0x1p-10f}));
}

TEST(IndexerSelect, TopKAmongTheCausalEntries) {
  // Entries 0..3 are visible; entry 4 (score 9) is a future block.
  const std::vector<float> scores = {0.5f, 2, 0, 2, 9};
  std::vector<int32_t> three(3);
  indexerSelect(scores, 4, three);
  EXPECT_EQ(three, (std::vector<int32_t>{1, 3, 0}));
  // k = all 5 entries: the future one is padding, −1.
  std::vector<int32_t> all(5);
  indexerSelect(scores, 4, all);
  EXPECT_EQ(all, (std::vector<int32_t>{1, 3, 0, 2, -1}));
}

TEST(IndexerSelect, ZeroTiesAreDeterministicAcrossRowLengths) {
  // §4.4/§10: ReLU makes exact-zero ties at the top-k boundary. With the
  // lower-c tie-break the choice for a row does not depend on how many
  // (future) columns a call has: prefill with 8 columns and decode with the
  // 5 valid ones agree.
  const std::vector<float> prefill = {0, 0.25f, 0, 0, 0, 7, 7, 7};
  const std::vector<float> decode = {0, 0.25f, 0, 0, 0};
  std::vector<int32_t> a(3), b(3);
  indexerSelect(prefill, 5, a);
  indexerSelect(decode, 5, b);
  EXPECT_EQ(a, (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(a, b);
}

} // namespace
} // namespace kf::deepseek_v4::reference
