// The packed layouts of the formats with their own (docs/codegen.md, "Packed
// weight layouts"): the K-quants' headers, the IQ grid formats' indices, the
// IQ1 ternary and IQ2_XXS code book transcodings, and Kernelforge's own
// formats' K-groups, each byte where the layout says.
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

using testing::dequantized;
using testing::gaussian;
using testing::packAndCheck;
using testing::quantized;
using testing::randomRows;

TEST(Packing, Q4KLayout) {
  std::vector<uint8_t> file = randomRows(Format::Q4_K, 4, 256, 3);
  PackedLayout layout{Format::Q4_K, 4, LaneEncoding::Unsigned};
  std::vector<uint8_t> packed = *packWeights(layout, file, 4, 256);
  ASSERT_EQ(packed.size(), 4u * 144);
  for (int r = 0; r < 4; ++r) {
    const uint8_t *row = file.data() + r * 144;
    EXPECT_EQ(packed[2 * r], row[0]);         // d
    EXPECT_EQ(packed[8 + 2 * r + 1], row[3]); // dmin's high byte
    for (int t = 0; t < 12; ++t)
      EXPECT_EQ(packed[16 + t * 4 + r], row[4 + t]);
    for (int g = 0; g < 32; ++g)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(packed[64 + (g * 4 + r) * 4 + i], row[16 + 4 * g + i]);
  }
}

// IQ2_XXS's fields sit side by side across the group's rows: d, the scale
// nibbles, then per grid slot the indices and the sign masks, each mask
// ksigns_iq2xs of the file's 7-bit index (its bit 7 the parity of the rest).
TEST(Packing, Iq2XxsLayout) {
  const int rows = 4;
  std::vector<uint8_t> file = randomRows(Format::IQ2_XXS, rows, 256, 3);
  PackedLayout layout{Format::IQ2_XXS, rows};
  std::vector<uint8_t> packed = *packWeights(layout, file, rows, 256);
  ASSERT_EQ(packed.size(), rows * 70u);
  for (int r = 0; r < rows; ++r) {
    const uint8_t *row = file.data() + r * 66;
    EXPECT_EQ(packed[2 * r], row[0]);
    EXPECT_EQ(packed[2 * r + 1], row[1]);
    for (int g = 0; g < 8; ++g) {
      uint32_t signsScale;
      std::memcpy(&signsScale, row + 2 + 8 * g + 4, 4);
      EXPECT_EQ(packed[(2 + g / 2) * rows + r] >> 4 * (g % 2) & 15,
                signsScale >> 28);
      for (int l = 0; l < 4; ++l) {
        EXPECT_EQ(packed[(6 + 2 * (4 * g + l)) * rows + r], row[2 + 8 * g + l]);
        uint8_t index = signsScale >> 7 * l & 127;
        uint8_t mask = packed[(7 + 2 * (4 * g + l)) * rows + r];
        EXPECT_EQ(mask & 127, index);
        EXPECT_EQ(mask >> 7, std::popcount(index) & 1);
      }
    }
  }
}

// IQ1_S and IQ1_M keep the file's bytes, each field's rows side by side:
// IQ1_S d [R], qh [8][R] (u16), qs [32][R]; IQ1_M its scale words [4][R]
// (u16), qh [16][R], qs [32][R].
TEST(Packing, Iq1Layouts) {
  const int rows = 4;
  for (Format f : {Format::IQ1_S, Format::IQ1_M}) {
    SCOPED_TRACE(formatInfo(f).name);
    const int bytes = formatInfo(f).blockBytes;
    std::vector<uint8_t> file = randomRows(f, rows, 256, 5);
    PackedLayout layout{f, rows};
    std::vector<uint8_t> packed = *packWeights(layout, file, rows, 256);
    ASSERT_EQ(packed.size(), static_cast<size_t>(rows * bytes));
    for (int r = 0; r < rows; ++r) {
      const uint8_t *row = file.data() + r * bytes;
      if (f == Format::IQ1_S) {
        EXPECT_EQ(packed[2 * r + 1], row[1]); // d
        for (int g = 0; g < 8; ++g)
          EXPECT_EQ(packed[2 * rows + 2 * (g * rows + r) + 1],
                    row[34 + 2 * g + 1]); // qh's high byte
        for (int s = 0; s < 32; ++s)
          EXPECT_EQ(packed[(18 + s) * rows + r], row[2 + s]);
      } else {
        for (int p = 0; p < 4; ++p)
          EXPECT_EQ(packed[2 * (p * rows + r) + 1], row[48 + 2 * p + 1]);
        for (int i = 0; i < 16; ++i)
          EXPECT_EQ(packed[(8 + i) * rows + r], row[32 + i]);
        for (int s = 0; s < 32; ++s)
          EXPECT_EQ(packed[(24 + s) * rows + r], row[s]);
      }
    }
  }
}

// The IQ1 ternary layouts hold each weight's grid value v as the code v + 1,
// weight 16t + 4j + i's in bits 2j.. of byte i of K-group t, and the scales
// and delta signs in per-row words: IQ1_S its d, then group g's 3-bit scale
// in bits 3g.. and its delta sign in bit 24 + g; IQ1_M the file's scale
// words, then slot s of row r's delta in bit sR + r of the delta bits (set:
// positive). Blocks reach every grid index, scale and sign.
TEST(Packing, Iq1TernaryLayouts) {
  const int rows = 4;
  for (Format f : {Format::IQ1_S, Format::IQ1_M}) {
    SCOPED_TRACE(formatInfo(f).name);
    const bool m = f == Format::IQ1_M;
    const int bytes = formatInfo(f).blockBytes;
    const int64_t blocks = 16, k = 256 * blocks; // 512 slots per row
    std::mt19937 rng(3);
    std::vector<uint8_t> file(rows * blocks * bytes);
    for (uint8_t &b : file)
      b = static_cast<uint8_t>(rng());
    // Slot s of row r's block b uses grid index (r * blocks + b) * 32 + s.
    std::vector<int> index(rows * blocks * 32);
    for (size_t i = 0; i < index.size(); ++i) {
      index[i] = static_cast<int>(i % 2048);
      uint8_t *block = file.data() + i / 32 * bytes;
      const int s = i % 32, g = s / 4, l = s % 4;
      if (m) {
        block[s] = static_cast<uint8_t>(index[i]);
        block[32 + s / 2] =
            static_cast<uint8_t>((block[32 + s / 2] & ~(7 << 4 * (s % 2))) |
                                 (index[i] >> 8) << 4 * (s % 2));
      } else {
        block[2 + s] = static_cast<uint8_t>(index[i]);
        uint16_t qh;
        std::memcpy(&qh, block + 34 + 2 * g, 2);
        qh = static_cast<uint16_t>((qh & ~(7 << 3 * l)) | (index[i] >> 8)
                                                              << 3 * l);
        std::memcpy(block + 34 + 2 * g, &qh, 2);
      }
    }
    const PackedLayout layout{f, rows, LaneEncoding::Unsigned,
                              WeightCoding::Ternary};
    std::vector<uint8_t> packed = *packWeights(layout, file, rows, k);
    const int64_t blockBytes = packedBlockBytes(layout);
    ASSERT_EQ(packed.size(), static_cast<size_t>(blocks * blockBytes));
    for (int r = 0; r < rows; ++r)
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *row = file.data() + (r * blocks + b) * bytes;
        const uint8_t *pb = packed.data() + b * blockBytes;
        uint32_t word;
        if (m) {
          for (int p = 0; p < 4; ++p)
            EXPECT_EQ(std::memcmp(pb + 2 * (p * rows + r), row + 48 + 2 * p, 2),
                      0);
          for (int s = 0; s < 32; ++s) {
            const int bit = s * rows + r;
            EXPECT_EQ(pb[8 * rows + bit / 8] >> bit % 8 & 1,
                      ~row[32 + s / 2] >> (4 * (s % 2) + 3) & 1u);
          }
        } else {
          EXPECT_EQ(std::memcmp(pb + 2 * r, row, 2), 0);
          std::memcpy(&word, pb + 2 * rows + 4 * r, 4);
          for (int g = 0; g < 8; ++g) {
            const int qh = row[34 + 2 * g] | row[35 + 2 * g] << 8;
            EXPECT_EQ(word >> 3 * g & 7, (qh >> 12 & 7u));
            EXPECT_EQ(word >> (24 + g) & 1, (qh >> 15 & 1u));
          }
        }
        const int64_t codes = (m ? 12 : 6) * rows;
        for (int w = 0; w < 256; ++w) {
          const uint64_t entry =
              quant::grids::iq1s_grid[index[(r * blocks + b) * 32 + w / 8]];
          const int v = static_cast<int8_t>(entry >> 8 * (w % 8));
          const int t = w / 16, j = w % 16 / 4, i = w % 4;
          EXPECT_EQ(pb[codes + (t * rows + r) * 4 + i] >> 2 * j & 3, v + 1)
              << "row " << r << ", block " << b << ", weight " << w;
        }
      }
    // A code no grid entry has (3) is refused, naming where it is.
    packed[(m ? 12 : 6) * rows + 4 + blockBytes] |= 3;
    std::vector<uint8_t> back(file.size());
    absl::Status s = unpackWeights(layout, packed, rows, k, back);
    EXPECT_EQ(s.message(),
              absl::StrCat("unpack_weights: ", layoutName(layout), " [4, ", k,
                           "]: row 1, super-block 1: a slot's 2-bit codes "
                           "are no entry of iq1s_grid"));
  }
}

// IQ2_XXS's code book layout for 16 rows: per sub-block g, 64 index bytes
// with qword q holding rows 2q, 2q + 1 of each slot (slot 4g + l's at bytes
// 2l, 2l + 1), then per slot l and K-group h the 64-bit mask whose bit 4r + t
// negates weight 4h + t of row r. Every index and sign pattern is reached, each
// mask bit checked at its place.
TEST(Packing, Iq2XxsCodeBookLayout) {
  const int rows = 16;
  const int64_t blocks = 8, k = 256 * blocks;
  std::mt19937 rng(5);
  std::vector<uint8_t> file(rows * blocks * 66);
  for (uint8_t &b : file)
    b = static_cast<uint8_t>(rng());
  for (size_t blk = 0; blk < file.size() / 66; ++blk)
    file[blk * 66 + 1] &= 0xbf; // a finite d
  const PackedLayout layout{Format::IQ2_XXS, rows, LaneEncoding::Unsigned,
                            WeightCoding::CodeBook};
  std::vector<uint8_t> packed = *packWeights(layout, file, rows, k);
  const int64_t blockBytes = packedBlockBytes(layout);
  ASSERT_EQ(blockBytes, rows * 70);
  for (int r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *row = file.data() + (r * blocks + b) * 66;
      const uint8_t *pb = packed.data() + b * blockBytes;
      EXPECT_EQ(std::memcmp(pb + 2 * r, row, 2), 0);
      for (int g = 0; g < 8; ++g) {
        const uint8_t *q = row + 2 + 8 * g;
        uint32_t signsScale;
        std::memcpy(&signsScale, q + 4, 4);
        EXPECT_EQ(pb[(2 + g / 2) * rows + r] >> 4 * (g % 2) & 15,
                  signsScale >> 28);
        const uint8_t *step = pb + 96 + 128 * g;
        for (int l = 0; l < 4; ++l) {
          EXPECT_EQ(step[8 * (r / 2) + 2 * l + r % 2], q[l])
              << "row " << r << ", block " << b << ", slot " << 4 * g + l;
          const uint8_t signs =
              quant::grids::ksigns_iq2xs[signsScale >> 7 * l & 127];
          for (int h = 0; h < 2; ++h) {
            uint64_t mask;
            std::memcpy(&mask, step + 64 + 8 * (2 * l + h), 8);
            for (int t = 0; t < 4; ++t)
              EXPECT_EQ(mask >> (4 * r + t) & 1, signs >> (4 * h + t) & 1u)
                  << "row " << r << ", block " << b << ", slot " << 4 * g + l
                  << ", weight " << 4 * h + t;
          }
        }
      }
    }
}

// Random file blocks of FRACTAL64 or VQ3_64 (every bit pattern the quantizer
// may never write) with a finite d, the exponent field below 31.
std::vector<uint8_t> randomPrivateRows(Format f, int64_t n, int64_t k,
                                       uint32_t seed) {
  std::mt19937 rng(seed);
  const int bytes = formatInfo(f).blockBytes;
  std::vector<uint8_t> file(n * (k / 64) * bytes);
  for (uint8_t &b : file)
    b = static_cast<uint8_t>(rng());
  for (size_t blk = 0; blk < file.size() / bytes; ++blk)
    file[blk * bytes + 1] &= 0xbf; // d's exponent bit 4 cleared: finite
  return file;
}

// FRACTAL64 and VQ3_64 keep every bit of random blocks: they decode bit for
// bit like the file and unpack to it, for several groups and K blocks.
TEST(Packing, PrivateFormatsKeepEveryBit) {
  for (Format f : {Format::FRACTAL64, Format::VQ3_64})
    for (int rows : {1, 4, 8, 16})
      for (int64_t n : {1, 5, 19})
        for (int64_t k : {64, 192}) {
          PackedLayout layout{f, rows, LaneEncoding::Unsigned};
          SCOPED_TRACE(layoutName(layout) + " n=" + std::to_string(n) +
                       " k=" + std::to_string(k));
          packAndCheck(layout, randomPrivateRows(f, n, k, 17 + n), n, k);
        }
}

// The private formats' helpers agree with the generic ones: FRACTAL64's
// header is d and its sub-scale word, its low and high K-groups are K-groups
// 0..3 and 4..5; VQ3_64 has no header, slot t < 20 is byte t % 4 of K-group
// t / 4, and K-group 5 holds the rows' pairs of slots 20 and 21, then their
// d's.
TEST(Packing, PrivateHelpersMatchTheKGroups) {
  for (int rows : {1, 4, 8, 16}) {
    const PackedLayout f{Format::FRACTAL64, rows};
    const PackedLayout v{Format::VQ3_64, rows};
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(packedScaleOffset(f, j, r), fractal64DOffset(r) + j);
      for (int j = 2; j < 6; ++j)
        EXPECT_EQ(packedScaleOffset(f, j, r),
                  fractal64ScalesOffset(f, r) + j - 2);
      for (int t = 0; t < 4; ++t)
        EXPECT_EQ(packedKgroupOffset(f, t, r), fractal64LowOffset(f, t, r));
      for (int q = 0; q < 2; ++q)
        EXPECT_EQ(packedKgroupOffset(f, 4 + q, r),
                  fractal64HighOffset(f, q, r));
      for (int t = 0; t < 20; ++t)
        EXPECT_EQ(vq3_64SlotOffset(v, t, r),
                  packedKgroupOffset(v, t / 4, r) + t % 4);
      for (int t = 20; t < 22; ++t)
        EXPECT_EQ(vq3_64SlotOffset(v, t, r),
                  packedKgroupOffset(v, 5, 0) + 2 * r + t - 20);
      EXPECT_EQ(vq3_64DOffset(v, r),
                packedKgroupOffset(v, 5, 0) + 2 * rows + 2 * r);
    }
    EXPECT_EQ(fractal64HighOffset(f, 1, rows - 1) + 4, packedBlockBytes(f));
    EXPECT_EQ(vq3_64DOffset(v, rows - 1) + 2, packedBlockBytes(v));
  }
}

// FRACTAL64: one index bit set in row 2's file block lands where the layout
// says, and nothing else moves: d [R] at 2r, the sub-scale words [R] at
// 2R + 4r, low K-group t row r byte i at 6R + (tR + r) * 4 + i, bits 2j and
// 2j + 1 weight 16t + 4j + i's low bits; high K-group q at 22R + (qR + r) * 4
// + i, bit 4p + j weight 16(2q + p) + 4j + i's high bit.
TEST(Packing, Fractal64Layout) {
  const int rows = 4, r = 2, n = 3;
  const PackedLayout layout{Format::FRACTAL64, rows};
  const uint16_t d = fp32ToFp16(0.5f);
  const uint32_t scales = 0x9a3c51e7;
  for (int w = 0; w < 64; ++w)
    for (int bit = 0; bit < 3; ++bit) { // index bit 0, 1 (low) or 2 (high)
      SCOPED_TRACE("weight " + std::to_string(w) + ", index bit " +
                   std::to_string(bit));
      std::vector<uint8_t> file(n * 30, 0);
      uint8_t *row = file.data() + r * 30;
      std::memcpy(row, &d, 2);
      std::memcpy(row + 2, &scales, 4);
      if (bit < 2)
        row[6 + w % 16] = static_cast<uint8_t>(1 << (2 * (w / 16) + bit));
      else
        row[22 + w / 8] = static_cast<uint8_t>(1 << w % 8);
      std::vector<uint8_t> want(rows * 30, 0);
      std::memcpy(&want[2 * r], &d, 2);
      std::memcpy(&want[2 * rows + 4 * r], &scales, 4);
      const int t = w / 16, j = w % 16 / 4, i = w % 4;
      if (bit < 2)
        want[6 * rows + (t * rows + r) * 4 + i] =
            static_cast<uint8_t>(1 << (2 * j + bit));
      else
        want[22 * rows + ((t / 2) * rows + r) * 4 + i] =
            static_cast<uint8_t>(1 << (4 * (t % 2) + j));
      std::vector<uint8_t> packed = packAndCheck(layout, file, n, 64);
      EXPECT_EQ(packed, want);
      // The decoded weight: index 1 << bit, the others index 0.
      std::vector<float> y(n * 64);
      ASSERT_TRUE(dequantizePacked(layout, packed, n, 64, y).ok());
      const int s = 4 + static_cast<int>((scales >> 4 * (w / 8)) & 15);
      EXPECT_EQ(y[r * 64 + w], 0.5f * s * kFractal64Levels[1 << bit]);
      if (HasFailure())
        return;
    }
}

// VQ3_64: K-group q < 5 holds slots 4q..4q + 3 (the file's bytes 2 + 4q..),
// their low 6 bits as stored and the sign (the file's bit 7) at bit 6; K-group
// 5 the rows' slots 20 and 21 (bytes 2r, 2r + 1: their low 6 bits), then the
// rows' d (bytes 2R + 2r, 2R + 2r + 1: the file's). The 24 sub-scale stream
// bits (the file's bit 6 of slots 0..21, then bit 7 of slots 20 and 21) fill
// the bits above: bit i of u_k (stream bit 3k + i) at bit 7 of byte k of
// K-group i for k < 4, of byte k - 4 of K-group 3 + i for k >= 4 and i < 2,
// else at bit 6 (k = 4, 5) or 7 (k = 6, 7) of slot 20 + k % 2.
TEST(Packing, Vq3_64Layout) {
  const int rows = 4;
  for (bool quantizer : {true, false}) {
    SCOPED_TRACE(quantizer ? "quantized rows" : "random bytes");
    std::vector<uint8_t> file =
        quantizer ? randomRows(Format::VQ3_64, rows, 128, 3)
                  : randomPrivateRows(Format::VQ3_64, rows, 128, 3);
    const PackedLayout layout{Format::VQ3_64, rows};
    std::vector<uint8_t> packed = packAndCheck(layout, file, rows, 128);
    ASSERT_EQ(packed.size(), 2u * rows * 24);
    for (int b = 0; b < 2; ++b)
      for (int r = 0; r < rows; ++r) {
        const uint8_t *row = file.data() + (r * 2 + b) * 24;
        const uint8_t *block = packed.data() + b * rows * 24;
        auto at = [&](int q, int i) { return block[(q * rows + r) * 4 + i]; };
        auto slot = [&](int t) {
          return t < 20 ? at(t / 4, t % 4) : block[20 * rows + 2 * r + t - 20];
        };
        for (int t = 0; t < 22; ++t) {
          const uint8_t byte = slot(t);
          EXPECT_EQ(byte & 0x3f, row[2 + t] & 0x3f) << "slot " << t;
          if (t < 20) {
            EXPECT_EQ(byte >> 6 & 1, row[2 + t] >> 7) << "slot " << t;
          }
        }
        for (int s = 0; s < 24; ++s) {
          const int want = s < 22 ? row[2 + s] >> 6 & 1 : row[s] >> 7;
          const int k = s / 3, i = s % 3;
          const int got = k < 4   ? at(i, k) >> 7
                          : i < 2 ? at(3 + i, k - 4) >> 7
                                  : slot(20 + k % 2) >> (k < 6 ? 6 : 7) & 1;
          EXPECT_EQ(got, want) << "stream bit " << s;
        }
        EXPECT_EQ(block[22 * rows + 2 * r], row[0]);
        EXPECT_EQ(block[22 * rows + 2 * r + 1], row[1]);
      }
  }
}

// A padding row of FRACTAL64 or VQ3_64 is all zero bytes and decodes to 0.
TEST(Packing, PrivatePaddingRowsAreZero) {
  for (Format f : {Format::FRACTAL64, Format::VQ3_64}) {
    SCOPED_TRACE(formatInfo(f).name);
    const PackedLayout layout{f, 4};
    const int bytes = formatInfo(f).blockBytes;
    std::vector<uint8_t> packed =
        *packWeights(layout, randomPrivateRows(f, 1, 64, 9), 1, 64);
    ASSERT_EQ(packed.size(), 4u * bytes);
    std::vector<uint8_t> file(4 * bytes);
    ASSERT_TRUE(unpackWeights(layout, packed, 4, 64, file).ok());
    for (int i = bytes; i < 4 * bytes; ++i)
      EXPECT_EQ(file[i], 0) << "byte " << i;
    int nonzero = 0; // row 0's bytes are the only ones that may be set
    for (uint8_t b : packed)
      nonzero += b != 0;
    EXPECT_LE(nonzero, bytes);
    std::vector<float> y(4 * 64);
    ASSERT_TRUE(dequantizePacked(layout, packed, 4, 64, y).ok());
    for (int i = 64; i < 4 * 64; ++i)
      EXPECT_EQ(y[i], 0.0f) << "element " << i;
  }
}

// Packed Q8_K activations hold the reference Q8_K block's scale, quants and
// sums (a negative and a positive extreme, ties between them, and an all-zero
// block included).

} // namespace
} // namespace kf
