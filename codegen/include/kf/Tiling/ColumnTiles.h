//===- ColumnTiles.h - Splitting M token columns into micro-kernels -------===//
//
// The rule --kf-tile-columns applies to a static M and a generated dispatcher
// applies to a dynamic one (docs/codegen.md), in one place so both agree.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TILING_COLUMNTILES_H
#define KF_TILING_COLUMNTILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kf::tiling {

/// Splits `m` >= 1 token columns into micro-kernel widths taken from
/// `widths`, which must hold 2 and 3 so that every m >= 2 splits without a
/// 1-wide tile: [1] for m = 1; otherwise the fewest tiles, and among those
/// the list that is widest first (the largest in lexicographic order when
/// sorted widest first). With {8, 4, 3, 2}: 9 -> [4, 3, 2],
/// 17 -> [8, 4, 3, 2], 24 -> [8, 8, 8].
///
/// Each tile is one pass of a micro-kernel over the weights of a row group,
/// so fewer tiles read the weights fewer times; a 1-wide tile would pay a
/// whole pass for one column.
llvm::SmallVector<int64_t> decomposeColumns(int64_t m,
                                            llvm::ArrayRef<int64_t> widths);

} // namespace kf::tiling

#endif // KF_TILING_COLUMNTILES_H
