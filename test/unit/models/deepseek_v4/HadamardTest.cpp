#include "kf/deepseek_v4/reference/hadamard.h"

#include <cmath>
#include <vector>

#include "TestUtil.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

using test::bf16RoundingBound;
using test::isBf16;

// The unscaled Sylvester matrix built by its recursion
// H_1 = [1], H_2n = [[H_n, H_n], [H_n, −H_n]].
std::vector<std::vector<int>> sylvester(size_t n) {
  std::vector<std::vector<int>> h = {{1}};
  while (h.size() < n) {
    size_t m = h.size();
    std::vector<std::vector<int>> next(2 * m, std::vector<int>(2 * m));
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < m; ++j) {
        next[i][j] = next[i][m + j] = next[m + i][j] = h[i][j];
        next[m + i][m + j] = -h[i][j];
      }
    h = next;
  }
  return h;
}

TEST(Hadamard, N2) {
  // (a, b) → ((a + b)/√2, (a − b)/√2), rounded to bf16.
  std::vector<float> x = {3, 1};
  hadamard(x);
  EXPECT_NEAR(x[0], 4 / std::sqrt(2.0), bf16RoundingBound(4 / std::sqrt(2.0)));
  EXPECT_NEAR(x[1], 2 / std::sqrt(2.0), bf16RoundingBound(2 / std::sqrt(2.0)));
  EXPECT_TRUE(isBf16(x[0]));
  EXPECT_TRUE(isBf16(x[1]));
}

TEST(Hadamard, N4NaturalOrder) {
  //        [1  1  1  1]
  // H4/2 = [1 −1  1 −1] / 2, applied to (1, 2, 3, 4): (5, −1, −2, 0).
  //        [1  1 −1 −1]
  //        [1 −1 −1  1]
  std::vector<float> x = {1, 2, 3, 4};
  hadamard(x);
  EXPECT_EQ(x, (std::vector<float>{5, -1, -2, 0}));
  // H·H = I, exactly here: (5, −1, −2, 0) → (2, 4, 6, 8)/2.
  hadamard(x);
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Hadamard, N128MatchesSylvester) {
  const size_t n = 128;
  std::vector<std::vector<int>> h = sylvester(n);
  // A ramp of small integers: every sum is exact, then one bf16 rounding.
  std::vector<float> x(n);
  for (size_t j = 0; j < n; ++j)
    x[j] = static_cast<float>(static_cast<int>(j % 37) - 18);
  std::vector<float> y = x;
  hadamard(y);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j)
      sum += h[i][j] * x[j];
    double expected = sum / std::sqrt(128.0);
    // The fp64 sum and scaling, rounded to fp32 then bf16: the bf16 bound
    // plus one fp32 rounding (2^-24 relative).
    EXPECT_NEAR(y[i], expected,
                bf16RoundingBound(expected) + 0x1p-24 * std::fabs(expected))
        << i;
  }
  // Each unit vector e_j gives column j: ±1/√128, rounded to bf16.
  for (size_t j : {0u, 1u, 77u, 127u}) {
    std::vector<float> e(n, 0.0f);
    e[j] = 1;
    hadamard(e);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(e[i], h[i][j] * test::toBf16(1 / std::sqrt(128.0)))
          << i << "," << j;
  }
}

TEST(Hadamard, N128AppliedTwiceIsIdentity) {
  // y = bf16(Hx) is off by at most 2^-8·|(Hx)_i| per entry, so by at most
  // 2^-8·‖x‖ in norm (H is orthonormal). Each entry of H·y is then off from
  // x_i by at most that norm (a row of H has norm 1), and its own rounding
  // adds 2^-8·(|x_i| + 2^-8·‖x‖). Together: 2^-8·(1.004·‖x‖ + |x_i|), plus
  // fp32 rounding, which the 1.01 absorbs.
  const size_t n = 128;
  std::vector<float> x(n);
  double normSq = 0;
  for (size_t j = 0; j < n; ++j) {
    x[j] = test::toBf16(std::sin(0.37 * j) * 3);
    normSq += static_cast<double>(x[j]) * x[j];
  }
  std::vector<float> y = x;
  hadamard(y);
  hadamard(y);
  for (size_t i = 0; i < n; ++i)
    EXPECT_NEAR(y[i], x[i],
                0x1p-8 * (1.01 * std::sqrt(normSq) + std::fabs(x[i])))
        << i;
}

TEST(HadamardDeathTest, RejectsLengthsThatAreNotPowersOfTwo) {
  std::vector<float> x(3);
  EXPECT_DEATH(hadamard(x), "power of two");
}

} // namespace
} // namespace kf::deepseek_v4::reference
