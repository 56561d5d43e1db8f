//===- CacheBlocks.h - L2 row blocks and L1 K blocks of a matmul ----------===//
//
// The cache blocking --kf-block-caches decides (docs/codegen.md), as a plain
// function of the format table and the target's cache sizes so that its
// bounds can be tested over every format and shape.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TILING_CACHEBLOCKS_H
#define KF_TILING_CACHEBLOCKS_H

#include "kf/runtime/format.h"
#include "kf/runtime/packed_layout.h"

#include <cstdint>
#include <optional>

namespace kf::tiling {

struct CacheBlockProblem {
  /// The packed weight's format; its table row gives the weight bytes and,
  /// through its dot format, the activation bytes per K element.
  Format format;
  /// The weights' coding in the packed layout (IQ1's ternary codes take more
  /// bytes than the file's grid indices).
  WeightCoding coding = WeightCoding::File;
  /// Weight rows per micro-kernel: the layout's row interleave.
  int64_t rows;
  /// The widest column tile: the activation columns kept in L1 at once.
  int64_t columns;
  /// The matrix: N weight rows of K elements (K a multiple of the block).
  int64_t n, k;
  /// Threads the N rows are split over.
  int64_t threads;
  uint64_t l1dBytes, l2Bytes;
  /// An L1 K block decided already (by a tuning file): the L2 block is sized
  /// for it instead of the computed one.
  std::optional<int64_t> l1K;
  /// Set when the kernel decodes each row block once (MatmulKernelSpec::
  /// decodeOnce), to the most bytes it may decode a row block into
  /// (codegen::kMaxDecodeScratchBytes): the decoded row block
  /// (decodedRowBlockBytes per row and block) then stays within it and shares
  /// the L2 block with the packed weights it is decoded from.
  std::optional<int64_t> decodeScratchBytes;
};

struct CacheBlocks {
  int64_t l2Rows; ///< a multiple of `rows`, at most a thread's share of N
  int64_t l1K;    ///< K, or a multiple of the K granule below K
};

/// Bytes one row's weight block takes decoded once (codegen::
/// MatmulKernelSpec::decodeOnce): its int8 lanes, one byte per weight, and
/// for the formats with mins (Q4_K, Q5_K) the mins of its 8 sub-blocks as 4
/// int16 pairs (the decode's layout: IntegerBlockBody's emitDecode).
int64_t decodedRowBlockBytes(Format format);

/// K elements a K block is a multiple of (unless it is all of K): the least
/// common multiple of the weight's block, its activation format's block and
/// 32, so that a block of a float format still fills whole vectors.
int64_t getKGranule(Format format);

/// The blocks of `problem`:
///  * L1: the activation tile of `columns` columns x l1_k elements (in the
///    activation format's bytes) takes at most half of L1d, leaving the
///    other half to the weight rows streaming through. l1_k is K when that
///    fits, else K split into the fewest blocks that fit, of equal size
///    rounded up to the K granule (never less than one granule).
///  * L2: a block of l2_rows weight rows x l1_k takes at most half of L2,
///    the other half holding the activations and results (when decoded
///    once, its packed and decoded bytes together, the decoded at most
///    decodeScratchBytes). The rows one thread gets (N rounded up to row
///    groups, split over the threads) are split into the fewest such
///    blocks, of equal size rounded up to a row group (never less than one
///    row group).
CacheBlocks blockCaches(const CacheBlockProblem &problem);

} // namespace kf::tiling

#endif // KF_TILING_CACHEBLOCKS_H
