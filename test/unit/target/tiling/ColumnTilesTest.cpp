// decomposeColumns against docs/codegen.md's rule: for every M in 1..4096 the
// tiles sum to M, are widest first, never 1 wide for M >= 2, and are the
// fewest possible; for small M, the result is the brute-force best of all
// splits.
#include "kf/Tiling/ColumnTiles.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

using kf::tiling::decomposeColumns;

namespace {

using Tiles = std::vector<int64_t>;

/// The split of a kernel whose widest tile is the widest of `widths`.
Tiles split(int64_t m, llvm::ArrayRef<int64_t> widths) {
  llvm::SmallVector<int64_t, 4> tiles =
      decomposeColumns(m, *std::max_element(widths.begin(), widths.end()));
  return Tiles(tiles.begin(), tiles.end());
}

/// Every split of `rest` into `widths` (widest first) that is no wider than
/// `widest`, appended to `prefix`.
void allSplits(int64_t rest, int64_t widest, llvm::ArrayRef<int64_t> widths,
               Tiles &prefix, std::vector<Tiles> &out) {
  if (rest == 0) {
    out.push_back(prefix);
    return;
  }
  for (int64_t w : widths) {
    if (w > widest || w > rest)
      continue;
    prefix.push_back(w);
    allSplits(rest - w, w, widths, prefix, out);
    prefix.pop_back();
  }
}

/// The rule by brute force: of all splits, the fewest tiles, then the
/// lexicographically largest widest-first list.
Tiles bruteForce(int64_t m, llvm::ArrayRef<int64_t> widths) {
  std::vector<Tiles> splits;
  Tiles prefix;
  allSplits(m, m, widths, prefix, splits);
  return *std::min_element(splits.begin(), splits.end(),
                           [](const Tiles &a, const Tiles &b) {
                             if (a.size() != b.size())
                               return a.size() < b.size();
                             return a > b;
                           });
}

/// The fewest tiles of {8, 4, 3, 2} that sum to m >= 2. With c tiles the sum
/// is at most 8c, so c >= ceil(m/8); writing m = 8q + r, c = ceil(m/8) tiles
/// fall short of 8c by 8 - r, which the narrower tiles make up 4, 5 or 6 at
/// a time (widths 4, 3, 2): possible with one tile for r in {2, 3, 4} and
/// trivially for r = 0. For r in {5, 6, 7} one more tile makes the shortfall
/// 16 - r in {11, 10, 9}, two narrow tiles; for r = 1 it is 15, three narrow
/// tiles (M >= 9 has room for them).
int64_t fewestTiles(int64_t m) {
  int64_t r = m % 8;
  return (m + 7) / 8 + (r == 1 || r >= 5 ? 1 : 0);
}

constexpr int64_t kWidths[] = {8, 4, 3, 2};

TEST(ColumnTiles, EveryMUpTo4096) {
  for (int64_t m = 1; m <= 4096; ++m) {
    Tiles tiles = split(m, kWidths);
    ASSERT_FALSE(tiles.empty()) << "M = " << m;
    int64_t sum = 0;
    for (size_t i = 0; i < tiles.size(); ++i) {
      sum += tiles[i];
      if (i > 0) {
        EXPECT_LE(tiles[i], tiles[i - 1])
            << "M = " << m << ": not widest first";
      }
    }
    EXPECT_EQ(sum, m);
    if (m == 1) {
      EXPECT_EQ(tiles, Tiles{1});
      continue;
    }
    for (int64_t tile : tiles)
      EXPECT_TRUE(llvm::is_contained(kWidths, tile))
          << "M = " << m << ": width " << tile;
    EXPECT_EQ(static_cast<int64_t>(tiles.size()), fewestTiles(m))
        << "M = " << m;
  }
}

TEST(ColumnTiles, SmallMEqualsBruteForce) {
  for (int64_t m = 2; m <= 48; ++m)
    EXPECT_EQ(split(m, kWidths), bruteForce(m, kWidths)) << "M = " << m;
}

// A kernel with max_cols = 4 or 3 takes the widths up to it.
TEST(ColumnTiles, NarrowerWidthsEqualBruteForce) {
  const int64_t upTo4[] = {4, 3, 2};
  const int64_t upTo3[] = {3, 2};
  for (int64_t m = 2; m <= 40; ++m) {
    EXPECT_EQ(split(m, upTo4), bruteForce(m, upTo4)) << "M = " << m;
    EXPECT_EQ(split(m, upTo3), bruteForce(m, upTo3)) << "M = " << m;
  }
}

// The examples docs/codegen.md gives.
TEST(ColumnTiles, DocumentedExamples) {
  EXPECT_EQ(split(1, kWidths), (Tiles{1}));
  EXPECT_EQ(split(2, kWidths), (Tiles{2}));
  EXPECT_EQ(split(5, kWidths), (Tiles{3, 2}));
  EXPECT_EQ(split(6, kWidths), (Tiles{4, 2}));
  EXPECT_EQ(split(9, kWidths), (Tiles{4, 3, 2}));
  EXPECT_EQ(split(10, kWidths), (Tiles{8, 2}));
  EXPECT_EQ(split(11, kWidths), (Tiles{8, 3}));
  EXPECT_EQ(split(12, kWidths), (Tiles{8, 4}));
  EXPECT_EQ(split(13, kWidths), (Tiles{8, 3, 2}));
  EXPECT_EQ(split(14, kWidths), (Tiles{8, 4, 2}));
  EXPECT_EQ(split(15, kWidths), (Tiles{8, 4, 3}));
  EXPECT_EQ(split(17, kWidths), (Tiles{8, 4, 3, 2}));
  EXPECT_EQ(split(24, kWidths), (Tiles{8, 8, 8}));
  EXPECT_EQ(split(25, kWidths), (Tiles{8, 8, 4, 3, 2}));
}

// Kernels narrower than 3 columns cannot avoid 1-wide tiles; they take the
// widest tile that fits.
TEST(ColumnTiles, NarrowKernelsFallBackToOne) {
  EXPECT_EQ(decomposeColumns(3, 1), (llvm::SmallVector<int64_t, 4>{1, 1, 1}));
  EXPECT_EQ(decomposeColumns(3, 2), (llvm::SmallVector<int64_t, 4>{2, 1}));
  EXPECT_EQ(decomposeColumns(4, 2), (llvm::SmallVector<int64_t, 4>{2, 2}));
  EXPECT_EQ(kf::tiling::columnTileWidths(4),
            (llvm::SmallVector<int64_t, 5>{4, 3, 2, 1}));
}

// The widest tiles a matmul may choose are the widths that never need a
// 1-wide tile for M >= 2, checked here by decomposing every M to 4096; 2
// cannot (M = 3 is 2 + 1), and 5 to 7 are no micro-kernel width.
TEST(ColumnTiles, MaxColumnTileChoicesNeverLeaveOneColumn) {
  for (int64_t maxCols = 0; maxCols <= 9; ++maxCols) {
    bool leavesOne = maxCols < 1;
    for (int64_t m = 2; m <= 4096 && !leavesOne; ++m)
      leavesOne = llvm::is_contained(decomposeColumns(m, maxCols), 1);
    bool width = llvm::is_contained(kf::tiling::kColumnTileWidths, maxCols);
    EXPECT_EQ(kf::tiling::isMaxColumnTileChoice(maxCols), width && !leavesOne)
        << maxCols;
  }
  static_assert(kf::tiling::isMaxColumnTileChoice(kf::tiling::kMaxColumnTile));
  EXPECT_FALSE(kf::tiling::isMaxColumnTileChoice(2));
  EXPECT_TRUE(kf::tiling::isMaxColumnTileChoice(3));
}

} // namespace
