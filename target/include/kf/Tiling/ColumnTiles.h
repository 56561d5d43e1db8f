//===- ColumnTiles.h - Splitting M token columns into micro-kernel tiles --===//
//
// The rule of docs/codegen.md ("--kf-tile-columns"): M columns split into
// micro-kernel widths {8, 4, 3, 2}, and 1 only for M = 1; fewest tiles, then
// the widest first. M = 9 -> 4 + 3 + 2, 17 -> 8 + 4 + 3 + 2.
//
// The rule is applied one tile at a time (nextColumnTile), so that a kernel
// taking M at run time decomposes it with the same arithmetic a pass uses on
// a static M (the kernels' run-time dispatch builds the IR of the same
// function). Header-only: the dialect's verifier, --kf-tile-columns and the
// kernel emitters share it without linking one another.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TILING_COLUMNTILES_H
#define KF_TILING_COLUMNTILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kf::tiling {

/// The micro-kernel widths wider than 1, widest first.
inline constexpr int64_t kColumnTileWidths[] = {8, 4, 3, 2};

/// The widest micro-kernel: a matmul's widest tile by default, and the most
/// a compiled kernel's may be (which may be anything from 1, a kernel for a
/// single column, to this).
inline constexpr int64_t kMaxColumnTile = kColumnTileWidths[0];

/// The width of the next tile when `remaining` (>= 1) columns are left and no
/// tile may be wider than `maxCols` (>= 1): the widest width that fits and
/// does not leave exactly one column behind. When none does (only possible
/// for maxCols < 3, or remaining = 1), the widest width that fits, else 1.
///
/// Taking tiles this way gives the fewest tiles, widest first: a remainder
/// r = M mod 8 of 2, 3 or 4 is one tile; 5, 6 and 7 are two (3 + 2, 4 + 2,
/// 4 + 3), the fewest possible; and r = 1 after at least one 8 is 4 + 3 + 2 in
/// place of an 8, since M = 8q + 1 needs q + 2 tiles (q + 1 of width <= 8
/// would have to fall 7 short of 8(q + 1) with shortfalls of 4, 5 or 6 each).
/// ColumnTilesTest checks this against an exhaustive search.
constexpr int64_t nextColumnTile(int64_t remaining, int64_t maxCols) {
  int64_t fallback = 1;
  for (int64_t width : kColumnTileWidths) {
    if (width > maxCols || width > remaining)
      continue;
    if (remaining - width != 1)
      return width;
    if (fallback == 1)
      fallback = width;
  }
  return fallback;
}

/// The widths of every tile for `m` columns, in the order a kernel runs them.
inline llvm::SmallVector<int64_t, 4> decomposeColumns(int64_t m,
                                                      int64_t maxCols) {
  llvm::SmallVector<int64_t, 4> tiles;
  for (int64_t done = 0; done < m;) {
    tiles.push_back(nextColumnTile(m - done, maxCols));
    done += tiles.back();
  }
  return tiles;
}

/// The widths a kernel with widest tile `maxCols` may run, widest first: the
/// entries of kColumnTileWidths up to maxCols, then 1.
inline llvm::SmallVector<int64_t, 5> columnTileWidths(int64_t maxCols) {
  llvm::SmallVector<int64_t, 5> widths;
  for (int64_t width : kColumnTileWidths)
    if (width <= maxCols)
      widths.push_back(width);
  widths.push_back(1);
  return widths;
}

/// Whether `maxCols` may be chosen as a matmul's widest tile (#kf.kernel's
/// max_cols, a tuning rule's): one of kColumnTileWidths with which no M >= 2
/// needs a 1-wide tile. That is 8, 4 and 3; with 2, M = 3 is 2 + 1. (Every
/// M from 2 to 2 · maxCols + 2 is checked, which covers each remainder mod
/// maxCols after at least one full tile.)
constexpr bool isMaxColumnTileChoice(int64_t maxCols) {
  bool listed = false;
  for (int64_t width : kColumnTileWidths)
    listed |= width == maxCols;
  if (!listed)
    return false;
  for (int64_t m = 2; m <= 2 * maxCols + 2; ++m)
    for (int64_t done = 0; done < m;) {
      int64_t tile = nextColumnTile(m - done, maxCols);
      if (tile == 1)
        return false;
      done += tile;
    }
  return true;
}

} // namespace kf::tiling

#endif // KF_TILING_COLUMNTILES_H
