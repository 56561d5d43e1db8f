// blockCaches over every weight format, named target, row interleave, column
// tile, thread count and a spread of shapes with K and N tails: the blocks
// stay inside the matrix and on block boundaries, fit their half of the
// cache (or are the smallest block there is), and split K and a thread's
// rows into the fewest blocks, with no short tail.
#include "kf/Tiling/CacheBlocks.h"
#include "kf/Target/TargetInfo.h"
#include "kf/runtime/packed_layout.h"

#include "gtest/gtest.h"

#include <iostream>
#include <vector>

using namespace kf;
using namespace kf::tiling;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

int64_t bytesOf(const FormatInfo &format, int64_t elems) {
  return elems / format.blockElems * format.blockBytes;
}

/// What the kernels read of `elems` activations: the packed blocks of the
/// formats they take (Q8_0's 48 bytes per 32), else the format's own.
int64_t activationBytes(const FormatInfo &format, int64_t elems) {
  if (format.format == Format::Q8_0 || format.format == Format::Q8_K ||
      isFloatFormat(format.format))
    return packedActivationColumnBytes(format.format, elems);
  return bytesOf(format, elems);
}

/// The K values of a format: one block, around the granule and the L1
/// limits, and model sizes, each also with one block more (a K tail).
std::vector<int64_t> kValues(const FormatInfo &format) {
  std::vector<int64_t> ks;
  for (int64_t base : {1, 2, 3, 7, 8, 9, 31, 64, 100, 512, 700, 1024, 2048,
                       4096, 7168, 16384}) {
    int64_t k = base * 256;
    if (k % format.blockElems != 0)
      continue;
    ks.push_back(k);
    ks.push_back(k + format.blockElems);
  }
  ks.push_back(format.blockElems);
  return ks;
}

void checkBlocks(const CacheBlockProblem &p, const CacheBlocks &b,
                 int64_t &failures) {
  const FormatInfo &weight = formatInfo(p.format);
  const FormatInfo &activation = formatInfo(weight.dotFormat);
  int64_t granule = getKGranule(p.format);
  int64_t l1Half = static_cast<int64_t>(p.l1dBytes / 2);
  int64_t l2Half = static_cast<int64_t>(p.l2Bytes / 2);
  auto tileFits = [&](int64_t k) {
    return p.columns * activationBytes(activation, k) <= l1Half;
  };
  // A row's weights as packed (IQ2_XXS's sign masks, IQ1's ternary codes).
  const int64_t rowBytes =
      isFloatFormat(p.format)
          ? bytesOf(weight, b.l1K)
          : b.l1K / weight.blockElems *
                packedRowBlockBytes(
                    {p.format, 1, LaneEncoding::Unsigned, p.coding});
  // Decoding once, a row's decoded bytes join its packed ones in L2, and the
  // decoded block stays within its scratch.
  const int64_t decodedBytes =
      p.decodeScratchBytes
          ? roundUp(b.l1K, packedBlockElems(p.format)) /
                packedBlockElems(p.format) * decodedRowBlockBytes(p.format)
          : 0;
  auto rowsFit = [&](int64_t rows) {
    return rows * (rowBytes + decodedBytes) <= l2Half &&
           rows * decodedBytes <= p.decodeScratchBytes.value_or(0);
  };
  auto fail = [&]() -> std::ostream & {
    ++failures;
    return std::cerr << weight.name
                     << (p.coding == WeightCoding::Ternary ? " ternary" : "")
                     << " rows " << p.rows << " columns " << p.columns << " N "
                     << p.n << " K " << p.k << " threads " << p.threads
                     << " l1d " << p.l1dBytes << " l2 " << p.l2Bytes
                     << (p.decodeScratchBytes ? " decode once" : "")
                     << " -> l2_rows " << b.l2Rows << " l1_k " << b.l1K << ": ";
  };

  if (b.l1K <= 0 || b.l1K > p.k || b.l1K % weight.blockElems != 0)
    fail() << "l1_k outside K or off the block grid\n";
  if (b.l1K == p.k) {
    if (!tileFits(p.k) && p.k > granule)
      fail() << "all of K does not fit L1\n";
  } else {
    int64_t blocks = ceilDiv(p.k, b.l1K);
    int64_t tail = p.k - (blocks - 1) * b.l1K;
    if (b.l1K % granule != 0)
      fail() << "l1_k not a multiple of the granule " << granule << "\n";
    if (!tileFits(b.l1K) && b.l1K != granule)
      fail() << "activation tile does not fit half of L1\n";
    if (tileFits(roundUp(ceilDiv(p.k, blocks - 1), granule)))
      fail() << "K fits in fewer blocks than " << blocks << "\n";
    if (tail <= 0 || tail <= b.l1K - blocks * granule)
      fail() << "K tail " << tail << " is short\n";
  }

  int64_t share = ceilDiv(ceilDiv(p.n, p.rows), p.threads) * p.rows;
  if (b.l2Rows <= 0 || b.l2Rows % p.rows != 0 || b.l2Rows > share)
    fail() << "l2_rows outside a thread's " << share
           << " rows or off the row groups\n";
  if (!rowsFit(b.l2Rows) && b.l2Rows != p.rows)
    fail() << "weight block does not fit half of L2\n";
  int64_t blocks = ceilDiv(share, b.l2Rows);
  if (blocks > 1 && rowsFit(roundUp(ceilDiv(share, blocks - 1), p.rows)))
    fail() << "a thread's rows fit in fewer blocks than " << blocks << "\n";
}

TEST(CacheBlocks, BoundsOverFormatsTargetsAndShapes) {
  int64_t failures = 0, cases = 0;
  for (const FormatInfo &format : allFormats()) {
    if (format.role != FormatRole::Weight)
      continue;
    for (llvm::StringRef name : kf::target::getNamedTargets()) {
      kf::target::TargetInfo target =
          llvm::cantFail(kf::target::lookupTarget(name));
      for (int64_t rows : {1, 4, 8, 16})
        for (int64_t columns : {1, 2, 3, 8})
          for (int64_t threads : {1, 2, 16})
            for (int64_t n : {1, 7, 16, 100, 2048, 4100, 129280})
              for (int64_t k : kValues(format))
                for (WeightCoding coding :
                     {WeightCoding::File, WeightCoding::Ternary})
                  for (bool decodeOnce : {false, true}) {
                    if (!hasWeightCoding(format.format, coding))
                      continue;
                    CacheBlockProblem p{.format = format.format,
                                        .coding = coding,
                                        .rows = rows,
                                        .columns = columns,
                                        .n = n,
                                        .k = k,
                                        .threads = threads,
                                        .l1dBytes = target.l1dBytes,
                                        .l2Bytes = target.l2Bytes};
                    if (decodeOnce)
                      p.decodeScratchBytes = 1 << 20;
                    checkBlocks(p, blockCaches(p), failures);
                    ++cases;
                    ASSERT_LT(failures, 20) << "stopping after 20 failures";
                  }
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
}

// [2048, 4096] in `format` on one thread: 16 rows, an 8-column tile, 48 KiB
// of L1d and `l2Bytes` of L2.
CacheBlockProblem oneThread(Format format, uint64_t l2Bytes) {
  return {.format = format,
          .rows = 16,
          .columns = 8,
          .n = 2048,
          .k = 4096,
          .threads = 1,
          .l1dBytes = 49152,
          .l2Bytes = l2Bytes};
}

// Caches too small for one granule of activations or one row group still
// give the smallest blocks.
TEST(CacheBlocks, TinyCaches) {
  CacheBlockProblem p = oneThread(Format::Q8_0, 1024);
  p.n = 4096;
  p.l1dBytes = 256;
  CacheBlocks b = blockCaches(p);
  EXPECT_EQ(b.l1K, 32);
  EXPECT_EQ(b.l2Rows, 16);
}

// A tuned L1 block is kept and the L2 block sized for it.
TEST(CacheBlocks, TunedL1Block) {
  CacheBlockProblem p = oneThread(Format::Q8_0, 1048576);
  p.l1K = 1024;
  CacheBlocks b = blockCaches(p);
  EXPECT_EQ(b.l1K, 1024);
  // 512 KiB of 1024-element Q8_0 rows (1088 bytes): 481 rows, 480 in row
  // groups of 16, split evenly over the 2048 rows: 5 blocks of 416.
  EXPECT_EQ(b.l2Rows, 416);
}

// Decoding once, the L2 block is sized for the packed and the decoded rows
// together, and the decoded block for the kernel's scratch.
TEST(CacheBlocks, DecodeOnceBlock) {
  CacheBlockProblem p = oneThread(Format::IQ2_XXS, 2097152);
  // 24 KiB of 8 Q8_K columns (292 bytes per 256) hold 2560 of K: two L1
  // blocks of 2048. 1 MiB of 2048-element IQ2_XXS rows (528 bytes) holds
  // 1984 rows: two blocks of 1024.
  CacheBlocks b = blockCaches(p);
  EXPECT_EQ(b.l1K, 2048);
  EXPECT_EQ(b.l2Rows, 1024);
  // With 2048 decoded bytes a row, 407 rows, 400 in row groups: 6 blocks of
  // 352 (704 KiB decoded, within a 1 MiB scratch).
  p.decodeScratchBytes = 1 << 20;
  b = blockCaches(p);
  EXPECT_EQ(b.l1K, 2048);
  EXPECT_EQ(b.l2Rows, 352);
  // A 512 KiB scratch holds 256 rows: 8 blocks of 256.
  p.decodeScratchBytes = 1 << 19;
  EXPECT_EQ(blockCaches(p).l2Rows, 256);
}

// The example of --kf-block-caches' description: Q8_0 [2048, 4096], an
// 8-column tile on znver5 with 16 threads.
TEST(CacheBlocks, DocumentedExample) {
  kf::target::TargetInfo znver5 =
      llvm::cantFail(kf::target::lookupTarget("znver5"));
  CacheBlockProblem p{.format = Format::Q8_0,
                      .rows = 16,
                      .columns = 8,
                      .n = 2048,
                      .k = 4096,
                      .threads = 16,
                      .l1dBytes = znver5.l1dBytes,
                      .l2Bytes = znver5.l2Bytes};
  CacheBlocks b = blockCaches(p);
  EXPECT_EQ(b.l1K, 2048);
  EXPECT_EQ(b.l2Rows, 128);
}

} // namespace
