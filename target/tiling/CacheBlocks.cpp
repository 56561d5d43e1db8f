//===- CacheBlocks.cpp - L2 row blocks and L1 K blocks of a matmul --------===//

#include "kf/Tiling/CacheBlocks.h"

#include "kf/runtime/packed_layout.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace kf::tiling {
namespace {

/// Bytes of `elems` elements of `format`; `elems` is a whole number of
/// blocks.
int64_t bytesOf(const FormatInfo &format, int64_t elems) {
  assert(elems % format.blockElems == 0 && "not a whole number of blocks");
  return elems / format.blockElems * format.blockBytes;
}

int64_t ceilDiv(int64_t a, int64_t b) { return llvm::divideCeilSigned(a, b); }

int64_t roundUp(int64_t a, int64_t multiple) {
  return ceilDiv(a, multiple) * multiple;
}

/// `total` split into the fewest parts of at most `limit` (a multiple of
/// `granule`), of equal size rounded up to `granule`: equal blocks leave no
/// short tail block, and the rounded size still fits the limit.
int64_t balancedBlock(int64_t total, int64_t limit, int64_t granule) {
  return roundUp(ceilDiv(total, ceilDiv(total, limit)), granule);
}

/// Bytes of `elems` activations of `format` as the kernels read them: the
/// packed blocks (kf::activationLayout: Q8_0's 48 bytes per 32, Q8_K's 292
/// per 256, 64-byte float blocks) for the activation formats kernels take,
/// else the format's own blocks.
int64_t activationBytes(const FormatInfo &format, int64_t elems) {
  if (format.format == Format::Q8_0 || format.format == Format::Q8_K ||
      isFloatFormat(format.format))
    return packedActivationColumnBytes(format.format, elems);
  return bytesOf(format, elems);
}

} // namespace

int64_t decodedRowBlockBytes(Format format) {
  const int64_t lanes = packedBlockElems(format);
  // Q4_K's and Q5_K's 8 mins follow the lanes as 4 int16 pairs.
  if (format == Format::Q4_K || format == Format::Q5_K)
    return lanes + 4 * 4;
  return lanes;
}

int64_t getKGranule(Format format) {
  const FormatInfo &weight = formatInfo(format);
  const FormatInfo &activation = formatInfo(weight.dotFormat);
  int64_t blocks = std::lcm(static_cast<int64_t>(weight.blockElems),
                            static_cast<int64_t>(activation.blockElems));
  return std::lcm(blocks, int64_t{32});
}

CacheBlocks blockCaches(const CacheBlockProblem &problem) {
  const FormatInfo &weight = formatInfo(problem.format);
  const FormatInfo &activation = formatInfo(weight.dotFormat);
  assert(weight.role == FormatRole::Weight && "not a matmul weight");
  assert(problem.rows > 0 && problem.columns > 0 && problem.threads > 0 &&
         problem.n > 0 && problem.k > 0 && "empty problem");

  int64_t l1K;
  if (problem.l1K) {
    l1K = *problem.l1K;
  } else {
    int64_t granule = getKGranule(problem.format);
    int64_t tileBytes = problem.columns * activationBytes(activation, granule);
    int64_t granules = std::max<int64_t>(
        1, static_cast<int64_t>(problem.l1dBytes / 2) / tileBytes);
    int64_t limit = granules * granule;
    l1K = problem.k <= limit ? problem.k
                             : balancedBlock(problem.k, limit, granule);
  }

  // A row's weights in the packed layout (the float formats' as the file's:
  // their last block's padding aside, and l1K need not be a whole block).
  int64_t rowBytes =
      isFloatFormat(problem.format)
          ? bytesOf(weight, l1K)
          : l1K / weight.blockElems *
                packedRowBlockBytes({problem.format, 1, LaneEncoding::Unsigned,
                                     problem.coding});
  int64_t rowsFit = static_cast<int64_t>(problem.l2Bytes / 2) / rowBytes;
  if (problem.decodeScratchBytes) {
    // Whole packed blocks decoded (l1K is a number of them, or K).
    int64_t decodedBytes = ceilDiv(l1K, packedBlockElems(problem.format)) *
                           decodedRowBlockBytes(problem.format);
    rowsFit = std::min(static_cast<int64_t>(problem.l2Bytes / 2) /
                           (rowBytes + decodedBytes),
                       *problem.decodeScratchBytes / decodedBytes);
  }
  int64_t limit = std::max<int64_t>(1, rowsFit / problem.rows) * problem.rows;
  int64_t groups = ceilDiv(problem.n, problem.rows);
  int64_t share = ceilDiv(groups, problem.threads) * problem.rows;
  int64_t l2Rows =
      share <= limit ? share : balancedBlock(share, limit, problem.rows);
  return {l2Rows, l1K};
}

} // namespace kf::tiling
