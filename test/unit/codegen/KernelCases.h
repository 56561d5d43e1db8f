//===- KernelCases.h - The compiled kernels' test matrix, as one table ----===//
//
// Which matmul kernels the codegen tests compile and compare with kf::dot:
// one row of kFormatCases per weight format with an emitter, naming the
// format's shapes, its narrower column tiles, its variants (row counts, the
// bf16 epilogue, fused quantization, cache blocks, decoding once, the shared
// library) and how its results are compared. The rest is derived: the ISAs
// from the target layer's table (kf/Target/KernelIsas.def), a format's
// kernels running on every ISA that has kernels for it (isaSupportsFormat);
// its weight codings from the runtime's (hasWeightCoding); its blocks from
// formats.def. A new ISA thus needs no line here, a new format one row, and
// every suite that runs one ISA's kernels (HostIsa.h) draws its ISAs and its
// kernels from the functions below.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TEST_UNIT_CODEGEN_KERNELCASES_H
#define KF_TEST_UNIT_CODEGEN_KERNELCASES_H

#include "kf/Codegen/MatmulKernel.h"
#include "kf/Target/TargetInfo.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

namespace kf::codegen {

/// How a kernel's results are compared with kf::dot's.
enum class Tolerance {
  /// Bit for bit: the int8 family (Q8_0, Q4_0, MXFP4, the K-quants, the IQ
  /// and private formats). Per block and row the kernel's int32 accumulator
  /// starts at -offset * sum(q) and adds the products of the offset lanes,
  /// so it ends holding the block's signed integer dot exactly (|dot| <= 32 *
  /// 128 * 127 < 2^24, so its conversion to float is exact too). The float
  /// work then repeats kf::dot's, operation for operation and in its order:
  /// Q8_0 adds dot * (d_w * d_x), Q4_0 adds (dot * d_w) * d_x, MXFP4 (d_x *
  /// d_w) * dot, to a sum that starts at 0 and runs over the blocks in K
  /// order; the weight scales are converted exactly (from fp16, or MXFP4's
  /// 2^(e - 128) built from its bits, subnormals included); and neither side
  /// contracts a multiply and an add into an FMA (LLVM fuses separate
  /// fmul/fadd only under the contract flag, which the kernels never set; the
  /// runtime is compiled in ISO C++ mode, where GCC does not contract, for
  /// baseline x86-64, which has no FMA). The super-block formats (K-quants,
  /// IQ2_XXS) keep one exact integer sum per super-block (|isum| < 2^26) and
  /// scale it as kf::dot does, IQ2_XXS's final 0.125 included (after the last
  /// block). Any difference is a bug.
  Exact,
  /// Within floatKernelTolerance (derived in MatmulReference.cpp): the float
  /// family (BF16, F32), whose kernels reorder kf::dot's sum.
  FloatBound,
};

/// One kernel of a format, less its format, ISA and rows per group.
struct KernelCase {
  int64_t n = 0, k = 0;
  int64_t maxCols = 8;
  int64_t l1K = 0;      ///< L1 blocks of K, in elements; 0: none
  int64_t l2Groups = 0; ///< row blocks, in the ISA's row groups; 0: none
  bool roundToBf16 = false;
  bool fuseQuantize = false;
  bool decodeOnce = false;
  WeightCoding coding = WeightCoding::File;
};

/// The shapes of the formats of one block size: `all` on every ISA (N not a
/// multiple of any row group, one that is, and K of several blocks),
/// `portable` on the portable kernel JIT-compiled for x86, `cross` on the
/// AArch64 ISAs under QEMU, and `narrowK`, the K of the kernels with narrower
/// widest tiles (N = 9).
struct ShapeSet {
  std::span<const KernelCase> all, portable, cross;
  int64_t narrowK;
};

// 32-element blocks: K of 3, 8 and 1 blocks.
inline constexpr KernelCase kBlockShapes[] = {{37, 96}, {32, 256}, {5, 32}};
inline constexpr ShapeSet kBlocks = {kBlockShapes, kBlockShapes, kBlockShapes,
                                     64};
// The super-blocks of 256 (K-quants, IQ formats): K of 1, 3 and 2 of them.
// The portable kernels compile slowly (a K-quant's, its super-block unrolled
// per column tile without intrinsics, takes seconds), so on x86 they get one
// shape with both an N tail and several super-blocks.
inline constexpr KernelCase kSuperBlockShapes[] = {
    {37, 256}, {32, 768}, {5, 512}};
inline constexpr KernelCase kPortableSuperBlockShapes[] = {{37, 768}};
inline constexpr ShapeSet kSuperBlocks = {
    kSuperBlockShapes, kPortableSuperBlockShapes, kSuperBlockShapes, 256};
// The private formats' blocks of 64: K of 2, 3 and 1 of them; under QEMU 2
// and 1 (every kernel there costs seconds of the test's LLVM compilation).
inline constexpr KernelCase kBlock64Shapes[] = {{37, 128}, {32, 192}, {5, 64}};
inline constexpr KernelCase kCrossBlock64Shapes[] = {{37, 128}, {5, 64}};
inline constexpr ShapeSet kBlocks64 = {kBlock64Shapes, kBlock64Shapes,
                                       kCrossBlock64Shapes, 128};
// The float formats' rows end in a padded block: K of 100 (f32: 6 blocks and
// 4 elements; bf16: 3 and 4), 256 (whole blocks) and 33 (an odd element, half
// a bf16 pair).
inline constexpr KernelCase kFloatShapes[] = {{37, 100}, {32, 256}, {5, 33}};
inline constexpr ShapeSet kFloats = {kFloatShapes, kFloatShapes, kFloatShapes,
                                     70};

/// The widest tiles below 8 a format's narrow kernels take, as a bit mask.
constexpr uint8_t cols(std::initializer_list<int> widths) {
  uint8_t mask = 0;
  for (int width : widths)
    mask |= static_cast<uint8_t>(1u << width);
  return mask;
}

/// The portable kernel's other row count (1; its first is 4).
enum class OtherRows {
  None,
  /// Every kernel of the format's first shape: the row arithmetic of the loop
  /// nest, which the 32-element packed blocks cover.
  All,
  /// The weight codings' only (IQ1's ternary layouts load their delta masks
  /// by row count: a byte and a shift for one row).
  CodedOnly,
};

/// Kernels that decode each row block once (MatmulKernelSpec::decodeOnce).
enum class DecodeOnce {
  None,
  /// N = 37 pads the last group, K of 3 blocks in L1 blocks of 2 leaves a
  /// tail of 1, row blocks of two groups leave one of one; the widest tile 4
  /// makes m = 5..17 decode once, while m <= 4 takes the same kernel's
  /// one-tile nest, which decodes as it goes.
  Blocked,
  /// Also with L1 blocks of one block, row blocks of one group, tiles of 8
  /// and the bf16 epilogue (after the last K block).
  BlockedAndBf16,
};

// Cache blocks (l1_k, l2_rows): for m > maxCols the nest walks K in blocks
// and the rows in blocks, keeping the fp32 sums in y between K blocks. N = 37
// pads the last group; the row blocks hold one group and more than one; the
// bf16 epilogue rounds once, after the last K block; and m <= maxCols takes
// the unblocked order of the same kernel. 32-element blocks: K = 256 in
// blocks of 96 leaves a tail of 64.
inline constexpr KernelCase kBlockCacheBlocks[] = {
    {.n = 37, .k = 256, .maxCols = 4, .l1K = 96, .l2Groups = 1},
    {.n = 37, .k = 256, .maxCols = 8, .l2Groups = 2}};
inline constexpr KernelCase kQ8_0CacheBlocks[] = {
    kBlockCacheBlocks[0],
    kBlockCacheBlocks[1],
    {.n = 37, .k = 256, .maxCols = 3, .l1K = 64, .roundToBf16 = true}};
// Q6_K's corrections per sub-block of 16 (Q8_K's sums), computed once per
// tile: K of 3 super-blocks in L1 blocks of 2, a tail of 1.
inline constexpr KernelCase kQ6KCacheBlocks[] = {
    {.n = 37, .k = 768, .maxCols = 4, .l1K = 512, .l2Groups = 1}};
// IQ2_XXS's last factor (0.125) applies after the last K block only: K of 3
// super-blocks in blocks of 2 leaves a tail of 1, also rounded to bf16.
inline constexpr KernelCase kIq2XxsCacheBlocks[] = {kQ6KCacheBlocks[0],
                                                    {.n = 37,
                                                     .k = 768,
                                                     .maxCols = 4,
                                                     .l1K = 256,
                                                     .l2Groups = 2,
                                                     .roundToBf16 = true}};
// FRACTAL64's and VQ3_64's corrections per sub-block of 8 (two Q8_0 blocks'
// sums of 8 per weight block): K of 3 blocks in L1 blocks of 2.
inline constexpr KernelCase kBlock64CacheBlocks[] = {
    {.n = 37, .k = 192, .maxCols = 4, .l1K = 128, .l2Groups = 2}};
// The float kernels: K = 300 in L1 blocks of 64 (a tail of 44, the last
// packed block partial), row blocks of one group and of two, the bf16
// epilogue after the last K block; within the bound, which counts the folds
// of each K block's chains.
inline constexpr KernelCase kFloatCacheBlocks[] = {
    {.n = 37, .k = 300, .maxCols = 4, .l1K = 64, .l2Groups = 1},
    {.n = 37,
     .k = 300,
     .maxCols = 3,
     .l1K = 64,
     .l2Groups = 2,
     .roundToBf16 = true}};

// Under QEMU: IQ1's ternary layouts, decoded with shifts on sdot; VQ3_64's
// one-column tiles with cache blocks, which decode in the packed order, their
// masked activation words prepared once per tile.
inline constexpr KernelCase kCrossTernary[] = {
    {.n = 37, .k = 512, .coding = WeightCoding::Ternary},
    {.n = 9, .k = 512, .maxCols = 3, .coding = WeightCoding::Ternary}};
inline constexpr KernelCase kCrossVq3CacheBlocks[] = {
    {.n = 9, .k = 192, .maxCols = 3, .l1K = 128, .l2Groups = 2}};

/// What the tests run of one format.
struct FormatCases {
  Format format;
  Tolerance tolerance;
  /// Its kernels on every ISA that has them, compiled together per ISA and
  /// checked for every m = 1..17 (MatmulKernelOnIsa.EqualsReference), each
  /// shape also in every weight coding the format has (IQ2_XXS's code book
  /// layout where the ISA reads it on its test target).
  const ShapeSet *shapes;
  OtherRows otherRows = OtherRows::None;
  /// The bf16 epilogue of a precision(bf16) linear (N = 37, K = 96), one
  /// format per family.
  bool epilogue = false;
  /// The widest tile of a kernel that quantizes its activations (first
  /// shape, N = 37), one format per activation format, chosen so that m =
  /// 1..17 run in chunks of every kind; 0: none.
  int64_t fusedCols = 0;
  /// The widest tiles below 8, exercising the other dispatch tables (N = 9,
  /// K = narrowK): of the portable kernel for x86-64-v2, and of every
  /// AArch64 ISA with the format.
  uint8_t narrowCols = 0;
  uint8_t crossNarrowCols = 0;
  /// With cache blocks, on each x86 ISA for this machine; decoding once, on
  /// each x86 ISA for its test target.
  std::span<const KernelCase> cacheBlocks = {};
  DecodeOnce decodeOnce = DecodeOnce::None;
  /// Under QEMU: whether the portable kernel runs the shapes too (it is the
  /// same IR the x86 tests run); and on the AArch64 ISA the compiler prefers
  /// for the format, a fused quantization (N = 9, K = narrowK, tile 3), the
  /// Blocked decode-once kernel and `crossExtra`.
  bool crossPortable = true;
  bool crossFused = false;
  bool crossDecodeOnce = false;
  std::span<const KernelCase> crossExtra = {};
  /// Linked into a shared library for each x86 ISA, first shape.
  bool sharedLibrary = false;
};

// clang-format off
inline constexpr FormatCases kFormatCases[] = {
    {.format = Format::Q8_0, .tolerance = Tolerance::Exact, .shapes = &kBlocks,
     .otherRows = OtherRows::All, .epilogue = true, .fusedCols = 8,
     .narrowCols = cols({1, 2, 3, 4}), .crossNarrowCols = cols({1, 2, 3, 4}),
     .cacheBlocks = kQ8_0CacheBlocks, .decodeOnce = DecodeOnce::BlockedAndBf16,
     .crossFused = true, .crossDecodeOnce = true, .sharedLibrary = true},
    {.format = Format::Q4_0, .tolerance = Tolerance::Exact, .shapes = &kBlocks,
     .otherRows = OtherRows::All, .crossNarrowCols = cols({1, 2, 3, 4}),
     .cacheBlocks = kBlockCacheBlocks, .decodeOnce = DecodeOnce::Blocked,
     .sharedLibrary = true},
    {.format = Format::MXFP4, .tolerance = Tolerance::Exact, .shapes = &kBlocks,
     .otherRows = OtherRows::All, .crossNarrowCols = cols({1, 2, 3, 4}),
     .cacheBlocks = kBlockCacheBlocks, .decodeOnce = DecodeOnce::Blocked,
     .sharedLibrary = true},
    {.format = Format::Q4_K, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .fusedCols = 4, .narrowCols = cols({1, 2, 3, 4}),
     .crossNarrowCols = cols({1, 3}), .decodeOnce = DecodeOnce::Blocked,
     .crossFused = true, .crossDecodeOnce = true},
    {.format = Format::Q5_K, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .crossNarrowCols = cols({1, 3}),
     .decodeOnce = DecodeOnce::Blocked},
    {.format = Format::Q6_K, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .crossNarrowCols = cols({1, 3}),
     .cacheBlocks = kQ6KCacheBlocks, .decodeOnce = DecodeOnce::Blocked},
    {.format = Format::IQ2_XXS, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .narrowCols = cols({1, 2, 3, 4}),
     .crossNarrowCols = cols({1, 3}), .cacheBlocks = kIq2XxsCacheBlocks,
     .decodeOnce = DecodeOnce::BlockedAndBf16},
    {.format = Format::IQ1_S, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .otherRows = OtherRows::CodedOnly,
     .narrowCols = cols({1, 2, 3, 4}), .crossNarrowCols = cols({1, 3}),
     .decodeOnce = DecodeOnce::Blocked, .crossExtra = kCrossTernary},
    {.format = Format::IQ1_M, .tolerance = Tolerance::Exact,
     .shapes = &kSuperBlocks, .otherRows = OtherRows::CodedOnly,
     .narrowCols = cols({1, 2, 3, 4}), .crossNarrowCols = cols({1, 3}),
     .decodeOnce = DecodeOnce::Blocked, .crossDecodeOnce = true,
     .crossExtra = kCrossTernary},
    {.format = Format::FRACTAL64, .tolerance = Tolerance::Exact,
     .shapes = &kBlocks64, .crossNarrowCols = cols({3}),
     .cacheBlocks = kBlock64CacheBlocks, .decodeOnce = DecodeOnce::Blocked,
     .crossPortable = false, .crossDecodeOnce = true},
    {.format = Format::VQ3_64, .tolerance = Tolerance::Exact,
     .shapes = &kBlocks64, .crossNarrowCols = cols({3}),
     .cacheBlocks = kBlock64CacheBlocks, .decodeOnce = DecodeOnce::Blocked,
     .crossPortable = false, .crossExtra = kCrossVq3CacheBlocks},
    {.format = Format::BF16, .tolerance = Tolerance::FloatBound,
     .shapes = &kFloats, .otherRows = OtherRows::All, .epilogue = true,
     .fusedCols = 3, .narrowCols = cols({1, 2, 3, 4}),
     .crossNarrowCols = cols({1, 3}), .cacheBlocks = kFloatCacheBlocks},
    {.format = Format::F32, .tolerance = Tolerance::FloatBound,
     .shapes = &kFloats, .fusedCols = 1, .crossNarrowCols = cols({1, 3}),
     .cacheBlocks = kFloatCacheBlocks},
};
// clang-format on

/// The row of `format`, if the table has one.
const FormatCases *findFormatCases(Format format);

/// How kernels of `format` are compared with kf::dot (its row's; Exact for a
/// format without one).
Tolerance getTolerance(Format format);

/// The ISAs that run on `arch`, the portable one included, and have kernels
/// for a format of the table (whose results compare by `tolerance`, when
/// given), in the order of their values.
std::vector<KernelIsa> getKernelIsas(target::Arch arch,
                                     std::optional<Tolerance> tolerance = {});

/// The kernels of each suite for `isa`, in the table's order.
///
/// Every format's shapes, weight codings, epilogue and fused quantization,
/// with each of `rowCounts` (the first for all; the others as the rows'
/// OtherRows say), for `target`.
std::vector<MatmulKernelSpec>
getEqualsReferenceSpecs(KernelIsa isa, llvm::ArrayRef<int64_t> rowCounts,
                        const target::TargetInfo &target);
/// The narrower widest tiles (narrowCols).
std::vector<MatmulKernelSpec> getNarrowTileSpecs(KernelIsa isa);
/// With cache blocks, of the formats that compare by `tolerance`.
std::vector<MatmulKernelSpec> getCacheBlockSpecs(KernelIsa isa,
                                                 Tolerance tolerance);
/// Decoding once.
std::vector<MatmulKernelSpec> getDecodeOnceSpecs(KernelIsa isa);
/// For an AArch64 ISA (or the portable one) under QEMU.
std::vector<MatmulKernelSpec> getCrossSpecs(KernelIsa isa);
/// Linked into a shared library.
std::vector<MatmulKernelSpec> getSharedLibrarySpecs(KernelIsa isa);

/// The ISAs of `arch` for which `specsOf` has kernels.
std::vector<KernelIsa>
getIsasWithSpecs(target::Arch arch,
                 std::vector<MatmulKernelSpec> (*specsOf)(KernelIsa));

/// The suites that run one x86 ISA's kernels (HostIsa.h), instantiated in
/// MatmulKernelTest.cpp over getKernelIsas: the ISAs with kernels for any
/// format, for an int8-family one (Tolerance::Exact), for a float one.
class MatmulKernelOnIsa : public testing::TestWithParam<KernelIsa> {};
class IntegerKernelOnIsa : public testing::TestWithParam<KernelIsa> {};
class FloatKernelOnIsa : public testing::TestWithParam<KernelIsa> {};

} // namespace kf::codegen

#endif // KF_TEST_UNIT_CODEGEN_KERNELCASES_H
