// Compiled int8-family kernels of each x86 ISA (IntegerKernelOnIsa,
// KernelCases.h) on blocks built at the edges of their arithmetic: the
// extreme codes, scales and sub-block dots of each format, every grid index
// at every position, rounding orders that only long integer dots reach, and
// the bf16 epilogue's ties, infinities and NaNs; against kf::dot, bit for bit
// (Tolerance::Exact), each test showing that its data has teeth where a
// kernel in another order would differ.
#include "HostIsa.h"
#include "KernelCases.h"
#include "MatmulReference.h"

#include "kf/Codegen/KernelCompiler.h"
#include "kf/runtime/half.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/quant.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

namespace kf::codegen {
namespace {

using target::TargetInfo;

const TargetInfo &host() { return hostTarget(); }

// `isa`'s kernel for (format, k, n), compiled for this machine (or
// `restricted`, a subset of it): the portable kernels compile several times
// faster for it than for the x86-64-v2 baseline, which EqualsReference
// covers.
std::vector<JitKernel>
isaKernels(KernelIsa isa, Format format, int64_t k, int64_t n,
           bool roundToBf16 = false, bool cacheBlocks = false,
           const std::optional<TargetInfo> &restricted = std::nullopt) {
  const TargetInfo target = restricted ? *restricted : host();
  std::vector<MatmulKernelSpec> specs = {
      {format, isa, testRows(isa), k, n, 8, roundToBf16}};
  // With cache blocks (two L1 blocks, row blocks of one group), each also.
  if (cacheBlocks)
    for (size_t i = 0, e = specs.size(); i < e; ++i) {
      specs.push_back(specs[i]);
      specs.back().l1K = k / 2;
      specs.back().l2Rows = specs[i].rows;
    }
  // IQ1's ternary layouts too, and IQ2_XXS's code book layout where the
  // kernels read it.
  for (size_t i = 0, e = specs.size(); i < e; ++i)
    for (WeightCoding coding : {WeightCoding::Ternary, WeightCoding::CodeBook})
      if (hasWeightCoding(format, coding) &&
          (coding != WeightCoding::CodeBook ||
           hasCodeBookLayout(specs[i].isa, target))) {
        specs.push_back(specs[i]);
        specs.back().coding = coding;
      }
  llvm::Expected<std::vector<JitKernel>> kernels = jitMatmuls(specs, target);
  EXPECT_TRUE(static_cast<bool>(kernels))
      << llvm::toString(kernels.takeError());
  return kernels ? std::move(*kernels) : std::vector<JitKernel>{};
}

// Edge weights: Q8_0's -128 (which files may hold though the quantizer never
// writes it), +127, zero scales, subnormal and negative fp16 scales.
TEST_P(IntegerKernelOnIsa, ExtremeWeights) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 8, k = 64;
  std::vector<JitKernel> kernels = isaKernels(isa, Format::Q8_0, k, n);
  std::vector<uint8_t> w(n * 2 * 34);
  const uint16_t scales[] = {0x3c00, 0xbc00, 0x0001, 0x03ff,
                             0x0000, 0x7bff, 0x8400, 0x3555};
  std::mt19937 rng(5);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < 2; ++b) {
      uint8_t *block = w.data() + (r * 2 + b) * 34;
      uint16_t d = scales[(r + b) % 8];
      std::memcpy(block, &d, 2);
      for (int i = 0; i < 32; ++i)
        block[2 + i] = static_cast<uint8_t>(
            i % 3 == 0 ? 0x80 : (i % 3 == 1 ? 0x7f : rng() & 0xff));
    }
  const int64_t m = 3;
  std::vector<float> x = gaussian(m * k, 17, 1.0f);
  x[0] = 1e-30f; // a tiny block scale
  std::vector<uint8_t> packedX(m * *packedActivationBytes(k));
  ASSERT_TRUE(packActivations(x, m, k, k, packedX).ok());
  std::vector<uint8_t> xq(m * 68);
  for (int64_t j = 0; j < m; ++j)
    ASSERT_TRUE(quantizeActivation(Format::Q8_0, std::span(x).subspan(j * k, k),
                                   std::span(xq).subspan(j * 68, 68))
                    .ok());
  for (const JitKernel &kernel : kernels) {
    SCOPED_TRACE(kernel.spec.describe());
    std::vector<uint8_t> packedW = *packWeights(kernel.weightLayout, w, n, k);
    std::vector<float> y(m * n);
    kernel.fn(packedW.data(), packedX.data(), y.data(), n, m, 0, n);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t r = 0; r < n; ++r) {
        float want = *dot(Format::Q8_0, std::span(w).subspan(r * 68, 68),
                          std::span(xq).subspan(j * 68, 68));
        EXPECT_EQ(std::bit_cast<uint32_t>(y[j * n + r]),
                  std::bit_cast<uint32_t>(want))
            << "column " << j << ", row " << r;
      }
  }
}

// `isa`'s kernels of `format` (for `restricted`, a subset of this machine,
// when given), on the file rows `w` ([n, k]), against kf::dot with each of
// the m columns of x (k floats apart), bit for bit; with cache blocks also
// each column alone (m = 1), to the same bits.
void expectKernelsEqualDot(
    KernelIsa isa, Format format, const std::vector<uint8_t> &w, int64_t n,
    int64_t k, const std::vector<float> &x, int64_t m, bool cacheBlocks = false,
    const std::optional<TargetInfo> &restricted = std::nullopt) {
  const Format act = formatInfo(format).dotFormat;
  std::vector<uint8_t> packedX(m * *packedActivationBytes(act, k));
  ASSERT_TRUE(packActivations(act, x, m, k, k, packedX).ok());
  const int64_t wRow = *rowBytes(format, k), xRow = *rowBytes(act, k);
  std::vector<uint8_t> xq(m * xRow);
  for (int64_t j = 0; j < m; ++j)
    ASSERT_TRUE(quantizeActivation(act, std::span(x).subspan(j * k, k),
                                   std::span(xq).subspan(j * xRow, xRow))
                    .ok());
  for (const JitKernel &kernel : isaKernels(
           isa, format, k, n, /*roundToBf16=*/false, cacheBlocks, restricted)) {
    SCOPED_TRACE(kernel.spec.describe());
    std::vector<uint8_t> packedW = *packWeights(kernel.weightLayout, w, n, k);
    std::vector<float> y(m * n);
    kernel.fn(packedW.data(), packedX.data(), y.data(), n, m, 0, n);
    // With cache blocks each column alone as well: a one-column call's tile
    // takes its own path (VQ3_64's packed order).
    if ((kernel.spec.l1K != 0 || kernel.spec.l2Rows != 0) && m > 1)
      for (int64_t j = 0; j < m; ++j) {
        std::vector<float> alone(n);
        kernel.fn(packedW.data(), packedX.data() + j * packedX.size() / m,
                  alone.data(), n, 1, 0, n);
        for (int64_t r = 0; r < n; ++r)
          EXPECT_EQ(std::bit_cast<uint32_t>(alone[r]),
                    std::bit_cast<uint32_t>(y[j * n + r]))
              << "column " << j << " alone, row " << r;
      }
    for (int64_t j = 0; j < m; ++j)
      for (int64_t r = 0; r < n; ++r) {
        float want = *dot(format, std::span(w).subspan(r * wRow, wRow),
                          std::span(xq).subspan(j * xRow, xRow));
        EXPECT_EQ(std::bit_cast<uint32_t>(y[j * n + r]),
                  std::bit_cast<uint32_t>(want))
            << "column " << j << ", row " << r << ": " << y[j * n + r]
            << " != " << want;
      }
  }
}

// kWideRangeColumns columns of k gaussian values, scaled by 1, 1e-6, 1e4
// and 1e33 (ordinary, tiny, large, and huge enough for inf and NaN sums).
constexpr int64_t kWideRangeColumns = 4;
std::vector<float> wideRangeColumns(int64_t k, uint32_t seed) {
  const float columnScales[kWideRangeColumns] = {1.0f, 1e-6f, 1e4f, 1e33f};
  std::vector<float> x = gaussian(kWideRangeColumns * k, seed, 1.0f);
  for (int64_t j = 0; j < kWideRangeColumns; ++j)
    for (int64_t i = 0; i < k; ++i)
      x[j * k + i] *= columnScales[j];
  return x;
}

// K-quant super-blocks at the edges: the largest scales and mins (6-bit 63;
// Q6_K's int8 127 and -128), the largest and the smallest codes, d or dmin 0,
// negative and the largest fp16 d and dmin, against ordinary, tiny and large
// columns and columns of one value (every quant -127, or +127): the largest
// dots of Q4_K's and Q5_K's AVX-512 parts (16 * 15 * 127 and 8 * 31 * 127,
// which must fit int16); with and without cache blocks.
TEST_P(IntegerKernelOnIsa, KQuantExtremeWeights) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 512;
  std::mt19937 rng(9);
  for (Format format : {Format::Q4_K, Format::Q5_K, Format::Q6_K}) {
    SCOPED_TRACE(formatInfo(format).name);
    const int64_t blockBytes = formatInfo(format).blockBytes;
    const int64_t hdr = fileScaleOffset(format);
    const bool q6 = format == Format::Q6_K;
    std::vector<uint8_t> w(n * (k / 256) * blockBytes);
    for (uint8_t &byte : w)
      byte = static_cast<uint8_t>(rng());
    const uint16_t halves[] = {0x3c00, 0xbc00, 0x0000, 0x7bff,
                               0xfbff, 0x0001, 0x3555, 0x8000};
    for (int64_t blk = 0; blk < n * (k / 256); ++blk) {
      uint8_t *block = w.data() + blk * blockBytes;
      const int64_t kind = blk % 8;
      if (kind < 3) // the largest scales (and mins): 63 / 127 or -128
        for (int64_t j = 0; j < (q6 ? 16 : 12); ++j)
          block[hdr + (q6 ? 0 : 4) + j] = q6 ? (kind == 1 ? 0x80 : 0x7f) : 0xff;
      if (kind == 0 || kind == 4 || kind == 5) // the largest, smallest codes
        for (int64_t p = 0; p < blockBytes - packedScaleBytes(format); ++p)
          block[q6 ? p : 16 + p] = kind == 5 ? 0x00 : 0xff;
      const uint16_t d = halves[(blk / 2) % 8];
      const uint16_t dmin = halves[(blk / 2 + 3 + kind) % 8];
      std::memcpy(block + (q6 ? hdr + 16 : 0), &d, 2);
      if (!q6)
        std::memcpy(block + 2, &dmin, 2);
    }
    // Twice over, so that an 8-column tile meets every kind of column, and a
    // 2-column one too (Q6_K's dots split in bytes on AVX-512 in both).
    const int64_t m = 10;
    std::vector<float> x = gaussian(m * k, 31, 1.0f);
    for (int64_t c = 0; c < m; c += 5)
      for (int64_t i = 0; i < k; ++i) {
        x[(c + 1) * k + i] *= 1e-6f;
        x[(c + 2) * k + i] *= 1e4f;
        x[(c + 3) * k + i] = 1.0f;
        x[(c + 4) * k + i] = -1.0f;
      }
    expectKernelsEqualDot(isa, format, w, n, k, x, m, /*cacheBlocks=*/true);
  }
}

// IQ2_XXS blocks reaching every grid index, every sign pattern and every
// 4-bit scale, with d 0 (and -0), negative, subnormal and the largest fp16,
// against ordinary, tiny and huge columns. The last rows have the largest d
// and no negative weights, and the huge columns positive activations, so
// that their block sums add up: some rows' sums pass FLT_MAX before kf::dot's
// final factor 0.125 (inf), though their eighth would not, and a kernel
// applying 0.125 per block would differ.
TEST_P(IntegerKernelOnIsa, Iq2XxsExtremeWeights) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 1024, blocks = k / 256, blockBytes = 66;
  const int64_t positiveRows = 4;
  std::vector<uint8_t> w(n * blocks * blockBytes);
  const uint16_t halves[] = {0x3c00, 0xbc00, 0x0000, 0x7bff,
                             0xfbff, 0x0001, 0x3555, 0x8000};
  int64_t slot = 0, group = 0;
  for (int64_t blk = 0; blk < n * blocks; ++blk) {
    uint8_t *block = w.data() + blk * blockBytes;
    const bool positive = blk / blocks >= n - positiveRows;
    const uint16_t d = positive ? 0x7bff : halves[blk % 8];
    std::memcpy(block, &d, 2);
    for (int64_t g = 0; g < 8; ++g, ++group) {
      uint8_t *q = block + 2 + 8 * g;
      uint32_t signsScale = static_cast<uint32_t>(group % 16) << 28;
      for (int64_t l = 0; l < 4; ++l, ++slot) {
        q[l] = static_cast<uint8_t>(slot % 256);
        if (!positive)
          signsScale |= static_cast<uint32_t>(slot * 37 % 128) << 7 * l;
      }
      std::memcpy(q + 4, &signsScale, 4);
    }
  }
  // Every index; 37 is odd, so every sign pattern.
  ASSERT_GE((n - positiveRows) * blocks * 32, 256);
  const float columnScales[] = {1.0f,  1e-6f, 1e28f, 3e28f, 1e29f,
                                3e29f, 1e30f, 3e30f, 1e31f};
  const int64_t m = std::size(columnScales);
  std::vector<float> x = gaussian(m * k, 41, 1.0f);
  for (int64_t j = 0; j < m; ++j)
    for (int64_t i = 0; i < k; ++i)
      x[j * k + i] = j < 2 ? x[j * k + i] * columnScales[j]
                           : std::abs(x[j * k + i]) * columnScales[j];

  // The test has teeth: some sums are inf whose eighth is finite.
  const int64_t wRow = blocks * blockBytes, xRow = blocks * 292;
  std::vector<uint8_t> xq(m * xRow);
  for (int64_t j = 0; j < m; ++j)
    ASSERT_TRUE(quantizeActivation(Format::Q8_K, std::span(x).subspan(j * k, k),
                                   std::span(xq).subspan(j * xRow, xRow))
                    .ok());
  int overflowing = 0;
  for (int64_t j = 0; j < m; ++j)
    for (int64_t r = 0; r < n; ++r) {
      double eighth = 0;
      for (int64_t b = 0; b < blocks; ++b)
        eighth +=
            *dot(Format::IQ2_XXS,
                 std::span(w).subspan(r * wRow + b * blockBytes, blockBytes),
                 std::span(xq).subspan(j * xRow + b * 292, 292));
      float want = *dot(Format::IQ2_XXS, std::span(w).subspan(r * wRow, wRow),
                        std::span(xq).subspan(j * xRow, xRow));
      overflowing += std::isinf(want) &&
                     std::abs(eighth) < std::numeric_limits<float>::max();
    }
  EXPECT_GT(overflowing, 0);
  expectKernelsEqualDot(isa, Format::IQ2_XXS, w, n, k, x, m);
}

// IQ2_XXS rows in which every grid index meets every position of a slot
// within a sub-block (the AVX-512 VBMI kernel looks up a sub-block's 4 slots
// of 16 rows at once, as 2-bit codes, and spreads them to the lanes) and
// every row of the group, under random signs and scales and d = 1, so that
// any wrong code, spread, lane map or sign changes a sum; on a host with GFNI
// also without it (the lanes by vpermb instead of vgf2p8affineqb).
TEST_P(IntegerKernelOnIsa, Iq2XxsEveryIndexAtEveryPosition) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 8192, blocks = k / 256, blockBytes = 66;
  std::vector<uint8_t> w(n * blocks * blockBytes);
  std::mt19937 rng(43);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      uint8_t *block = w.data() + (r * blocks + blk) * blockBytes;
      const uint16_t d = 0x3c00;
      std::memcpy(block, &d, 2);
      for (int64_t g = 0; g < 8; ++g) {
        uint8_t *q = block + 2 + 8 * g;
        uint32_t signsScale = static_cast<uint32_t>(rng() % 16) << 28;
        for (int64_t l = 0; l < 4; ++l) {
          // Slot j of the row: index j / 4 + 64 l (shifted by the row), so
          // that each position l takes all 256 over the row's 1024 slots.
          const int64_t j = (blk * 8 + g) * 4 + l;
          q[l] = static_cast<uint8_t>((j / 4 + 64 * l + 13 * r) % 256);
          signsScale |= static_cast<uint32_t>(rng() % 128) << 7 * l;
        }
        std::memcpy(q + 4, &signsScale, 4);
      }
    }
  const int64_t m = 2;
  const std::vector<float> x = gaussian(m * k, 47, 1.0f);
  expectKernelsEqualDot(isa, Format::IQ2_XXS, w, n, k, x, m);
  // The lanes without GFNI on AVX-512 (the only ISA that uses it).
  if (isa == KernelIsa::Avx512Vnni && host().has(target::Feature::GFNI)) {
    TargetInfo noGfni = host();
    noGfni.features.reset(static_cast<size_t>(target::Feature::GFNI));
    expectKernelsEqualDot(isa, Format::IQ2_XXS, w, n, k, x, m,
                          /*cacheBlocks=*/false, noGfni);
  }
}

// IQ1_S and IQ1_M blocks reaching every grid index (all 2048 of the 11-bit
// ones), both signs of every delta and every 3-bit scale, with d 0 (and -0),
// negative, subnormal and the largest fp16 (IQ1_M's assembled from the top
// nibbles of its scale words), against ordinary, tiny, large and huge
// columns (inf and NaN sums).
TEST_P(IntegerKernelOnIsa, Iq1ExtremeWeights) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 2048, blocks = k / 256;
  const uint16_t halves[] = {0x3c00, 0xbc00, 0x0000, 0x7bff,
                             0xfbff, 0x0001, 0x3555, 0x8000};
  for (Format format : {Format::IQ1_S, Format::IQ1_M}) {
    SCOPED_TRACE(formatInfo(format).name);
    const bool m1 = format == Format::IQ1_M;
    const int64_t blockBytes = formatInfo(format).blockBytes;
    std::vector<uint8_t> w(n * blocks * blockBytes, 0);
    int64_t slot = 0, group = 0;
    for (int64_t blk = 0; blk < n * blocks; ++blk) {
      uint8_t *block = w.data() + blk * blockBytes;
      const uint16_t d = halves[blk % 8];
      uint16_t words[4] = {}; // IQ1_M's scale words
      for (int64_t g = 0; g < 8; ++g, ++group) {
        uint16_t qh = 0;
        for (int64_t l = 0; l < 4; ++l, ++slot) {
          const int64_t index = slot % 2048;
          const bool negative = (slot / 3 + group) % 2 != 0;
          if (m1) {
            block[4 * g + l] = static_cast<uint8_t>(index);
            block[32 + 2 * g + l / 2] |= static_cast<uint8_t>(
                (index >> 8 | (negative ? 8 : 0)) << 4 * (l % 2));
          } else {
            block[2 + 4 * g + l] = static_cast<uint8_t>(index);
            qh |= static_cast<uint16_t>((index >> 8) << 3 * l);
          }
        }
        if (m1) {
          words[g / 2] |=
              static_cast<uint16_t>((group % 8) << 6 * (g % 2) |
                                    ((group + 3) % 8) << (6 * (g % 2) + 3));
        } else {
          qh |=
              static_cast<uint16_t>((group % 8) << 12 | (group / 8 % 2) << 15);
          std::memcpy(block + 34 + 2 * g, &qh, 2);
        }
      }
      if (m1) {
        for (int p = 0; p < 4; ++p) {
          words[p] |= static_cast<uint16_t>((d >> 4 * p & 15) << 12);
          std::memcpy(block + 48 + 2 * p, &words[p], 2);
        }
      } else {
        std::memcpy(block, &d, 2);
      }
    }
    ASSERT_GE(slot, 2048); // every index
    expectKernelsEqualDot(isa, format, w, n, k, wideRangeColumns(k, 43),
                          kWideRangeColumns);
  }
}

// IQ1_S and IQ1_M rows whose sub-blocks' dots are the largest: every slot
// all +1 with a positive delta (8 w = 9) or all -1 with a negative one (-9),
// the largest scale, against columns of +127 and -127 quants: IQ1_M's dots
// reach 16 * 9 * 127, which must fit int16 (one vpdpwssd meets the scale on
// AVX-512), IQ1_S's 32 * 9 * 127, which does not.
TEST_P(IntegerKernelOnIsa, Iq1LargestSubBlockDots) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 512, blocks = k / 256;
  for (Format format : {Format::IQ1_S, Format::IQ1_M}) {
    SCOPED_TRACE(formatInfo(format).name);
    const bool m1 = format == Format::IQ1_M;
    const int64_t blockBytes = formatInfo(format).blockBytes;
    std::vector<uint8_t> w(n * blocks * blockBytes, 0);
    const uint16_t d = 0x3c00;
    for (int64_t blk = 0; blk < n * blocks; ++blk) {
      uint8_t *block = w.data() + blk * blockBytes;
      // Index 2047 is all +1, index 0 all -1.
      const bool positive = blk / blocks % 2 == 0;
      const uint8_t low = positive ? 0xff : 0x00;
      const uint8_t high = positive ? 7 : 8; // 3 high bits, or the sign
      if (m1) {
        std::memset(block, low, 32);
        std::memset(block + 32, high | high << 4, 16);
        for (int p = 0; p < 4; ++p) {
          const uint16_t word =
              static_cast<uint16_t>(0x0fff | (d >> 4 * p & 15) << 12);
          std::memcpy(block + 48 + 2 * p, &word, 2);
        }
      } else {
        std::memcpy(block, &d, 2);
        std::memset(block + 2, low, 32);
        const uint16_t qh = static_cast<uint16_t>(positive ? 0x7fff : 0xf000);
        for (int64_t g = 0; g < 8; ++g)
          std::memcpy(block + 34 + 2 * g, &qh, 2);
      }
    }
    const int64_t m = 3;
    std::vector<float> x = gaussian(m * k, 53, 1.0f);
    for (int64_t i = 0; i < k; ++i) {
      x[i] = 1.0f;
      x[k + i] = -1.0f;
    }
    expectKernelsEqualDot(isa, format, w, n, k, x, m);
  }
}

// The private formats' blocks as random bytes (every index, sign and
// sub-scale bit pattern) with d 0 (and -0), negative, subnormal and the
// largest fp16, against ordinary, tiny, large and huge columns (inf and NaN
// sums), with and without cache blocks (with them, each column alone takes
// VQ3_64's packed order); on a host with GFNI also without it (FRACTAL64's
// indices and VQ3_64's stream bits by byte shifts and masks instead of
// vgf2p8affineqb's bit maps) and on a host with VBMI without it (VQ3_64's
// books by masked lookups and its signs apart instead of the signed books'
// vpermi2b).
TEST_P(IntegerKernelOnIsa, PrivateFormatsEveryBitPattern) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 21, k = 64 * 12;
  const uint16_t halves[] = {0x3c00, 0xbc00, 0x0000, 0x7bff,
                             0xfbff, 0x0001, 0x3555, 0x8000};
  for (Format format : {Format::FRACTAL64, Format::VQ3_64}) {
    SCOPED_TRACE(formatInfo(format).name);
    const int64_t blockBytes = formatInfo(format).blockBytes;
    std::mt19937 rng(17);
    std::vector<uint8_t> w(n * k / 64 * blockBytes);
    for (uint8_t &byte : w)
      byte = static_cast<uint8_t>(rng());
    for (size_t blk = 0; blk < w.size() / blockBytes; ++blk)
      std::memcpy(w.data() + blk * blockBytes, &halves[blk % 8], 2);
    const std::vector<float> x = wideRangeColumns(k, 47);
    expectKernelsEqualDot(isa, format, w, n, k, x, kWideRangeColumns,
                          /*cacheBlocks=*/true);
    for (target::Feature without :
         {target::Feature::GFNI, target::Feature::AVX512VBMI}) {
      // Only the AVX-512 kernels use them.
      if (isa != KernelIsa::Avx512Vnni || !host().has(without))
        continue;
      TargetInfo restricted = host();
      restricted.features.reset(static_cast<size_t>(without));
      expectKernelsEqualDot(isa, format, w, n, k, x, kWideRangeColumns,
                            /*cacheBlocks=*/true, restricted);
    }
  }
}

// MXFP4 with every code and every E8M0 byte, 0 and 1 (subnormal scales), 254
// and 255 (2^126, 2^127) included, against columns of ordinary, tiny (fp16
// subnormal d_x, whose products with the small scales are fp32 subnormals that
// round) and large activations (products that overflow to inf, and sums of
// infs of both signs, NaN).
TEST_P(IntegerKernelOnIsa, Mxfp4ExtremeWeights) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 19, k = 32 * 16, blocks = k / 32;
  std::vector<uint8_t> w(n * blocks * 17);
  for (int64_t blk = 0; blk < n * blocks; ++blk) {
    uint8_t *block = w.data() + blk * 17;
    block[0] = static_cast<uint8_t>(blk); // row r: e = 16r .. 16r + 15
    for (int j = 0; j < 16; ++j)
      block[1 + j] = static_cast<uint8_t>(j | ((j * 7 + blk) % 16) << 4);
  }
  const int64_t m = 3;
  std::vector<float> x = gaussian(m * k, 23, 1.0f);
  for (int64_t i = 0; i < k; ++i) {
    x[k + i] *= 1e-5f;
    x[2 * k + i] *= 300.0f;
  }
  std::vector<uint8_t> packedX(m * *packedActivationBytes(k));
  ASSERT_TRUE(packActivations(x, m, k, k, packedX).ok());
  const int64_t wRow = blocks * 17, xRow = blocks * 34;
  std::vector<uint8_t> xq(m * xRow);
  for (int64_t j = 0; j < m; ++j)
    ASSERT_TRUE(quantizeActivation(Format::Q8_0, std::span(x).subspan(j * k, k),
                                   std::span(xq).subspan(j * xRow, xRow))
                    .ok());

  // The test has teeth: scaling in another order, (dot * d_w) * d_x, differs
  // somewhere, and some results are inf or NaN.
  std::vector<float> want(m * n);
  int differing = 0, nonFinite = 0;
  for (int64_t j = 0; j < m; ++j)
    for (int64_t r = 0; r < n; ++r) {
      want[j * n + r] =
          *dot(Format::MXFP4, std::span(w).subspan(r * wRow, wRow),
               std::span(xq).subspan(j * xRow, xRow));
      float other = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *wb = w.data() + r * wRow + b * 17;
        const uint8_t *xb = xq.data() + j * xRow + b * 34;
        int sumi = 0;
        for (int i = 0; i < 16; ++i)
          sumi +=
              kMxfp4Values[wb[1 + i] & 15] * static_cast<int8_t>(xb[2 + i]) +
              kMxfp4Values[wb[1 + i] >> 4] *
                  static_cast<int8_t>(xb[2 + 16 + i]);
        other += (sumi * std::ldexp(1.0f, wb[0] - 128)) *
                 fp16ToFp32(static_cast<uint16_t>(xb[0] | xb[1] << 8));
      }
      differing += std::bit_cast<uint32_t>(other) !=
                   std::bit_cast<uint32_t>(want[j * n + r]);
      nonFinite += !std::isfinite(want[j * n + r]);
    }
  EXPECT_GT(differing, 0);
  EXPECT_GT(nonFinite, 0);

  for (const JitKernel &kernel : isaKernels(isa, Format::MXFP4, k, n)) {
    SCOPED_TRACE(kernel.spec.describe());
    std::vector<uint8_t> packedW = *packWeights(kernel.weightLayout, w, n, k);
    std::vector<float> y(m * n);
    kernel.fn(packedW.data(), packedX.data(), y.data(), n, m, 0, n);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t r = 0; r < n; ++r)
        EXPECT_EQ(std::bit_cast<uint32_t>(y[j * n + r]),
                  std::bit_cast<uint32_t>(want[j * n + r]))
            << "column " << j << ", row " << r << ": " << y[j * n + r]
            << " != " << want[j * n + r];
  }
}

// Blocks whose integer dot has so many significant bits that the two orders
// of scaling, sumi * (d_w * d_x) and (sumi * d_w) * d_x, round differently
// (random data almost never gets there: the scales' products are exact and
// typical sums short). Q8_0's reference takes the first, Q4_0's the second,
// and the kernels must follow each.
TEST_P(IntegerKernelOnIsa, FollowsTheReferenceRoundingOrder) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 16, k = 32;
  // Full 11-bit mantissas: d_w = 0x3bff (1 - 2^-11), d_x = fp16(amax / 127)
  // with amax chosen to make it 0x1ffc * 2^-22 (the same mantissa).
  const uint16_t dw = 0x3bff;
  const float amax = 127.0f * 0x1.ffcp-8f;
  for (Format format : {Format::Q8_0, Format::Q4_0}) {
    const int64_t blockBytes = format == Format::Q8_0 ? 34 : 18;
    std::vector<uint8_t> w(n * blockBytes);
    std::vector<float> x(k, -amax); // every q = -127
    for (int64_t r = 0; r < n; ++r) {
      uint8_t *block = w.data() + r * blockBytes;
      std::memcpy(block, &dw, 2);
      if (format == Format::Q8_0) {
        // w = -127 but for a few -126 .. -112: odd sums near 2^19.
        for (int i = 0; i < 32; ++i)
          block[2 + i] = static_cast<uint8_t>(i < r ? -126 + i : -127);
      } else {
        // w = -8 (nibble 0) but element 0 at -7 .. -1 +: odd sums near 2^15.
        for (int i = 0; i < 16; ++i)
          block[2 + i] = 0;
        block[2] = static_cast<uint8_t>(1 + r % 8);
      }
    }
    std::vector<uint8_t> xq(34);
    ASSERT_TRUE(quantizeActivation(Format::Q8_0, x, xq).ok());
    std::vector<uint8_t> packedX(*packedActivationBytes(k));
    ASSERT_TRUE(packActivations(x, 1, k, k, packedX).ok());

    // The test has teeth: the other order differs for some rows.
    float dx;
    std::memcpy(&dx, packedX.data() + kActivationScaleOffset, 4);
    float dwf = 1.0f - 0x1p-11f;
    int differing = 0;
    std::vector<float> want(n);
    for (int64_t r = 0; r < n; ++r) {
      want[r] =
          *dot(format, std::span(w).subspan(r * blockBytes, blockBytes), xq);
      std::vector<float> decoded(k);
      ASSERT_TRUE(dequantize(format,
                             std::span(w).subspan(r * blockBytes, blockBytes),
                             decoded)
                      .ok());
      int sumi = 0;
      for (float v : decoded)
        sumi += static_cast<int>(v / dwf) * -127;
      float other =
          format == Format::Q8_0 ? (sumi * dwf) * dx : sumi * (dwf * dx);
      differing += other != want[r];
    }
    ASSERT_GT(differing, 0) << formatInfo(format).name;

    for (const JitKernel &kernel : isaKernels(isa, format, k, n)) {
      SCOPED_TRACE(kernel.spec.describe());
      std::vector<uint8_t> packedW = *packWeights(kernel.weightLayout, w, n, k);
      std::vector<float> y(n);
      kernel.fn(packedW.data(), packedX.data(), y.data(), n, 1, 0, n);
      for (int64_t r = 0; r < n; ++r)
        EXPECT_EQ(std::bit_cast<uint32_t>(y[r]),
                  std::bit_cast<uint32_t>(want[r]))
            << "row " << r;
    }
  }
}

// The bf16 epilogue on results chosen to be exact integers (weight and
// activation scales 1): ties between two bf16 values go to the even one
// either way, large values round, and an infinite weight scale yields
// infinities and, times a zero dot, a NaN, which stays a quiet NaN.
TEST_P(IntegerKernelOnIsa, RoundsToBf16LikeTheReference) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const int64_t n = 8, k = 32;
  // Row r's dot with x = (127, 1, 0, ...) is 127 * w0 + w1; the scale of
  // every row is 1, but row 6's is +inf and row 7's -inf with a zero dot.
  const int8_t w0[n] = {2, 2, -2, 100, 1, 0, 1, 0};
  const int8_t w1[n] = {3, 5, -3, 77, 0, 1, 0, 0};
  std::vector<uint8_t> w(n * 34, 0);
  for (int64_t r = 0; r < n; ++r) {
    uint16_t d = r == 6 ? 0x7c00 : r == 7 ? 0xfc00 : 0x3c00;
    std::memcpy(w.data() + r * 34, &d, 2);
    w[r * 34 + 2] = static_cast<uint8_t>(w0[r]);
    w[r * 34 + 3] = static_cast<uint8_t>(w1[r]);
  }
  std::vector<float> x(k, 0.0f);
  x[0] = 127.0f;
  x[1] = 1.0f;
  std::vector<uint8_t> packedX(*packedActivationBytes(k));
  ASSERT_TRUE(packActivations(x, 1, k, k, packedX).ok());
  // 257 ties down to 256, 259 up to 260, -257 to -256; 12777 = 0x31e9
  // rounds to 12800; 127; 1; inf; NaN.
  const float want[n] = {256.0f,
                         260.0f,
                         -256.0f,
                         12800.0f,
                         127.0f,
                         1.0f,
                         std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
  for (const JitKernel &kernel : isaKernels(isa, Format::Q8_0, k, n, true)) {
    SCOPED_TRACE(kernel.spec.describe());
    std::vector<uint8_t> packedW = *packWeights(kernel.weightLayout, w, n, k);
    std::vector<float> y(n);
    kernel.fn(packedW.data(), packedX.data(), y.data(), n, 1, 0, n);
    for (int64_t r = 0; r < n - 1; ++r)
      EXPECT_EQ(y[r], want[r]) << "row " << r;
    uint32_t nan = std::bit_cast<uint32_t>(y[n - 1]);
    EXPECT_TRUE(std::isnan(y[n - 1]) && (nan & 0xffffu) == 0 &&
                (nan & 0x400000u) != 0)
        << std::hex << nan;
  }
}

} // namespace
} // namespace kf::codegen
