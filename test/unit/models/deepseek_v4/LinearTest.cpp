#include "kf/deepseek_v4/reference/linear.h"

#include <vector>

#include "gtest/gtest.h"

namespace kf::deepseek_v4::reference {
namespace {

TEST(Linear, Fp32IsXTimesWeightTransposed) {
  // W [3][2] row-major: y_n = Σ_k x_k W[n][k].
  const std::vector<float> x = {1, 2};
  const std::vector<float> w = {1, 2, 3, 4, 0.5f, -1};
  std::vector<float> y(3);
  linearFp32(x, w, y);
  EXPECT_EQ(y, (std::vector<float>{5, 11, -1.5f}));
}

TEST(Linear, Bf16RoundsTheOutput) {
  // 1 + 2^−10 is an fp32 value but lies below half a bf16 ulp of 1 (2^−8).
  const std::vector<float> x = {1};
  const std::vector<float> w = {1 + 0x1p-10f};
  std::vector<float> y(1);
  linearFp32(x, w, y);
  EXPECT_EQ(y[0], 1 + 0x1p-10f);
  linearBf16(x, w, y);
  EXPECT_EQ(y[0], 1.0f);
}

TEST(Lin, QuantizesTheActivationInBlocksOf128) {
  // Block 0 has amax 1: scale 2^ceil(log2(1/448)) = 2^−8, and x = 0.3 is
  // 76.8 units, which e4m3 (step 8 between 64 and 128) rounds to 80:
  // 0.3125. Block 1 has amax 100: scale 2^ceil(log2(100/448)) = 2^−2, and
  // 0.3 is 1.2 units, rounded to 1.25 (step 1/8 in [1, 2)): 0.3125 as well
  // but from its own scale; 1e-4 there is 0.0004 units, below half of
  // e4m3's smallest subnormal 2^−9: 0. The weight picks x[1], x[129], x[130].
  std::vector<float> x(256, 0.0f);
  x[0] = 1;
  x[1] = 0.3f;
  x[128] = 100;
  x[129] = 0.3f;
  x[130] = 1e-4f;
  std::vector<float> w(3 * 256, 0.0f);
  w[1] = 1;
  w[256 + 129] = 1;
  w[512 + 130] = 1;
  std::vector<float> y(3);
  lin(x, w, /*simulate=*/true, y);
  EXPECT_EQ(y, (std::vector<float>{0.3125f, 0.3125f, 0.0f}));
  // Without the simulation only the bf16 output rounding is left:
  // bf16(0.3) = 0.30078125, bf16(1e-4) = 0.00010013580322265625.
  lin(x, w, /*simulate=*/false, y);
  EXPECT_EQ(y, (std::vector<float>{0.30078125f, 0.30078125f,
                                   0.00010013580322265625f}));
}

} // namespace
} // namespace kf::deepseek_v4::reference
