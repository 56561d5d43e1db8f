// Packed weight and activation layouts: the packed bytes decode to exactly
// what the reference decoder gives for the file rows, unpacking restores the
// file bytes, lanes sit where docs/codegen.md says, and packed activations
// carry the reference activation quantizer's scale and quants.
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "PackingTestUtil.h"
#include "QuantTestUtil.h"
#include "kf/runtime/half.h"
#include "kf/runtime/packing.h"
#include "quant/grids.h"

#include "absl/strings/str_cat.h"

namespace kf {
namespace {

using testing::activation;
using testing::dequantized;
using testing::gaussian;
using testing::packAndCheck;
using testing::quantized;
using testing::randomRows;

struct Case {
  Format format;
  int rows;
  LaneEncoding encoding;
};

std::vector<Case> allLayouts() {
  std::vector<Case> cases;
  for (Format f : {Format::Q8_0, Format::Q4_0, Format::MXFP4, Format::FRACTAL64,
                   Format::VQ3_64})
    for (int rows : {1, 4, 8, 16})
      for (LaneEncoding e : {LaneEncoding::Unsigned, LaneEncoding::Signed})
        cases.push_back({f, rows, e});
  return cases;
}

TEST(Packing, Names) {
  EXPECT_EQ(layoutName({Format::Q8_0, 16, LaneEncoding::Unsigned}), "q8_0_r16");
  EXPECT_EQ(layoutName({Format::Q8_0, 4, LaneEncoding::Signed}), "q8_0_r4s");
  EXPECT_EQ(layoutName({Format::Q4_0, 8, LaneEncoding::Signed}), "q4_0_r8");
  EXPECT_EQ(layoutName({Format::MXFP4, 16, LaneEncoding::Unsigned}),
            "mxfp4_r16");
  EXPECT_EQ(layoutName({Format::MXFP4, 4, LaneEncoding::Signed}), "mxfp4_r4");
  EXPECT_EQ(layoutName({Format::FRACTAL64, 16, LaneEncoding::Signed}),
            "fractal64_r16");
  EXPECT_EQ(layoutName({Format::VQ3_64, 4, LaneEncoding::Unsigned}),
            "vq3_64_r4");
  EXPECT_EQ(layoutName({Format::IQ1_S, 16, LaneEncoding::Unsigned,
                        WeightCoding::Ternary}),
            "iq1_s_r16_ternary");
  EXPECT_EQ(layoutName({Format::IQ1_M, 4, LaneEncoding::Signed,
                        WeightCoding::Ternary}),
            "iq1_m_r4_ternary");
  EXPECT_EQ(layoutName({Format::IQ2_XXS, 16, LaneEncoding::Unsigned,
                        WeightCoding::CodeBook}),
            "iq2_xxs_r16_codebook");
}

TEST(Packing, SizesPadTheLastGroup) {
  PackedLayout l{Format::Q8_0, 16, LaneEncoding::Unsigned};
  EXPECT_EQ(*packedWeightBytes(l, 17, 64), 2u * 2 * 16 * 34);
  EXPECT_EQ(*packedWeightBytes({Format::Q4_0, 8}, 8, 32), 8u * 18);
  EXPECT_EQ(*packedWeightBytes({Format::MXFP4, 16}, 17, 64), 2u * 2 * 16 * 17);
  EXPECT_EQ(*packedActivationBytes(96), 3u * 48);
  // The K-quants: the file's bytes per super-block, times the rows.
  EXPECT_EQ(*packedWeightBytes({Format::Q4_K, 16}, 17, 512), 2u * 2 * 16 * 144);
  EXPECT_EQ(*packedWeightBytes({Format::Q6_K, 8}, 8, 256), 8u * 210);
  EXPECT_EQ(*packedActivationBytes(Format::Q8_K, 512), 2u * 292);
  // IQ2_XXS: 4 bytes more than the file's 66 per row (the sign masks).
  EXPECT_EQ(*packedWeightBytes({Format::IQ2_XXS, 16}, 17, 512),
            2u * 2 * 16 * 70);
  // FRACTAL64 and VQ3_64: the file's bytes per block of 64, times the rows.
  EXPECT_EQ(*packedWeightBytes({Format::FRACTAL64, 16}, 17, 128),
            2u * 2 * 16 * 30);
  EXPECT_EQ(*packedWeightBytes({Format::VQ3_64, 4}, 5, 64), 2u * 4 * 24);
  EXPECT_EQ(packedBlockBytes({Format::FRACTAL64, 8}), 8 * 30);
  EXPECT_EQ(packedBlockBytes({Format::VQ3_64, 1}), 24);
  // The IQ1 ternary layouts: 2 bits per weight and the scales, 70 and 76
  // bytes per super-block and row.
  EXPECT_EQ(*packedWeightBytes({Format::IQ1_S, 16, LaneEncoding::Unsigned,
                                WeightCoding::Ternary},
                               17, 512),
            2u * 2 * 16 * 70);
  EXPECT_EQ(packedBlockBytes({Format::IQ1_M, 4, LaneEncoding::Unsigned,
                              WeightCoding::Ternary}),
            4 * 76);
  // IQ2_XXS's code book layout: the grid layout's 70, rearranged.
  EXPECT_EQ(packedBlockBytes({Format::IQ2_XXS, 16, LaneEncoding::Unsigned,
                              WeightCoding::CodeBook}),
            16 * 70);
}

TEST(Packing, RefusesWhatItCannotPack) {
  EXPECT_FALSE(checkLayout({Format::Q3_K, 16}).ok());
  EXPECT_FALSE(packedWeightBytes({Format::Q4_K, 4}, 4, 32).ok());
  EXPECT_FALSE(packedWeightBytes({Format::FRACTAL64, 4}, 4, 96).ok());
  EXPECT_FALSE(packedWeightBytes({Format::VQ3_64, 8}, 8, 32).ok());
  EXPECT_FALSE(checkLayout({Format::VQ3_64, 2}).ok());
  EXPECT_FALSE(packedActivationBytes(Format::Q8_K, 32).ok());
  EXPECT_FALSE(packedActivationBytes(Format::Q4_0, 32).ok());
  absl::Status s = checkLayout({Format::Q8_0, 2});
  EXPECT_EQ(s.message(), "packed layout with 2 rows per group: expected 1, 4, "
                         "8 or 16");
  EXPECT_FALSE(packedWeightBytes({Format::Q8_0, 4}, 4, 48).ok());
  EXPECT_FALSE(packedWeightBytes({Format::Q8_0, 4}, 0, 32).ok());
  std::vector<uint8_t> rows(3 * 34), out(4 * 34);
  s = packWeights({Format::Q8_0, 4}, rows, 4, 32, out);
  EXPECT_EQ(s.message(), "pack_weights: the source rows holds 102 bytes, "
                         "expected 136");
  EXPECT_FALSE(packedActivationBytes(33).ok());
  s = checkLayout(
      {Format::Q8_0, 16, LaneEncoding::Unsigned, WeightCoding::Ternary});
  EXPECT_EQ(s.message(),
            "no ternary layout for format q8_0: expected iq1_s or iq1_m");
  s = checkLayout(
      {Format::IQ1_S, 16, LaneEncoding::Unsigned, WeightCoding::CodeBook});
  EXPECT_EQ(s.message(),
            "no code book layout for format iq1_s: expected iq2_xxs");
}

// Every layout: the packed tensor dequantizes bit for bit like the file rows,
// and unpacks to the file bytes, for n both a multiple of the group and not,
// over 3 blocks of K.
TEST(Packing, DecodesAsTheReferenceAndRoundTrips) {
  for (const Case &c : allLayouts())
    for (int64_t n : {1, 5, 16, 19, 33}) {
      const int64_t k = 3 * packedBlockElems(c.format);
      PackedLayout layout{c.format, c.rows, c.encoding};
      SCOPED_TRACE(layoutName(layout) + " n=" + std::to_string(n));
      packAndCheck(layout, randomRows(c.format, n, k, 7 + n), n, k);
    }
}

// An expert stack packs expert by expert: each expert's rows decode from its
// own slice as the reference decodes its file rows, with its last group
// padded on its own (n = 5 is no multiple of the 4 rows of a group, so
// packing the 15 rows as one matrix would put expert 1's rows elsewhere).
TEST(Packing, ExpertStacksPackEachExpertAlone) {
  const PackedLayout layout{Format::MXFP4, 4, LaneEncoding::Unsigned};
  const int64_t experts = 3, n = 5, k = 64;
  std::vector<uint8_t> rows = randomRows(layout.format, experts * n, k, 11);
  absl::StatusOr<std::vector<uint8_t>> packed =
      packExpertWeights(layout, rows, experts, n, k);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const uint64_t expertBytes = *packedWeightBytes(layout, n, k);
  ASSERT_EQ(packed->size(), experts * expertBytes);
  std::vector<float> want = dequantized(layout.format, rows, experts * n * k);
  for (int64_t e = 0; e < experts; ++e) {
    std::vector<float> got(n * k);
    ASSERT_TRUE(dequantizePacked(
                    layout,
                    std::span(*packed).subspan(e * expertBytes, expertBytes), n,
                    k, got)
                    .ok());
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                std::bit_cast<uint32_t>(want[e * n * k + i]))
          << "expert " << e << ", element " << i;
  }
  EXPECT_FALSE(packExpertWeights(layout, rows, experts + 1, n, k).ok());
  EXPECT_FALSE(packExpertWeights(layout, rows, 0, n, k).ok());
}

// Q8_0's -128, which the quantizer never writes but a file may hold, survives
// both encodings.
TEST(Packing, Q8_0KeepsMinus128) {
  for (LaneEncoding e : {LaneEncoding::Unsigned, LaneEncoding::Signed}) {
    std::vector<uint8_t> row(34, 0);
    uint16_t d = fp32ToFp16(1.0f);
    std::memcpy(row.data(), &d, 2);
    row[2 + 5] = 0x80;
    PackedLayout layout{Format::Q8_0, 4, e};
    std::vector<uint8_t> packed = *packWeights(layout, row, 1, 32);
    std::vector<float> y(32);
    ASSERT_TRUE(dequantizePacked(layout, packed, 1, 32, y).ok());
    EXPECT_EQ(y[5], -128.0f);
  }
}

// The lanes sit at [block][scales][g][r][4]: one load of 4 * rows bytes holds
// 4 consecutive weights of every row of the group.
TEST(Packing, Q8_0LaneOrder) {
  const int64_t n = 4, k = 64;
  std::vector<uint8_t> rows(n * 2 * 34, 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < 2; ++b) {
      uint8_t *block = rows.data() + (r * 2 + b) * 34;
      uint16_t d = fp32ToFp16(static_cast<float>(r + 1));
      std::memcpy(block, &d, 2);
      for (int j = 0; j < 32; ++j)
        block[2 + j] = static_cast<uint8_t>(r * 64 + b * 32 + j - 100);
    }
  PackedLayout layout{Format::Q8_0, 4, LaneEncoding::Unsigned};
  std::vector<uint8_t> packed = *packWeights(layout, rows, n, k);
  ASSERT_EQ(packed.size(), 2u * 4 * 34);
  const uint8_t *block1 = packed.data() + 4 * 34;
  EXPECT_EQ(fp16ToFp32(block1[4] | block1[5] << 8), 3.0f); // row 2's scale
  // K-group 3 of row 2 in block 1: weights 12..15, stored as w + 128.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(block1[8 + (3 * 4 + 2) * 4 + i],
              static_cast<uint8_t>(2 * 64 + 32 + 12 + i - 100 + 128));
}

TEST(Packing, Q4_0LanesKeepTheFileNibbles) {
  std::vector<uint8_t> rows = randomRows(Format::Q4_0, 8, 32, 3);
  PackedLayout layout{Format::Q4_0, 8, LaneEncoding::Unsigned};
  std::vector<uint8_t> packed = *packWeights(layout, rows, 8, 32);
  // Row 5, K-group 2: file bytes 8..11 of its qs (low nibbles are elements
  // 8..11, high nibbles 24..27).
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(packed[16 + (2 * 8 + 5) * 4 + i], rows[5 * 18 + 2 + 8 + i]);
}

// MXFP4 keeps the file's E8M0 bytes (one per row, before the lanes) and
// nibble pairs, in Q4_0's lane order.
TEST(Packing, Mxfp4LanesKeepTheFileBytes) {
  std::vector<uint8_t> rows = randomRows(Format::MXFP4, 8, 32, 3);
  PackedLayout layout{Format::MXFP4, 8, LaneEncoding::Unsigned};
  std::vector<uint8_t> packed = *packWeights(layout, rows, 8, 32);
  ASSERT_EQ(packed.size(), 8u * 17);
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(packed[r], rows[r * 17]);
  // Row 5, K-group 2: file bytes 8..11 of its qs.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(packed[8 + (2 * 8 + 5) * 4 + i], rows[5 * 17 + 1 + 8 + i]);
}

// The kernels build 2^(e - 128) from the E8M0 byte's bits: exact for every
// byte, the subnormals of e = 0 and 1 and the largest, 2^127, included.
TEST(Packing, Mxfp4ScaleIsExactForEveryByte) {
  for (int e = 0; e < 256; ++e)
    EXPECT_EQ(mxfp4Scale(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 128))
        << "e = " << e;
}

// Every code under every scale byte decodes from the packed tensor as the
// reference decoder decodes the file, and unpacks to the file bytes.
TEST(Packing, Mxfp4DecodesEveryCodeAndScale) {
  const int64_t n = 19, k = 32 * 16; // 19 * 16 blocks cover all 256 bytes
  std::vector<uint8_t> rows(n * (k / 32) * 17);
  for (size_t blk = 0; blk < rows.size() / 17; ++blk) {
    uint8_t *block = rows.data() + blk * 17;
    block[0] = static_cast<uint8_t>(blk);
    for (int j = 0; j < 16; ++j) // every code, low and high, in each block
      block[1 + j] = static_cast<uint8_t>(j | ((j + blk) % 16) << 4);
  }
  for (int r : {1, 4, 8, 16}) {
    PackedLayout layout{Format::MXFP4, r, LaneEncoding::Unsigned};
    SCOPED_TRACE(layoutName(layout));
    std::vector<uint8_t> packed = *packWeights(layout, rows, n, k);
    std::vector<float> want = dequantized(Format::MXFP4, rows, n * k);
    std::vector<float> got(n * k);
    ASSERT_TRUE(dequantizePacked(layout, packed, n, k, got).ok());
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                std::bit_cast<uint32_t>(want[i]))
          << "element " << i;
    std::vector<uint8_t> back(rows.size());
    ASSERT_TRUE(unpackWeights(layout, packed, n, k, back).ok());
    EXPECT_EQ(back, rows);
  }
}

TEST(Packing, PaddingRowsAreZero) {
  PackedLayout layout{Format::Q4_0, 4, LaneEncoding::Unsigned};
  std::vector<uint8_t> rows = randomRows(Format::Q4_0, 1, 32, 5);
  std::vector<uint8_t> packed = *packWeights(layout, rows, 1, 32);
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(packed[2 * r] | packed[2 * r + 1], 0);
    for (int g = 0; g < 4; ++g)
      EXPECT_EQ(packed[8 + (g * 4 + r) * 4], 0x88); // 8 | 8 << 4: value 0
  }
  PackedLayout mxfp4{Format::MXFP4, 4, LaneEncoding::Unsigned};
  rows = randomRows(Format::MXFP4, 1, 32, 5);
  packed = *packWeights(mxfp4, rows, 1, 32);
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(packed[r], 0);
    for (int g = 0; g < 4; ++g)
      EXPECT_EQ(packed[4 + (g * 4 + r) * 4], 0); // code 0: value 0
  }
}

// The packed activation block holds the reference Q8_0 activation block's
// scale and quants, their sum and their sums of 8, for columns ldx apart.
TEST(Packing, ActivationsMatchTheReferenceQuantizer) {
  const int64_t m = 3, k = 128, ldx = 160;
  std::vector<float> x = gaussian(static_cast<size_t>(m * ldx), 11, 3.0f);
  for (int64_t i = 0; i < 32; ++i)
    x[ldx + 32 + i] = 0; // an all-zero block: scale 0, quants 0
  std::vector<uint8_t> packed(m * *packedActivationBytes(k));
  ASSERT_TRUE(packActivations(x, m, k, ldx, packed).ok());
  for (int64_t j = 0; j < m; ++j) {
    std::vector<uint8_t> ref =
        activation(Format::Q8_0, std::span(x).subspan(j * ldx, k));
    for (int64_t b = 0; b < k / 32; ++b) {
      const uint8_t *blk =
          packed.data() + (j * k / 32 + b) * kActivationBlockBytes;
      const uint8_t *want = ref.data() + b * 34;
      float d;
      int32_t sum;
      std::memcpy(&d, blk + kActivationScaleOffset, 4);
      std::memcpy(&sum, blk + kActivationSumOffset, 4);
      EXPECT_EQ(d, fp16ToFp32(want[0] | want[1] << 8));
      int32_t wantSum = 0;
      int16_t sums8[4], wantSums8[4] = {};
      std::memcpy(sums8, blk + kActivationSums8Offset, sizeof sums8);
      for (int i = 0; i < 32; ++i) {
        int8_t q = static_cast<int8_t>(want[2 + i]);
        EXPECT_EQ(static_cast<int8_t>(blk[kActivationQuantsOffset + i]), q);
        EXPECT_LE(std::abs(q), 127);
        wantSum += q;
        wantSums8[i / 8] = static_cast<int16_t>(wantSums8[i / 8] + q);
      }
      EXPECT_EQ(sum, wantSum);
      for (int s = 0; s < 4; ++s)
        EXPECT_EQ(sums8[s], wantSums8[s]) << "sum of 8 #" << s;
    }
  }
}

TEST(Packing, ActivationsRefuseShortBuffers) {
  std::vector<float> x(64);
  std::vector<uint8_t> out(2 * kActivationBlockBytes);
  EXPECT_TRUE(packActivations(x, 2, 32, 32, out).ok());
  EXPECT_FALSE(packActivations(x, 2, 32, 40, out).ok()); // x too short
  EXPECT_FALSE(packActivations(x, 1, 32, 32, out).ok()); // dst too long
}

// The K-quants and IQ2_XXS: every layout decodes bit for bit like the file
// rows and unpacks to the file bytes, for K of 1 and 3 super-blocks and n
// both a multiple of the group and not; rows with extreme scales and mins
// included.
TEST(Packing, SuperBlocksDecodeAsTheReferenceAndRoundTrip) {
  for (Format f : {Format::Q4_K, Format::Q5_K, Format::Q6_K, Format::IQ2_XXS,
                   Format::IQ1_S, Format::IQ1_M})
    for (WeightCoding coding :
         {WeightCoding::File, WeightCoding::Ternary, WeightCoding::CodeBook})
      for (int rows : {1, 4, 8, 16})
        for (int64_t n : {1, 5, 16, 19})
          for (int64_t k : {256, 768}) {
            if (!hasWeightCoding(f, coding))
              continue;
            PackedLayout layout{f, rows, LaneEncoding::Unsigned, coding};
            SCOPED_TRACE(layoutName(layout) + " n=" + std::to_string(n) +
                         " k=" + std::to_string(k));
            std::vector<uint8_t> file = randomRows(f, n, k, 7 + n);
            // Row 0's first super-block: every scale byte 0xff (scales and
            // mins 63, Q6_K's scales -1), d = -65504 and dmin = 65504.
            uint8_t *b0 = file.data();
            const int64_t hdr = fileScaleOffset(f);
            for (int64_t j = 0; j < packedScaleBytes(f); ++j)
              b0[hdr + j] = 0xff;
            const int64_t dAt = f == Format::Q6_K ? hdr + 16 : 0;
            b0[dAt + 1] = 0xfb; // d = 0xfbff
            if (f != Format::Q6_K)
              b0[3] = 0x7b; // dmin = 0x7bff
            packAndCheck(layout, file, n, k);
          }
}

// The float formats: rows end in a zero-padded block (K = 33 and 100 are no
// multiple of 32 bf16 or 16 f32), decode as the file decodes, round-trip, and
// put element 2g and 2g + 1 (bf16) or g (f32) of each row in K-group g.
TEST(Packing, FloatLayoutsPadAndRoundTrip) {
  for (Format f : {Format::BF16, Format::F32})
    for (int rows : {1, 4, 8, 16})
      for (int64_t n : {1, 5, 19})
        for (int64_t k : {33, 100, 256}) {
          PackedLayout layout{f, rows, LaneEncoding::Unsigned};
          SCOPED_TRACE(layoutName(layout) + " n=" + std::to_string(n) +
                       " k=" + std::to_string(k));
          std::vector<uint8_t> file = randomRows(f, n, k, 11 + n);
          std::vector<uint8_t> packed = packAndCheck(layout, file, n, k);
          ASSERT_FALSE(HasFailure());
          const int64_t kBlocks = packedKBlocks(f, k);
          const int64_t groups = (n + rows - 1) / rows;
          ASSERT_EQ(static_cast<int64_t>(packed.size()),
                    groups * kBlocks * packedBlockBytes(layout));
          // Element e of row r: block e / B, K-group (e % B) / per, byte
          // (e % per) * width of the row's 4 bytes; past K, zeros.
          const int64_t width = formatInfo(f).blockBytes;
          const int64_t per = 4 / width, blockElems = 64 / width;
          for (int64_t r = 0; r < n; ++r)
            for (int64_t e = 0; e < kBlocks * blockElems; ++e) {
              const int64_t at =
                  ((r / rows) * kBlocks + e / blockElems) *
                      packedBlockBytes(layout) +
                  ((e % blockElems) / per * rows + r % rows) * 4 +
                  (e % per) * width;
              for (int64_t byte = 0; byte < width; ++byte)
                ASSERT_EQ(packed[at + byte],
                          e < k ? file[(r * k + e) * width + byte] : 0)
                    << "row " << r << ", element " << e;
            }
        }
}

// Q4_K's header fields sit side by side across the group's rows, then the
// file's nibble pairs as [g][r][4].
TEST(Packing, Q8KActivationsMatchTheReferenceQuantizer) {
  const int64_t m = 4, k = 512, ldx = 520;
  std::vector<float> x = gaussian(static_cast<size_t>(m * ldx), 13, 3.0f);
  std::fill_n(x.begin() + ldx + 256, 256, 0.0f); // an all-zero block
  x[2 * ldx + 7] = 40.0f;                        // a tie: +40 first
  x[2 * ldx + 9] = -40.0f;
  x[3 * ldx + 3] = -50.0f; // a negative extreme
  std::vector<uint8_t> packed(m * *packedActivationBytes(Format::Q8_K, k));
  ASSERT_TRUE(packActivations(Format::Q8_K, x, m, k, ldx, packed).ok());
  for (int64_t j = 0; j < m; ++j) {
    std::vector<uint8_t> ref =
        activation(Format::Q8_K, std::span(x).subspan(j * ldx, k));
    for (int64_t b = 0; b < k / 256; ++b) {
      const uint8_t *blk = packed.data() + (j * k / 256 + b) * 292;
      const uint8_t *want = ref.data() + b * 292;
      EXPECT_EQ(std::memcmp(blk + kQ8KActivationScaleOffset, want, 4), 0);
      EXPECT_EQ(std::memcmp(blk + kQ8KActivationQuantsOffset, want + 4, 256),
                0);
      EXPECT_EQ(std::memcmp(blk + kQ8KActivationSumsOffset, want + 260, 32), 0);
    }
  }
}

} // namespace
} // namespace kf
