//===- MatmulKernel.cpp - Kernel specs and what a target needs to run them ===//

#include "kf/Codegen/MatmulKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Tiling/CacheBlocks.h"
#include "kf/Tiling/ColumnTiles.h"
#include "kf/Tuning/TuningRules.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace kf::codegen {

using target::Feature;

bool hasMatmulEmitter(kf::Format format) {
  switch (format) {
  case kf::Format::Q8_0:
  case kf::Format::Q4_0:
  case kf::Format::MXFP4:
  case kf::Format::Q4_K:
  case kf::Format::Q5_K:
  case kf::Format::Q6_K:
  case kf::Format::BF16:
  case kf::Format::F32:
  case kf::Format::IQ2_XXS:
  case kf::Format::IQ1_S:
  case kf::Format::IQ1_M:
  case kf::Format::FRACTAL64:
  case kf::Format::VQ3_64:
    return true;
  default:
    return false;
  }
}

bool isaSupportsFormat(KernelIsa isa, kf::Format format) {
  return hasMatmulEmitter(format) && target::isaTakesFormat(isa, format);
}

namespace {

/// The facts the defaults file selects on for a tile of weights in `format`.
std::vector<tuning::Fact> tuningFacts(kf::Format format,
                                      std::optional<kf::WeightCoding> coding,
                                      std::optional<int64_t> width) {
  std::vector<tuning::Fact> facts = {
      {"format", std::string(kf::formatInfo(format).name)}};
  if (coding)
    facts.push_back({"coding", std::string(kf::weightCodingName(*coding))});
  if (width)
    facts.push_back({"width", std::to_string(*width)});
  return facts;
}

} // namespace

WeightPrefetch getDefaultWeightPrefetch(kf::Format format, int64_t width) {
  const std::vector<tuning::Fact> facts =
      tuningFacts(format, std::nullopt, width);
  return {tuning::getDefaultNumber("prefetch_l2", facts).value_or(0),
          tuning::getDefaultNumber("prefetch_l1", facts).value_or(0),
          tuning::getDefault("prefetch_order", facts) == "keep"};
}

bool hasCodeBookLayout(KernelIsa isa, const target::TargetInfo &target) {
  std::unique_ptr<DotEmitter> dot = createDotEmitter(isa, target);
  const CodeBookLookup *lookup = dot ? dot->getCodeBookLookup() : nullptr;
  return lookup && lookup->hasCodeBookMaskedLanes();
}

std::string whyNoCodeBookLayout(KernelIsa isa,
                                const target::TargetInfo &target) {
  if (hasCodeBookLayout(isa, target))
    return "";
  if (isa != KernelIsa::Avx512Vnni)
    return llvm::formatv("needs avx512vnni kernels, not {0} ones",
                         getIsaName(isa));
  llvm::SmallVector<llvm::StringRef, 3> lacks;
  for (Feature f : {Feature::AVX512VBMI, Feature::GFNI, Feature::BMI2})
    if (!target.has(f))
      lacks.push_back(target::getFeatureName(f));
  assert(!lacks.empty() && "avx512vnni kernels read it with these three");
  return llvm::formatv("needs avx512vbmi, gfni and bmi2, of which target "
                       "'{0}' lacks {1}",
                       target.name, llvm::join(lacks, ", "));
}

kf::WeightCoding getDefaultWeightCoding(kf::Format format, KernelIsa isa,
                                        const target::TargetInfo &target) {
  if (kf::hasWeightCoding(format, kf::WeightCoding::Ternary))
    return kf::WeightCoding::Ternary;
  // Where the kernels read it, the code book layout takes the index permute
  // and the sign masks' pext out of the decode (docs/codegen.md, "IQ grid
  // formats"; the figures: docs/codegen-measurements.md, "IQ grid formats").
  if (kf::hasWeightCoding(format, kf::WeightCoding::CodeBook) &&
      hasCodeBookLayout(isa, target))
    return kf::WeightCoding::CodeBook;
  return kf::WeightCoding::File;
}

std::optional<int64_t> getDecodeOnceMinColumns(kf::Format format,
                                               kf::WeightCoding coding) {
  return tuning::getDefaultNumber("decode_once_from",
                                  tuningFacts(format, coding, std::nullopt));
}

bool decodesOnceByDefault(kf::Format format, kf::WeightCoding coding,
                          std::optional<int64_t> m, int64_t maxCols) {
  std::optional<int64_t> from = getDecodeOnceMinColumns(format, coding);
  if (!from)
    return false;
  if (!m)
    return *from <= maxCols + 1;
  return *m > maxCols && *m >= *from;
}

std::string MatmulKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_matmul_{0}{1}_{2}_r{3}_c{4}_k{5}_n{6}",
                       formatInfo(format).name,
                       kf::weightCodingSuffix(coding, '_'), getIsaName(isa),
                       rows, maxCols, k, n)
             .str() +
         (roundToBf16 ? "_bf16" : "") +
         (l1K || l2Rows ? llvm::formatv("_l1k{0}_l2r{1}", l1K, l2Rows).str()
                        : "") +
         (prefetch
              ? llvm::formatv("_pf{0}x{1}{2}", prefetch->l2Bytes,
                              prefetch->l1Bytes, prefetch->keepOrder ? "o" : "")
                    .str()
              : "") +
         (fuseQuantize ? "_fq" : "") + (decodeOnce ? "_do" : "");
}

kf::PackedLayout MatmulKernelSpec::getWeightLayout() const {
  // vpdpbusd and vpmaddubsw multiply unsigned weight lanes, sdot signed ones.
  // The portable kernel reads the x86 layouts, on any target.
  return {format, static_cast<int>(rows),
          isa == KernelIsa::NeonDotprod ? kf::LaneEncoding::Signed
                                        : kf::LaneEncoding::Unsigned,
          coding};
}

int64_t MatmulKernelSpec::getWeightBytes() const {
  return (n + rows - 1) / rows * kf::packedGroupBytes(getWeightLayout(), k);
}

kf::Format MatmulKernelSpec::getActivationFormat() const {
  return formatInfo(format).dotFormat;
}

int64_t MatmulKernelSpec::getActivationColumnBytes() const {
  return kf::packedActivationColumnBytes(getActivationFormat(), k);
}

int64_t MatmulKernelSpec::getPrologueBytes() const {
  return fuseQuantize ? maxCols * getActivationColumnBytes() : 0;
}

int64_t MatmulKernelSpec::getDecodeScratchBytes() const {
  if (!decodeOnce)
    return 0;
  const int64_t blocks =
      llvm::divideCeil(l1K != 0 ? l1K : k, kf::packedBlockElems(format));
  return (l2Rows != 0 ? l2Rows : rows) * blocks *
         tiling::decodedRowBlockBytes(format);
}

std::string MatmulKernelSpec::describe() const {
  return llvm::formatv("{0}{1}/{2} r{3} c{4} [{5} x {6}]",
                       formatInfo(format).name,
                       kf::weightCodingSuffix(coding, ' '), getIsaName(isa),
                       rows, maxCols, n, k)
             .str() +
         (roundToBf16 ? " bf16" : "") +
         (l1K || l2Rows
              ? llvm::formatv(" l1_k {0} l2_rows {1}", l1K, l2Rows).str()
              : "") +
         (prefetch ? llvm::formatv(" prefetch {0}/{1}{2}", prefetch->l2Bytes,
                                   prefetch->l1Bytes,
                                   prefetch->keepOrder ? " in order" : "")
                         .str()
                   : "") +
         (fuseQuantize ? " fused quantize" : "") +
         (decodeOnce ? " decode once" : "");
}

namespace {

/// The architecture whose instructions the ISA's intrinsics are; none for the
/// portable kernel.
std::optional<target::Arch> requiredArch(KernelIsa isa) {
  switch (isa) {
  case KernelIsa::Scalar:
    return std::nullopt;
  case KernelIsa::Avx2:
  case KernelIsa::Avx512Vnni:
  case KernelIsa::Avx512:
  case KernelIsa::Avx512Bf16:
    return target::Arch::X86_64;
  case KernelIsa::NeonDotprod:
  case KernelIsa::Neon:
  case KernelIsa::NeonBf16:
    return target::Arch::AArch64;
  }
  return std::nullopt;
}

llvm::Error fail(const MatmulKernelSpec &spec, const llvm::Twine &what) {
  return llvm::createStringError("matmul kernel " + spec.describe() + ": " +
                                 what);
}

} // namespace

llvm::Error verifyMatmulKernel(const MatmulKernelSpec &spec,
                               const target::TargetInfo &target) {
  if (!hasMatmulEmitter(spec.format))
    return fail(spec, "no emitter for this format, expected q8_0, q4_0, "
                      "mxfp4, q4_k, q5_k, q6_k, iq2_xxs, iq1_s, iq1_m, "
                      "fractal64, vq3_64, bf16 or f32");
  if (!kf::hasWeightCoding(spec.format, spec.coding))
    return fail(spec, spec.coding == kf::WeightCoding::Ternary
                          ? "a ternary layout is IQ1_S's or IQ1_M's, expected "
                            "iq1_s or iq1_m weights"
                          : "a code book layout is IQ2_XXS's, expected "
                            "iq2_xxs weights");
  if (!isaSupportsFormat(spec.isa, spec.format))
    return fail(spec, llvm::formatv("{0} has no kernels for {1} weights",
                                    getIsaName(spec.isa),
                                    formatInfo(spec.format).name));
  if (spec.rows != 1 && spec.rows != 4 && spec.rows != 8 && spec.rows != 16)
    return fail(spec, "expected 1, 4, 8 or 16 rows per group");
  if (int64_t rows = getIsaRows(spec.isa);
      spec.isa != KernelIsa::Scalar && spec.rows != rows)
    return fail(spec, llvm::formatv("{0} holds {1} rows per vector, expected "
                                    "rows = {1}",
                                    getIsaName(spec.isa), rows));
  // The float formats' rows end in a zero-padded block, so any K works.
  if (int64_t block = formatInfo(spec.format).blockElems;
      spec.k <= 0 || spec.k % block != 0)
    return fail(spec,
                llvm::formatv("expected K a positive multiple of {0}", block));
  if (spec.n <= 0)
    return fail(spec, "expected N > 0");
  if (spec.maxCols < 1 || spec.maxCols > tiling::kMaxColumnTile)
    return fail(spec, llvm::formatv("expected a widest column tile of 1 to {0}",
                                    tiling::kMaxColumnTile));
  if (int64_t block = kf::packedBlockElems(spec.format);
      spec.l1K < 0 || spec.l1K > spec.k ||
      (spec.l1K % block != 0 && spec.l1K != spec.k))
    return fail(spec, llvm::formatv("expected l1_k a multiple of {0} below "
                                    "K, K itself, or 0",
                                    block));
  if (spec.l2Rows < 0 || spec.l2Rows % spec.rows != 0)
    return fail(spec, "expected l2_rows a multiple of the rows, or 0");
  if (spec.getPrologueBytes() > kMaxPrologueBytes)
    return fail(spec,
                llvm::formatv("a fused quantization packs {0} bytes on "
                              "the stack, expected at most {1}",
                              spec.getPrologueBytes(), kMaxPrologueBytes));
  if (spec.decodeOnce && kf::isFloatFormat(spec.format))
    return fail(spec, "decode once needs a quantized format, whose weights "
                      "are decoded");
  if (spec.decodeOnce && spec.l1K == 0 && spec.l2Rows == 0)
    return fail(spec, "decode once needs cache blocks (l1_k or l2_rows), "
                      "the blocks it decodes");
  if (spec.decodeOnce && spec.fuseQuantize)
    return fail(spec, "decode once needs calls of more columns than one "
                      "tile, which a fused quantization never makes");
  if (spec.getDecodeScratchBytes() > kMaxDecodeScratchBytes)
    return fail(spec, llvm::formatv("decoding once takes {0} bytes of stack, "
                                    "expected at most {1}",
                                    spec.getDecodeScratchBytes(),
                                    kMaxDecodeScratchBytes));
  if (std::optional<target::Arch> arch = requiredArch(spec.isa);
      arch && target.arch != *arch)
    return fail(spec,
                llvm::formatv("{0} is an {1} ISA, target '{2}' is {3}",
                              getIsaName(spec.isa),
                              *arch == target::Arch::X86_64
                                  ? "x86-64"
                                  : target::getArchName(*arch),
                              target.name, target::getArchName(target.arch)));
  for (Feature f : getRequiredFeatures(spec.isa))
    if (!target.has(f))
      return fail(spec, llvm::formatv("{0} needs target feature '{1}', which "
                                      "target '{2}' lacks",
                                      getIsaName(spec.isa),
                                      target::getFeatureName(f), target.name));
  if (spec.coding == kf::WeightCoding::CodeBook)
    if (std::string why = whyNoCodeBookLayout(spec.isa, target); !why.empty())
      return fail(spec, "a code book layout " + why);
  return llvm::Error::success();
}

} // namespace kf::codegen
