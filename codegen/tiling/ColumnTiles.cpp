//===- ColumnTiles.cpp - Splitting M token columns into micro-kernels -----===//

#include "kf/Tiling/ColumnTiles.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <functional>
#include <limits>
#include <vector>

namespace kf::tiling {

llvm::SmallVector<int64_t> decomposeColumns(int64_t m,
                                            llvm::ArrayRef<int64_t> widths) {
  assert(m >= 1 && "no columns to split");
  assert(llvm::is_contained(widths, 2) && llvm::is_contained(widths, 3) &&
         "without widths 2 and 3 some M needs a 1-wide tile");
  if (m == 1)
    return {1};
  llvm::SmallVector<int64_t> widest(widths.begin(), widths.end());
  llvm::sort(widest, std::greater<int64_t>());

  // fewest[r]: the fewest tiles that sum to r columns.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> fewest(m + 1, kNone);
  fewest[0] = 0;
  for (int64_t r = 1; r <= m; ++r)
    for (int64_t w : widest)
      if (w <= r && fewest[r - w] != kNone)
        fewest[r] = std::min(fewest[r], fewest[r - w] + 1);

  // Take the widest tile that still leaves a remainder splittable in the
  // fewest tiles. Repeating this on the remainder never takes a wider tile
  // than the one before: a shortest split of the remainder holding a wider
  // tile would have made that tile the choice one step earlier.
  llvm::SmallVector<int64_t> tiles;
  for (int64_t rest = m; rest > 0;) {
    for (int64_t w : widest) {
      if (w <= rest && fewest[rest - w] == fewest[rest] - 1) {
        tiles.push_back(w);
        rest -= w;
        break;
      }
    }
  }
  return tiles;
}

} // namespace kf::tiling
