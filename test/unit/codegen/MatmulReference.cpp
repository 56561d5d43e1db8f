#include "MatmulReference.h"

#include "KernelCases.h"

#include "kf/runtime/half.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/quant.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <span>

namespace kf::codegen {

// The float kernels reorder kf::dot's sum, so they agree with it within a
// bound (Higham, Accuracy and Stability of Numerical Algorithms, §4.2). Let
// t_k = w_k x_k be the exact products of the decoded operands, s = Σ t_k and
// S = Σ |t_k|, u the fp32 unit roundoff and γ_h = h u / (1 - h u).
//
// The kernel: every product of two bf16 values is exact in fp32, and an F32
// product is rounded only with its addition (an FMA) or, in the portable
// kernel, once more on its own. Each addition rounds once. A term passes
// through the rest of its chain's additions (at most one per element of the
// padded row, K_pad), the pairwise fold of a column's chains after each L1
// block of K (at most 3 levels, 8 chains) and, with cache blocks, the next
// blocks' additions (y holds the sum between them): h <= K_pad + 3 L + 1 for
// L blocks of K. So |y - s| <= γ_h S. vdpbf16ps rounds to nearest; bfdot
// rounds to odd, which errs by less than an ulp: u = 2^-23 for it, 2^-24
// elsewhere. Both flush results below 2^-126 to zero: at most 2^-126 per
// rounding, h 2^-126 in all (the test data has no subnormal operands, which
// they would flush too).
//
// The reference: the products in fp32 (exact for bf16, |δ| <= u for f32),
// summed in double (error <= K 2^-53 S), rounded to fp32 (<= u |s| + ...):
// |ref - s| <= (2u + K 2^-52) S.
//
// A bf16 epilogue rounds both to bf16 (relative 2^-9 each), adding 2^-9 (|y|
// + |ref|) <= 2^-9 (2 |ref| + E) to the bound E above.
double floatKernelTolerance(const MatmulKernelSpec &spec, double absSum,
                            double ref) {
  const double u = spec.isa == KernelIsa::NeonBf16 ? 0x1p-23 : 0x1p-24;
  const int64_t kPad =
      packedKBlocks(spec.format, spec.k) * packedBlockElems(spec.format);
  const int64_t l1Blocks =
      spec.l1K == 0 ? 1 : (spec.k + spec.l1K - 1) / spec.l1K;
  const double h = static_cast<double>(kPad + 3 * l1Blocks + 1);
  const double gamma = h * u / (1 - h * u);
  double bound = (gamma + 2 * u + spec.k * 0x1p-52) * absSum + h * 0x1p-126;
  if (spec.roundToBf16)
    bound += 0x1p-9 * (2 * std::fabs(ref) + bound);
  return bound;
}

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
  const bool isFloat = getTolerance(spec.format) == Tolerance::FloatBound;
  std::vector<uint8_t> w(*rowBytes(spec.format, n * k));
  ASSERT_TRUE(quantize(spec.format, wf, w).ok());
  // Q8_0's -128, which files may hold though the quantizer never writes it:
  // the extreme lane of every encoding (0 unsigned, -128 signed).
  if (spec.format == Format::Q8_0)
    for (int64_t r = 0; r < n; r += 3)
      w[*rowBytes(spec.format, r * k) + 2 + r % 32] = 0x80;
  absl::StatusOr<std::vector<uint8_t>> packedW =
      packWeights(spec.getWeightLayout(), w, n, k);
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
  if (spec.fuseQuantize) {
    ref.kernelX.resize(kMaxM * k * sizeof(float));
    for (int64_t j = 0; j < kMaxM; ++j)
      std::memcpy(ref.kernelX.data() + j * k * sizeof(float), &x[j * ldx],
                  k * sizeof(float));
  } else {
    ref.kernelX.assign(kMaxM * spec.getActivationColumnBytes(), 0);
    ASSERT_TRUE(packActivations(act, x, kMaxM, k, ldx, ref.kernelX).ok());
  }

  // kf::dot of each weight row with each column's Q8_0 (Q8_K) blocks.
  const int64_t wRow = *rowBytes(spec.format, k);
  const int64_t xRow = *rowBytes(act, k);
  std::vector<uint8_t> xq(kMaxM * xRow);
  for (int64_t j = 0; j < kMaxM; ++j)
    ASSERT_TRUE(quantizeActivation(act, std::span(x).subspan(j * ldx, k),
                                   std::span(xq).subspan(j * xRow, xRow))
                    .ok());
  // The float formats' decoded operands, for the tolerance's Σ|w x|.
  std::vector<float> wd, xd;
  if (isFloat) {
    wd.resize(n * k);
    xd.resize(kMaxM * k);
    ASSERT_TRUE(dequantize(spec.format, w, wd).ok());
    ASSERT_TRUE(dequantize(act, xq, xd).ok());
  }
  ref.want.resize(kMaxM * n);
  ref.tolerance.assign(kMaxM * n, 0.0f);
  for (int64_t j = 0; j < kMaxM; ++j)
    for (int64_t r = 0; r < n; ++r) {
      float y = *dot(spec.format, std::span(w).subspan(r * wRow, wRow),
                     std::span(xq).subspan(j * xRow, xRow));
      ref.want[j * n + r] = spec.roundToBf16 ? bf16ToFp32(fp32ToBf16(y)) : y;
      if (isFloat) {
        double absSum = 0;
        for (int64_t i = 0; i < k; ++i)
          absSum += std::fabs(static_cast<double>(wd[r * k + i]) *
                              static_cast<double>(xd[j * k + i]));
        // Rounded up, so that the float holds at least the bound.
        ref.tolerance[j * n + r] = std::nextafter(
            static_cast<float>(floatKernelTolerance(spec, absSum, y)),
            INFINITY);
      }
    }
}

} // namespace kf::codegen
