#include "MatmulReference.h"

#include "kf/runtime/half.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/quant.h"

#include "gtest/gtest.h"

#include <random>
#include <span>

namespace kf::codegen {

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

void buildMatmulReference(const MatmulKernelSpec &spec, uint32_t seed,
                          MatmulReference &ref) {
  constexpr int64_t kMaxM = MatmulReference::kMaxM;
  const int64_t n = spec.n, k = spec.k;

  std::vector<float> wf = gaussian(n * k, seed, 1.0f);
  for (int64_t i = 0; i < k; ++i)
    wf[i] *= 40.0f;
  std::vector<uint8_t> w(*row_bytes(spec.format, n * k));
  ASSERT_TRUE(quantize(spec.format, wf, w).ok());
  // Q8_0's -128, which files may hold though the quantizer never writes it:
  // the extreme lane of every encoding (0 unsigned, -128 signed).
  if (spec.format == Format::Q8_0)
    for (int64_t r = 0; r < n; r += 3)
      w[*row_bytes(spec.format, r * k) + 2 + r % 32] = 0x80;
  absl::StatusOr<std::vector<uint8_t>> packedW =
      pack_weights(spec.getWeightLayout(), w, n, k);
  ASSERT_TRUE(packedW.ok()) << packedW.status();
  ASSERT_EQ(static_cast<int64_t>(packedW->size()), spec.getWeightBytes());
  ref.packedW = std::move(*packedW);

  // kMaxM columns ldx apart.
  const int64_t ldx = k + 8;
  std::vector<float> x = gaussian(kMaxM * ldx, seed + 1, 2.0f);
  std::fill_n(x.begin() + 3 * ldx, k, 0.0f);
  for (int64_t j = 4; j < kMaxM; j += 2)
    std::copy_n(wf.begin() + (j % n) * k, k, x.begin() + j * ldx);
  const Format act = spec.getActivationFormat();
  ref.packedX.assign(kMaxM * spec.getActivationColumnBytes(), 0);
  ASSERT_TRUE(pack_activations(act, x, kMaxM, k, ldx, ref.packedX).ok());

  // kf::dot of each weight row with each column's Q8_0 (Q8_K) blocks.
  const int64_t wRow = *row_bytes(spec.format, k);
  const int64_t xRow = *row_bytes(act, k);
  std::vector<uint8_t> xq(kMaxM * xRow);
  for (int64_t j = 0; j < kMaxM; ++j)
    ASSERT_TRUE(quantize_activation(act, std::span(x).subspan(j * ldx, k),
                                    std::span(xq).subspan(j * xRow, xRow))
                    .ok());
  ref.want.resize(kMaxM * n);
  for (int64_t j = 0; j < kMaxM; ++j)
    for (int64_t r = 0; r < n; ++r) {
      float y = *dot(spec.format, std::span(w).subspan(r * wRow, wRow),
                     std::span(xq).subspan(j * xRow, xRow));
      ref.want[j * n + r] =
          spec.roundToBf16 ? bf16_to_fp32(fp32_to_bf16(y)) : y;
    }
}

} // namespace kf::codegen
