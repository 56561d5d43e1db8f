//===- KfAttrs.cpp - kf attributes ----------------------------------------===//

#include "kf/Dialect/KfDialect.h"

#include "kf/Target/KernelIsa.h"
#include "kf/Tiling/ColumnTiles.h"

#include "kf/runtime/format.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <cmath>
#include <numbers>

using namespace mlir;
using namespace mlir::kf;
namespace target = ::kf::target;

namespace {

/// The architecture a triple names, if it is one Kernelforge generates code
/// for.
std::optional<target::Arch> archOfTriple(StringRef triple) {
  switch (llvm::Triple(triple).getArch()) {
  case llvm::Triple::x86_64:
    return target::Arch::X86_64;
  case llvm::Triple::aarch64:
    return target::Arch::AArch64;
  default:
    return std::nullopt;
  }
}

} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, StringRef triple,
                                 StringRef cpu, StringRef features,
                                 uint64_t l1d, uint64_t l2, uint64_t l3,
                                 unsigned cores) {
  std::optional<target::Arch> arch = archOfTriple(triple);
  if (!arch)
    return emitError() << "#kf.target '" << name << "': triple '" << triple
                       << "' is not x86_64 or aarch64";
  if (cpu.empty())
    return emitError() << "#kf.target '" << name << "': empty cpu name";
  llvm::Expected<target::FeatureSet> parsed =
      target::parseFeatures(features, *arch);
  if (!parsed)
    return emitError() << "#kf.target '" << name
                       << "': " << llvm::toString(parsed.takeError());
  if (l1d == 0 || l2 == 0)
    return emitError() << "#kf.target '" << name
                       << "': l1d and l2 must be non-zero bytes";
  if (cores == 0)
    return emitError() << "#kf.target '" << name
                       << "': cores must be at least 1";
  return success();
}

TargetAttr TargetAttr::get(MLIRContext *context,
                           const target::TargetInfo &info) {
  return get(context, info.name, info.triple, info.cpu,
             info.getLLVMFeatureString(), info.l1dBytes, info.l2Bytes,
             info.l3Bytes, info.cores);
}

target::TargetInfo TargetAttr::getTargetInfo() const {
  target::TargetInfo info;
  info.name = getName().str();
  info.triple = getTriple().str();
  info.arch = *archOfTriple(getTriple());
  info.cpu = getCpu().str();
  info.features =
      llvm::cantFail(target::parseFeatures(getFeatures(), info.arch));
  info.l1dBytes = getL1d();
  info.l2Bytes = getL2();
  info.l3Bytes = getL3();
  info.cores = getCores();
  return info;
}

TargetAttr TargetAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto attr = op->getAttrOfType<TargetAttr>(KfDialect::kTargetAttrName))
      return attr;
  return {};
}

FailureOr<llvm::APFloat> mlir::kf::parseDouble(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

LogicalResult RopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t dim, llvm::APFloat baseValue,
                               llvm::APFloat yarnValue,
                               llvm::APFloat betaFastValue,
                               llvm::APFloat betaSlowValue,
                               int64_t originalContext) {
  double base = baseValue.convertToDouble();
  double yarnFactor = yarnValue.convertToDouble();
  double betaFast = betaFastValue.convertToDouble();
  double betaSlow = betaSlowValue.convertToDouble();
  if (dim <= 0 || dim % 2 != 0)
    return emitError() << "#kf.rope: dim must be positive and even, got "
                       << dim;
  if (!(base > 1))
    return emitError() << "#kf.rope: base must exceed 1, got " << base;
  if (yarnFactor == 0 && betaFast == 0 && betaSlow == 0 && originalContext == 0)
    return success();
  if (!(yarnFactor > 1) || !(betaFast > betaSlow) || !(betaSlow > 0) ||
      originalContext <= 0)
    return emitError() << "#kf.rope: YaRN needs yarn_factor > 1, beta_fast > "
                          "beta_slow > 0 and original_context > 0, got "
                       << yarnFactor << ", " << betaFast << " > " << betaSlow
                       << " and " << originalContext;
  return success();
}

namespace {

/// a · b rounded to fp32 on its own. The golden's YaRN blend adds two such
/// products (it is built with -ffp-contract=off); out of line, so that no
/// compiler allowed to contract fuses one into a multiply-add.
[[gnu::noinline]] float roundedProduct(float a, float b) { return a * b; }

} // namespace

FailureOr<SmallVector<float>> RopeAttr::getFrequencies() const {
  // The golden's ropeFrequencies and yarnCorrectionRange, operation for
  // operation: the frequencies are compared bit for bit with them.
  const int64_t dim = getDim();
  const double base = getBase().convertToDouble();
  SmallVector<float> freqs(static_cast<size_t>(dim / 2));
  for (size_t i = 0; i < freqs.size(); ++i)
    freqs[i] = static_cast<float>(std::pow(base, -2.0 * static_cast<double>(i) /
                                                     static_cast<double>(dim)));
  if (!hasYarn())
    return freqs;
  const double originalContext = static_cast<double>(getOriginalContext());
  // The dim index at which a frequency makes `rotations` full turns over the
  // original context.
  auto correctionDim = [&](double rotations) {
    return static_cast<double>(dim) *
           std::log(originalContext / (2 * std::numbers::pi * rotations)) /
           (2 * std::log(base));
  };
  const int lo = std::max(static_cast<int>(std::floor(
                              correctionDim(getBetaFast().convertToDouble()))),
                          0);
  const int hi = std::min(static_cast<int>(std::ceil(
                              correctionDim(getBetaSlow().convertToDouble()))),
                          static_cast<int>(dim) - 1);
  if (hi <= lo)
    return failure();
  const float span = static_cast<float>(hi - lo);
  const float factor = static_cast<float>(getYarnFactor().convertToDouble());
  for (size_t i = 0; i < freqs.size(); ++i) {
    float r = std::clamp((static_cast<float>(i) - lo) / span, 0.0f, 1.0f);
    float f = freqs[i];
    freqs[i] = roundedProduct(f, 1 - r) + roundedProduct(f / factor, r);
  }
  return freqs;
}

//===----------------------------------------------------------------------===//
// #kf.kernel
//===----------------------------------------------------------------------===//

llvm::hash_code mlir::kf::hash_value(const PackedLayout &layout) {
  return llvm::hash_combine(layout.format, layout.rows, layout.coding);
}

std::string mlir::kf::stringifyPackedLayout(const PackedLayout &layout) {
  // The runtime's name of the layout with the lanes an ISA chooses left out.
  return ::kf::packedLayoutName({static_cast<::kf::Format>(layout.format),
                                 static_cast<int>(layout.rows),
                                 ::kf::LaneEncoding::Unsigned, layout.coding});
}

FailureOr<PackedLayout> mlir::kf::parsePackedLayout(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (failed(parser.parseKeyword(&name)))
    return failure();
  StringRef keyword = name;
  ::kf::WeightCoding coding = ::kf::WeightCoding::File;
  for (::kf::WeightCoding c : ::kf::kWeightCodings)
    if (c != ::kf::WeightCoding::File &&
        keyword.consume_back(::kf::weightCodingSuffix(c))) {
      coding = c;
      break;
    }
  // The format's own name may contain '_' (iq2_xxs), so split at the last
  // "_r".
  size_t split = keyword.rfind("_r");
  int64_t rows = 0;
  if (split == StringRef::npos ||
      keyword.drop_front(split + 2).getAsInteger(10, rows))
    return parser.emitError(loc)
           << "expected a packed layout <format>_r<rows> such as q8_0_r16, "
              "got '"
           << name << "'";
  std::optional<Format> format = symbolizeFormat(keyword.take_front(split));
  if (!format)
    return parser.emitError(loc)
           << "unknown format '" << keyword.take_front(split) << "' in layout '"
           << name << "'";
  return PackedLayout{*format, rows, coding};
}

void mlir::kf::printPackedLayout(AsmPrinter &printer,
                                 const PackedLayout &layout) {
  printer << stringifyPackedLayout(layout);
}

FailureOr<Attribute> mlir::kf::parseColumnTiles(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("dynamic")))
    return Attribute(UnitAttr::get(parser.getContext()));
  SmallVector<int64_t> tiles;
  if (failed(parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            return parser.parseInteger(tiles.emplace_back());
          })))
    return failure();
  return Attribute(DenseI64ArrayAttr::get(parser.getContext(), tiles));
}

void mlir::kf::printColumnTiles(AsmPrinter &printer, Attribute cols) {
  if (auto tiles = dyn_cast<DenseI64ArrayAttr>(cols)) {
    printer << "[";
    llvm::interleaveComma(tiles.asArrayRef(), printer);
    printer << "]";
    return;
  }
  printer << "dynamic";
}

int64_t KernelAttr::getLaneRows(KernelIsa isa) {
  return ::kf::target::getIsaRows(static_cast<::kf::target::KernelIsa>(isa));
}

bool KernelAttr::hasDynamicColumns() const {
  return isa_and_present<UnitAttr>(getCols());
}

::kf::PackedLayout KernelAttr::getWeightLayout() const {
  return {static_cast<::kf::Format>(getLayout().format),
          static_cast<int>(getLayout().rows),
          getIsa() == KernelIsa::NeonDotprod ? ::kf::LaneEncoding::Signed
                                             : ::kf::LaneEncoding::Unsigned,
          getLayout().coding};
}

ArrayRef<int64_t> KernelAttr::getColumnTiles() const {
  if (auto tiles = dyn_cast_if_present<DenseI64ArrayAttr>(getCols()))
    return tiles.asArrayRef();
  return {};
}

int64_t KernelAttr::getWidestColumnTile() const {
  ArrayRef<int64_t> tiles = getColumnTiles();
  return tiles.empty() ? getMaxCols() : tiles.front();
}

KernelAttr
KernelAttr::withColumnTiles(std::optional<ArrayRef<int64_t>> tiles) const {
  MLIRContext *context = getContext();
  Attribute cols = tiles ? Attribute(DenseI64ArrayAttr::get(context, *tiles))
                         : Attribute(UnitAttr::get(context));
  return get(context, getIsa(), getLayout(), getMaxCols(), getThreads(), cols,
             getL2Rows(), getL1K(), getQuantize(), getDecode());
}

KernelAttr KernelAttr::withCacheBlocks(int64_t l2Rows, int64_t l1K) const {
  return get(getContext(), getIsa(), getLayout(), getMaxCols(), getThreads(),
             getCols(), l2Rows, l1K, getQuantize(), getDecode());
}

LogicalResult KernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 KernelIsa kernelIsa, PackedLayout layout,
                                 int64_t maxCols, int64_t threads,
                                 Attribute cols, std::optional<int64_t> l2Rows,
                                 std::optional<int64_t> l1K,
                                 ActivationQuantize quantize,
                                 WeightDecode decode) {
  const ::kf::FormatInfo &format =
      ::kf::formatInfo(static_cast<::kf::Format>(layout.format));
  if (format.role != ::kf::FormatRole::Weight)
    return emitError() << "#kf.kernel: layout " << stringifyPackedLayout(layout)
                       << ": " << format.name
                       << " is not a weight format a matmul multiplies by";
  if (!::kf::hasWeightCoding(format.format, layout.coding))
    return emitError() << "#kf.kernel: layout " << stringifyPackedLayout(layout)
                       << ": "
                       << (layout.coding == ::kf::WeightCoding::Ternary
                               ? "ternary codes are IQ1_S's and IQ1_M's"
                               : "a code book layout is IQ2_XXS's")
                       << ", not " << format.name << "'s";
  int64_t lanes = getLaneRows(kernelIsa);
  if (layout.rows <= 0 || layout.rows % lanes != 0)
    return emitError() << "#kf.kernel: layout " << stringifyPackedLayout(layout)
                       << ": rows must be a positive multiple of " << lanes
                       << " (" << stringifyKernelIsa(kernelIsa)
                       << "'s lanes per vector)";
  if (!::kf::tiling::isMaxColumnTileChoice(maxCols)) {
    InFlightDiagnostic diag = emitError()
                              << "#kf.kernel: max_cols must be one of ";
    llvm::interleave(
        llvm::make_filter_range(::kf::tiling::kColumnTileWidths,
                                ::kf::tiling::isMaxColumnTileChoice),
        diag, ", ");
    return diag << " (a micro-kernel width with which no M >= 2 needs a "
                   "1-wide tile), got "
                << maxCols;
  }
  if (threads < 1)
    return emitError() << "#kf.kernel: threads must be at least 1, got "
                       << threads;
  if (cols && !isa<UnitAttr>(cols)) {
    auto tiles = dyn_cast<DenseI64ArrayAttr>(cols);
    if (!tiles)
      return emitError() << "#kf.kernel: cols must be a list of widths or "
                            "dynamic, got "
                         << cols;
    ArrayRef<int64_t> widths = tiles.asArrayRef();
    // The widths wider than 1; one column alone is [1].
    SmallVector<int64_t, 5> allowed = ::kf::tiling::columnTileWidths(maxCols);
    allowed.pop_back();
    bool ok = !widths.empty();
    for (size_t i = 0; ok && i < widths.size(); ++i)
      ok = llvm::is_contained(allowed, widths[i]) &&
           (i == 0 || widths[i] <= widths[i - 1]);
    if (!ok && !(widths.size() == 1 && widths[0] == 1)) {
      InFlightDiagnostic diag = emitError() << "#kf.kernel: cols [";
      llvm::interleaveComma(widths, diag);
      diag << "] must be widths of {";
      llvm::interleaveComma(allowed, diag);
      return diag << "} (max_cols = " << maxCols
                  << ") widest first, or [1] for one column";
    }
  }
  if (l2Rows && (*l2Rows <= 0 || *l2Rows % layout.rows != 0))
    return emitError() << "#kf.kernel: l2_rows = " << *l2Rows
                       << " must be a positive multiple of the layout's "
                       << layout.rows << " rows";
  if (l1K && (*l1K <= 0 || *l1K % format.blockElems != 0))
    return emitError() << "#kf.kernel: l1_k = " << *l1K
                       << " must be a positive multiple of " << format.name
                       << "'s block of " << format.blockElems;
  if (decode == WeightDecode::once && ::kf::isFloatFormat(format.format))
    return emitError() << "#kf.kernel: decode = once needs a quantized "
                          "format, whose weights are decoded; "
                       << format.name << " is not";
  if (decode == WeightDecode::once && quantize == ActivationQuantize::fused)
    return emitError() << "#kf.kernel: decode = once needs calls of more "
                          "columns than one tile, which quantize = fused "
                          "never makes";
  return success();
}
