#include "KernelCases.h"

#include "HostIsa.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace kf::codegen {
namespace {

bool runsOn(KernelIsa isa, target::Arch arch) {
  return llvm::all_of(getRequiredFeatures(isa), [&](target::Feature f) {
    return target::getFeatureArch(f) == arch;
  });
}

std::vector<KernelIsa> isasOf(target::Arch arch) {
  std::vector<KernelIsa> isas;
  for (KernelIsa isa : target::getIsasByPreference())
    if (runsOn(isa, arch))
      isas.push_back(isa);
  llvm::sort(isas, [](KernelIsa a, KernelIsa b) {
    return static_cast<int32_t>(a) < static_cast<int32_t>(b);
  });
  return isas;
}

MatmulKernelSpec specOf(const FormatCases &row, KernelIsa isa, int64_t rows,
                        const KernelCase &c) {
  MatmulKernelSpec spec{row.format, isa, rows, c.k, c.n, c.maxCols};
  spec.roundToBf16 = c.roundToBf16;
  spec.l1K = c.l1K;
  spec.l2Rows = c.l2Groups * rows;
  spec.fuseQuantize = c.fuseQuantize;
  spec.decodeOnce = c.decodeOnce;
  spec.coding = c.coding;
  return spec;
}

// The narrow kernels of a mask of widths (cols), widest tiles 1 to 7.
void addNarrow(std::vector<KernelCase> &cases, uint8_t widths, int64_t k) {
  for (int64_t maxCols = 1; maxCols < 8; ++maxCols)
    if (widths & (1u << maxCols))
      cases.push_back({.n = 9, .k = k, .maxCols = maxCols});
}

// The decode-once kernels of a format's blocks of `block` elements.
void addDecodeOnce(std::vector<KernelCase> &cases, DecodeOnce kind,
                   int64_t block) {
  if (kind == DecodeOnce::None)
    return;
  cases.push_back({.n = 37,
                   .k = 3 * block,
                   .maxCols = 4,
                   .l1K = 2 * block,
                   .l2Groups = 2,
                   .decodeOnce = true});
  if (kind == DecodeOnce::BlockedAndBf16)
    cases.push_back({.n = 37,
                     .k = 3 * block,
                     .maxCols = 8,
                     .l1K = block,
                     .l2Groups = 1,
                     .roundToBf16 = true,
                     .decodeOnce = true});
}

// The ISA of `arch` the compiler prefers for `format` (KernelIsas.def's
// order).
std::optional<KernelIsa> preferredIsa(Format format, target::Arch arch) {
  for (KernelIsa isa : target::getIsasByPreference())
    if (runsOn(isa, arch) && isaSupportsFormat(isa, format))
      return isa;
  return std::nullopt;
}

} // namespace

const FormatCases *findFormatCases(Format format) {
  const FormatCases *row = llvm::find_if(
      kFormatCases, [&](const FormatCases &c) { return c.format == format; });
  return row == std::end(kFormatCases) ? nullptr : row;
}

Tolerance getTolerance(Format format) {
  const FormatCases *row = findFormatCases(format);
  return row ? row->tolerance : Tolerance::Exact;
}

std::vector<KernelIsa> getKernelIsas(target::Arch arch,
                                     std::optional<Tolerance> tolerance) {
  std::vector<KernelIsa> isas;
  for (KernelIsa isa : isasOf(arch))
    if (llvm::any_of(kFormatCases, [&](const FormatCases &row) {
          return (!tolerance || row.tolerance == *tolerance) &&
                 isaSupportsFormat(isa, row.format);
        }))
      isas.push_back(isa);
  return isas;
}

std::vector<KernelIsa>
getIsasWithSpecs(target::Arch arch,
                 std::vector<MatmulKernelSpec> (*specsOf)(KernelIsa)) {
  std::vector<KernelIsa> isas = isasOf(arch);
  llvm::erase_if(isas, [&](KernelIsa isa) { return specsOf(isa).empty(); });
  return isas;
}

std::vector<MatmulKernelSpec>
getEqualsReferenceSpecs(KernelIsa isa, llvm::ArrayRef<int64_t> rowCounts,
                        const target::TargetInfo &target) {
  std::vector<MatmulKernelSpec> specs;
  const bool portable = isa == KernelIsa::Scalar;
  for (const FormatCases &row : kFormatCases) {
    if (!isaSupportsFormat(isa, row.format))
      continue;
    std::span<const KernelCase> shapes =
        portable ? row.shapes->portable : row.shapes->all;
    for (int64_t rows : rowCounts) {
      const bool first = rows == rowCounts.front();
      if (!first && row.otherRows == OtherRows::None)
        continue;
      // The other row counts change only the loop nest's row arithmetic:
      // the first shape is enough.
      for (const KernelCase &shape : first ? shapes : shapes.first(1)) {
        if (first || row.otherRows == OtherRows::All)
          specs.push_back(specOf(row, isa, rows, shape));
        // IQ1's ternary layouts, which decode without the grid, and
        // IQ2_XXS's code book layout, where the kernels read it.
        for (WeightCoding coding :
             {WeightCoding::Ternary, WeightCoding::CodeBook})
          if (hasWeightCoding(row.format, coding) &&
              (coding != WeightCoding::CodeBook ||
               hasCodeBookLayout(isa, target))) {
            specs.push_back(specOf(row, isa, rows, shape));
            specs.back().coding = coding;
          }
      }
    }
  }
  for (const FormatCases &row : kFormatCases)
    if (row.epilogue && isaSupportsFormat(isa, row.format))
      specs.push_back(specOf(row, isa, rowCounts.front(),
                             {.n = 37, .k = 96, .roundToBf16 = true}));
  for (const FormatCases &row : kFormatCases) {
    if (row.fusedCols == 0 || !isaSupportsFormat(isa, row.format))
      continue;
    const int64_t k =
        (portable ? row.shapes->portable : row.shapes->all).front().k;
    specs.push_back(specOf(
        row, isa, rowCounts.front(),
        {.n = 37, .k = k, .maxCols = row.fusedCols, .fuseQuantize = true}));
  }
  return specs;
}

std::vector<MatmulKernelSpec> getNarrowTileSpecs(KernelIsa isa) {
  std::vector<MatmulKernelSpec> specs;
  for (const FormatCases &row : kFormatCases) {
    if (!isaSupportsFormat(isa, row.format))
      continue;
    std::vector<KernelCase> cases;
    addNarrow(cases, row.narrowCols, row.shapes->narrowK);
    for (const KernelCase &c : cases)
      specs.push_back(specOf(row, isa, testRows(isa), c));
  }
  return specs;
}

std::vector<MatmulKernelSpec> getCacheBlockSpecs(KernelIsa isa,
                                                 Tolerance tolerance) {
  std::vector<MatmulKernelSpec> specs;
  for (const FormatCases &row : kFormatCases)
    if (row.tolerance == tolerance && isaSupportsFormat(isa, row.format))
      for (const KernelCase &c : row.cacheBlocks)
        specs.push_back(specOf(row, isa, testRows(isa), c));
  return specs;
}

std::vector<MatmulKernelSpec> getDecodeOnceSpecs(KernelIsa isa) {
  std::vector<MatmulKernelSpec> specs;
  for (const FormatCases &row : kFormatCases) {
    if (!isaSupportsFormat(isa, row.format))
      continue;
    std::vector<KernelCase> cases;
    addDecodeOnce(cases, row.decodeOnce, packedBlockElems(row.format));
    for (const KernelCase &c : cases)
      specs.push_back(specOf(row, isa, testRows(isa), c));
  }
  return specs;
}

std::vector<MatmulKernelSpec> getCrossSpecs(KernelIsa isa) {
  std::vector<MatmulKernelSpec> specs;
  if (!runsOn(isa, target::Arch::AArch64))
    return specs;
  for (const FormatCases &row : kFormatCases) {
    if (!isaSupportsFormat(isa, row.format) ||
        (isa == KernelIsa::Scalar && !row.crossPortable))
      continue;
    std::vector<KernelCase> cases(row.shapes->cross.begin(),
                                  row.shapes->cross.end());
    addNarrow(cases, row.crossNarrowCols, row.shapes->narrowK);
    if (preferredIsa(row.format, target::Arch::AArch64) == isa) {
      if (row.crossFused)
        cases.push_back({.n = 9,
                         .k = row.shapes->narrowK,
                         .maxCols = 3,
                         .fuseQuantize = true});
      if (row.crossDecodeOnce)
        addDecodeOnce(cases, DecodeOnce::Blocked, packedBlockElems(row.format));
      cases.insert(cases.end(), row.crossExtra.begin(), row.crossExtra.end());
    }
    for (const KernelCase &c : cases)
      specs.push_back(specOf(row, isa, testRows(isa), c));
  }
  return specs;
}

std::vector<MatmulKernelSpec> getSharedLibrarySpecs(KernelIsa isa) {
  std::vector<MatmulKernelSpec> specs;
  for (const FormatCases &row : kFormatCases)
    if (row.sharedLibrary && isaSupportsFormat(isa, row.format))
      specs.push_back(specOf(row, isa, testRows(isa), row.shapes->all.front()));
  return specs;
}

} // namespace kf::codegen
