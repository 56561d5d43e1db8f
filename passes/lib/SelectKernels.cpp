//===- SelectKernels.cpp - Decide each matmul's ISA, layout and threads ---===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "kf/Codegen/MatmulKernel.h"
#include "kf/Target/TargetInfo.h"
#include "kf/Tiling/ColumnTiles.h"
#include "kf/Tuning/TuningFile.h"
#include "kf/Tuning/TuningRules.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFSELECTKERNELS
#include "kf/Passes/Passes.h.inc"

namespace {

using ::kf::target::Feature;
using ::kf::target::TargetInfo;

namespace codegen = ::kf::codegen;

/// The emitters' ISA of a #kf.kernel ISA: both enums are made from one
/// table (kf/Target/KernelIsas.def) with the same values.
codegen::KernelIsa toCodegen(KernelIsa isa) {
  return static_cast<codegen::KernelIsa>(isa);
}

/// The features the ISA's kernels are built from (KfAttrs.td names the
/// instructions).
ArrayRef<Feature> getRequiredFeatures(KernelIsa isa) {
  return codegen::getRequiredFeatures(toCodegen(isa));
}

bool canRun(const TargetInfo &target, KernelIsa isa) {
  return codegen::canRunIsa(target, toCodegen(isa));
}

bool hasKernelsFor(KernelIsa isa, Format format) {
  return codegen::isaSupportsFormat(toCodegen(isa),
                                    static_cast<::kf::Format>(format));
}

/// The richest ISA `target` runs that has kernels for `format`, in the
/// table's order of preference (KernelIsas.def: the bf16 and int8 dot
/// instructions, then FMA, each widest first; scalar last). A format without
/// kernels gets the richest int8 ISA (the lowering will refuse it).
KernelIsa selectIsa(const TargetInfo &target, Format format) {
  const bool anyKernels =
      codegen::hasMatmulEmitter(static_cast<::kf::Format>(format));
  for (codegen::KernelIsa preferred : ::kf::target::getIsasByPreference()) {
    auto isa = static_cast<KernelIsa>(preferred);
    if (canRun(target, isa) && (anyKernels ? hasKernelsFor(isa, format)
                                           : hasKernelsFor(isa, Format::Q8_0)))
      return isa;
  }
  return KernelIsa::Scalar;
}

/// The widest column tile a matmul takes unless a tuning rule says
/// otherwise: target/tuning/defaults.tuning's `max_cols`.
int64_t getDefaultMaxCols() {
  std::optional<int64_t> maxCols = ::kf::tuning::getDefaultNumber("max_cols");
  assert(maxCols && ::kf::tiling::isMaxColumnTileChoice(*maxCols) &&
         "defaults.tuning sets a valid max_cols (TuningRulesTest)");
  return *maxCols;
}

/// One matmul's decision while the tuning rules apply to it.
struct Decision {
  KernelIsa isa;
  int64_t rows;
  int64_t maxCols = getDefaultMaxCols();
  int64_t threads;
  std::optional<int64_t> l2Rows, l1K;
  std::optional<ActivationQuantize> quantize;
  ::kf::WeightCoding coding;
  std::optional<WeightDecode> decode;
};

/// The activation format the kernels of `matmul` read.
::kf::Format getActivationFormat(const Matmul &matmul) {
  return ::kf::formatInfo(static_cast<::kf::Format>(matmul.weight.getFormat()))
      .dotFormat;
}

/// Whether `matmul`, one of a kf.moe's, reads the MoE's input: its gate and
/// up projections do, the down projections read the SwiGLU's output.
bool readsMoeInput(const Matmul &matmul) {
  return !matmul.name.starts_with("down");
}

/// Whether the rows `matmul` of `op` multiplies are read by other kernel
/// calls in the same activation format, which a separate quantizer would
/// pack once for all of them: kf.moe's gate and up projections (the token's
/// row is read by each of its k experts' calls, and by the shared expert's
/// two), or an input another matmul op reads (kf.moe reads its input by its
/// gate and up projections).
bool hasSharedInput(Operation *op, const Matmul &matmul) {
  if (isa<MoeOp>(op))
    return readsMoeInput(matmul);
  Value input = op->getOperand(0);
  const ::kf::Format activation = getActivationFormat(matmul);
  for (Operation *user : input.getUsers()) {
    if (user == op || !isMatmulOp(user) || user->getOperand(0) != input)
      continue;
    for (const Matmul &other : getMatmuls(user))
      if ((!isa<MoeOp>(user) || readsMoeInput(other)) &&
          getActivationFormat(other) == activation)
        return true;
  }
  return false;
}

/// Whether the kernel of `matmul` of `op` quantizes its activations by
/// default: when the emitters build it, it multiplies one column (M = 1: a
/// decode step), which a separate quantizer step could not split over
/// threads either, and no other call reads that column: then the fused
/// kernel saves the step and its barrier for nothing. The packed column
/// must fit the kernel's stack. With more columns the separate step splits
/// them over the threads, and a column other calls read too it packs once
/// for all, where every fused call would pack it again (docs/codegen.md,
/// "Fused quantization").
bool fusesQuantizeByDefault(Operation *op, const Matmul &matmul) {
  auto format = static_cast<::kf::Format>(matmul.weight.getFormat());
  if (!codegen::hasMatmulEmitter(format) || matmul.m != 1 ||
      hasSharedInput(op, matmul))
    return false;
  codegen::MatmulKernelSpec spec;
  spec.format = format;
  spec.k = matmul.k;
  spec.maxCols = 1;
  spec.fuseQuantize = true;
  return spec.getPrologueBytes() <= codegen::kMaxPrologueBytes;
}

/// Where the kernel of `matmul` decodes its weights by default, given the
/// decision so far: once where the emitters measured it to gain
/// (codegen::decodesOnceByDefault: the grid and K-quant formats at an M of
/// many columns), never with a fused quantization (whose calls are one tile
/// each), and with a tuned L2 block only if its rows decoded (by the tuned
/// L1 block, else all of K) fit the kernel's scratch.
WeightDecode getDefaultDecode(const Matmul &matmul, const Decision &d,
                              ActivationQuantize quantize) {
  auto format = static_cast<::kf::Format>(matmul.weight.getFormat());
  std::optional<int64_t> m;
  if (!ShapedType::isDynamic(matmul.m))
    m = matmul.m;
  if (!codegen::hasMatmulEmitter(format) ||
      quantize == ActivationQuantize::fused ||
      !codegen::decodesOnceByDefault(format, d.coding, m, d.maxCols))
    return WeightDecode::per_tile;
  codegen::MatmulKernelSpec spec;
  spec.format = format;
  spec.rows = d.rows;
  spec.k = matmul.k;
  spec.l2Rows = d.l2Rows.value_or(d.rows);
  spec.l1K = std::min(d.l1K.value_or(matmul.k), matmul.k);
  spec.decodeOnce = true;
  return spec.getDecodeScratchBytes() <= codegen::kMaxDecodeScratchBytes
             ? WeightDecode::once
             : WeightDecode::per_tile;
}

struct SelectKernelsPass : impl::KfSelectKernelsBase<SelectKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-select-kernels");
    if (!targetAttr)
      return signalPassFailure();
    target = targetAttr.getTargetInfo();
    unsigned requested = threads;
    available = requested > 0 ? requested : target.cores;
    tuning.reset();
    if (!tuningFile.empty()) {
      FailureOr<TuningFile> read = TuningFile::read(&getContext(), tuningFile);
      if (failed(read))
        return signalPassFailure();
      tuning = std::move(*read);
    }

    WalkResult walk = module.walk([&](Operation *op) {
      if (!isMatmulOp(op))
        return WalkResult::advance();
      for (const Matmul &matmul : getMatmuls(op)) {
        KernelAttr kernel = decide(op, matmul);
        if (!kernel)
          return WalkResult::interrupt();
        setKernel(op, matmul.name, kernel);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

private:
  InFlightDiagnostic emitMatmulError(Operation *op, const Matmul &matmul) {
    InFlightDiagnostic diag = op->emitOpError();
    if (!matmul.name.empty())
      diag << matmul.name << ": ";
    return diag;
  }

  /// The weight coding kernels of `isa` read best for weights of `format`.
  ::kf::WeightCoding defaultCoding(Format format, KernelIsa isa) const {
    return codegen::getDefaultWeightCoding(static_cast<::kf::Format>(format),
                                           toCodegen(isa), target);
  }

  /// The decision for `matmul`: the defaults, then every matching tuning
  /// rule in file order. Null after an error.
  KernelAttr decide(Operation *op, const Matmul &matmul) {
    MLIRContext *context = op->getContext();
    if (matmul.weight.isIntegerTable()) {
      emitMatmulError(op, matmul)
          << "weight " << matmul.weight
          << " is an integer table, not a weight a matmul multiplies by";
      return {};
    }
    Format format = matmul.weight.getFormat();
    KernelIsa isa = selectIsa(target, format);
    Decision d{isa, KernelAttr::getLaneRows(isa), 8, available, {}, {},
               {},  defaultCoding(format, isa)};
    const ActivationQuantize defaultQuantize =
        fusesQuantizeByDefault(op, matmul) ? ActivationQuantize::fused
                                           : ActivationQuantize::separate;
    auto build = [&](function_ref<InFlightDiagnostic()> emitError) {
      ActivationQuantize quantize = d.quantize.value_or(defaultQuantize);
      WeightDecode decode =
          d.decode.value_or(getDefaultDecode(matmul, d, quantize));
      return KernelAttr::getChecked(
          emitError, context, d.isa, PackedLayout{format, d.rows, d.coding},
          d.maxCols, d.threads, Attribute(), d.l2Rows, d.l1K, quantize, decode);
    };
    if (tuning) {
      TuningKey key{format, target.name, isa, matmul.m, matmul.n, matmul.k};
      for (const TuningRule &rule : tuning->rules) {
        if (!rule.matches(key))
          continue;
        auto emitRuleError = [&]() {
          return emitMatmulError(op, matmul)
                 << "tuning file " << tuning->path << ":" << rule.line << ": ";
        };
        if (rule.setIsa) {
          if (!canRun(target, *rule.setIsa)) {
            InFlightDiagnostic diag =
                emitRuleError()
                << "isa = " << stringifyKernelIsa(*rule.setIsa) << " needs ";
            llvm::interleaveComma(
                getRequiredFeatures(*rule.setIsa), diag,
                [&](Feature f) { diag << ::kf::target::getFeatureName(f); });
            diag << ", which target '" << target.name << "' lacks";
            return {};
          }
          if (codegen::hasMatmulEmitter(static_cast<::kf::Format>(format)) &&
              !hasKernelsFor(*rule.setIsa, format)) {
            emitRuleError() << "isa = " << stringifyKernelIsa(*rule.setIsa)
                            << " has no kernels for " << stringifyFormat(format)
                            << " weights";
            return {};
          }
          d.isa = *rule.setIsa;
          d.rows = KernelAttr::getLaneRows(d.isa);
          d.coding = defaultCoding(format, d.isa);
        }
        d.rows = rule.setRows.value_or(d.rows);
        d.maxCols = rule.setMaxCols.value_or(d.maxCols);
        if (rule.setThreads)
          d.threads = std::min(*rule.setThreads, available);
        if (rule.setL2Rows)
          d.l2Rows = rule.setL2Rows;
        if (rule.setL1K)
          d.l1K = rule.setL1K;
        if (rule.setQuantize)
          d.quantize = rule.setQuantize;
        if (rule.setCoding)
          d.coding = *rule.setCoding;
        // The layout is checked against the format by the attribute; whether
        // the kernels can read it depends on the target too.
        if (d.coding == ::kf::WeightCoding::CodeBook)
          if (std::string why =
                  codegen::whyNoCodeBookLayout(toCodegen(d.isa), target);
              !why.empty()) {
            emitRuleError() << "coding = codebook " << why;
            return {};
          }
        if (rule.setDecode)
          d.decode = rule.setDecode;
        if (!build(emitRuleError))
          return {};
      }
    }
    // A rule need not name the shape: a block larger than the matrix is
    // the whole matrix.
    if (d.l1K)
      d.l1K = std::min(*d.l1K, matmul.k);
    if (d.l2Rows)
      d.l2Rows = std::min(*d.l2Rows,
                          llvm::divideCeilSigned(matmul.n, d.rows) * d.rows);
    return build([&]() { return emitMatmulError(op, matmul); });
  }

  TargetInfo target;
  int64_t available = 1;
  std::optional<TuningFile> tuning;
};

} // namespace
} // namespace mlir::kf
