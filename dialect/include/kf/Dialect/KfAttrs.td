//===- KfAttrs.td - kf attributes ---------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFATTRS
#define KF_DIALECT_KFATTRS

include "kf/Dialect/KfBase.td"
include "mlir/IR/EnumAttr.td"
// Generated from runtime/include/kf/runtime/formats.def: defines Kf_FormatCases.
include "kf/Dialect/KfFormatCases.td"
include "kf/Dialect/KfKernelIsaCases.td"

def Kf_Format : I32EnumAttr<"Format", "weight or activation storage format",
                            Kf_FormatCases> {
  let cppNamespace = "::mlir::kf";
  let genSpecializedAttr = 0;
}

def Kf_FormatAttr : EnumAttr<Kf_Dialect, Kf_Format, "format"> {
  let summary = "A weight or activation format of the format table";
}

def Kf_TargetAttr : Kf_Attr<"Target", "target"> {
  let summary = "The CPU a module is compiled for";
  let description = [{
    Everything passes decide from: LLVM triple and CPU, ISA features (LLVM
    names), cache sizes in bytes (L1d and L2 per core, L3 per shared slice;
    0 when absent) and a core count. Built from a named target or the host by
    `--kf-set-target`, or written into a test directly so that ISA choices
    can be tested on any machine.

    Example:

    ```mlir
    module attributes {kf.target = #kf.target<name = "x86-64-v3",
        triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3",
        features = "+sse4.2,+avx2,+fma,+f16c",
        l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"target name">:$name,
    StringRefParameter<"LLVM target triple">:$triple,
    StringRefParameter<"LLVM CPU name">:$cpu,
    StringRefParameter<"LLVM target features, e.g. \"+avx2,+fma\"">:$features,
    "uint64_t":$l1d,
    "uint64_t":$l2,
    "uint64_t":$l3,
    "unsigned":$cores
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static TargetAttr get(::mlir::MLIRContext *context,
                          const ::kf::target::TargetInfo &info);
    /// The TargetInfo this attribute describes (it was verified to parse).
    ::kf::target::TargetInfo getTargetInfo() const;
    /// The #kf.target on `op` or its nearest ancestor, or null.
    static TargetAttr lookup(::mlir::Operation *op);
  }];
}

// The instruction set family a matmul kernel is generated for, each named for
// the dot-product instruction its kernels are built around; the richest one a
// target runs for the weight's format is chosen by --kf-select-kernels. Its
// cases are generated from the target layer's table
// (target/include/kf/Target/KernelIsas.def: rows, formats, features and
// preference), with the values of kf::target::KernelIsa.
def Kf_KernelIsa : I32EnumAttr<"KernelIsa",
    "instruction set family of a matmul kernel", Kf_KernelIsaCases> {
  let cppNamespace = "::mlir::kf";
}

// How a matmul's fp32 activations become the packed blocks its kernel reads.
// `separate`: a kf.quantize_activations packs them, once for every matmul of
// the same input; `fused`: the kernel packs them itself, as its prologue (no
// step, barrier or buffer between the two; each call packs its own columns).
def Kf_ActivationQuantize : I32EnumAttr<"ActivationQuantize",
    "where a matmul's activations are quantized",
    [I32EnumAttrCase<"separate", 0>, I32EnumAttrCase<"fused", 1>]> {
  let cppNamespace = "::mlir::kf";
}

// Where a matmul's kernel decodes its weights when a call has more columns
// than one tile (with cache blocks). `per_tile`: every column tile decodes the
// blocks it multiplies; `once`: each row block is decoded once into int8 lanes
// on the kernel's stack, which every column tile reads.
def Kf_WeightDecode : I32EnumAttr<"WeightDecode",
    "where a matmul kernel decodes its weights",
    [I32EnumAttrCase<"per_tile", 0>, I32EnumAttrCase<"once", 1>]> {
  let cppNamespace = "::mlir::kf";
}

// A packed weight layout, written `<format>_r<rows>` (`q8_0_r16`).
def Kf_PackedLayoutParameter
    : AttrOrTypeParameter<"::mlir::kf::PackedLayout",
                          "packed weight layout: format and row interleave"> {
  let parser = "::mlir::kf::parsePackedLayout($_parser)";
  let printer = "::mlir::kf::printPackedLayout($_printer, $_self)";
}

// The column tiles: absent, `dynamic` or a list `[8, 4, 3, 2]`. Held as an
// attribute (a dense i64 array, or a unit attribute for `dynamic`) so the
// three states need no storage of their own.
def Kf_ColumnTilesParameter
    : OptionalParameter<"::mlir::Attribute",
                        "column tiles: a static list, or dynamic"> {
  let parser = "::mlir::kf::parseColumnTiles($_parser)";
  let printer = "::mlir::kf::printColumnTiles($_printer, $_self)";
}

class Kf_DefaultEnumParameter<EnumAttrInfo enum, string default>
    : EnumParameter<enum> {
  let defaultValue = default;
}

class Kf_OptionalIntParameter<string desc>
    : OptionalParameter<"std::optional<int64_t>", desc> {
  let printer = "$_printer << *$_self";
}

def Kf_KernelAttr : Kf_Attr<"Kernel", "kernel"> {
  let summary = "The kernel decisions of one matrix multiplication";
  let description = [{
    Every decision the kernel passes take for one matrix multiplication
    `y[m, n] = sum_k x[m, k] * w[n, k]` (docs/codegen.md), so that tests
    check them, a tuning file overrides them and code emission reads them
    instead of deciding again. It is held by the discardable attribute
    `kf.kernel`: a `#kf.kernel` on `kf.linear` and `kf.grouped_linear` (the
    decision for each group's matmul), and on `kf.moe` a dictionary with one
    `#kf.kernel` per weight operand (`gate_exps`, `up_exps`, `down_exps`,
    `gate_shexp`, `up_shexp`, `down_shexp`).

    * `isa`: the instruction set family: `scalar`, `avx2`, `avx512vnni` or
      `neon_dotprod` (the quantized formats' int8 dots); `scalar`, `avx2`,
      `avx512`, `avx512bf16` (bf16 only) `neon` or `neon_bf16` (bf16 only)
      for the float formats.
    * `layout`: the packed weight layout, `<format>_r<rows>`: the weight's
      format with its rows interleaved in groups of `rows`, which is also the
      rows one micro-kernel computes. `rows` is a multiple of the int32 lanes
      of one vector of the ISA (16 for the AVX-512 ISAs, 8 for `avx2`, 4 for
      the NEON ones, 1 for `scalar`): one lane per row.
    * `max_cols`: the widest column tile, one of the micro-kernel widths
      {8, 4, 3, 2} with which no M >= 2 needs a 1-wide tile (8, 4 or 3:
      `kf::tiling::isMaxColumnTileChoice`, kf/Tiling/ColumnTiles.h); the
      tiles are the widths up to it.
    * `threads`: how many threads split the N rows.
    * `cols` (`--kf-tile-columns`): the micro-kernel widths the M token
      columns are split into, widest first (`[1]` for M = 1, never a 1-wide
      tile otherwise), or `dynamic` when M is only known at run time and a
      dispatcher splits it by the same rule.
    * `l2_rows`, `l1_k` (`--kf-block-caches`): weight rows per L2 block, a
      multiple of `rows`, and K elements per L1 block, a multiple of the
      format's block.
    * `quantize`: `separate` (the default, not printed) or `fused`, where the
      kernel quantizes its fp32 activations itself as its prologue: chosen
      for one column (M = 1: decode, a single token's expert buckets) that
      no other kernel reads, where a separate step would run on one thread
      anyway and its barrier is all it adds.
    * `decode`: `per_tile` (the default, not printed) or `once`, where a call
      of more columns than one tile decodes each row block of its cache
      blocks once, into int8 lanes on the kernel's stack, that every column
      tile then reads instead of decoding them again: chosen for the
      quantized formats whose decoding costs more than reloading its lanes,
      at an M of more than one tile or a dynamic M. Needs a quantized
      format, and activations quantized separately.

    Example:

    ```mlir
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni,
        layout = q8_0_r16, max_cols = 8, threads = 16, cols = [8, 4, 3, 2],
        l2_rows = 128, l1_k = 2048>}
        : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
    ```

    Before `--kf-tile-columns` and `--kf-block-caches`, `cols`, `l2_rows`
    and `l1_k` are absent: `#kf.kernel<isa = avx2, layout = q4_0_r8,
    max_cols = 8, threads = 8>`.
  }];
  let parameters = (ins
    EnumParameter<Kf_KernelIsa>:$isa,
    Kf_PackedLayoutParameter:$layout,
    "int64_t":$max_cols,
    "int64_t":$threads,
    Kf_ColumnTilesParameter:$cols,
    Kf_OptionalIntParameter<"weight rows per L2 block">:$l2_rows,
    Kf_OptionalIntParameter<"K elements per L1 block">:$l1_k,
    Kf_DefaultEnumParameter<Kf_ActivationQuantize,
                            "::mlir::kf::ActivationQuantize::separate">:$quantize,
    Kf_DefaultEnumParameter<Kf_WeightDecode,
                            "::mlir::kf::WeightDecode::per_tile">:$decode
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Weight rows per micro-kernel: the layout's row interleave.
    int64_t getRows() const { return getLayout().rows; }
    /// The packed layout the runtime repacks the weight to: `layout`, with
    /// the lanes signed for the signed dot of `neon_dotprod` (sdot) and
    /// offset to unsigned for the others (vpdpbusd, vpmaddubsw).
    ::kf::PackedLayout getWeightLayout() const;
    /// Whether `cols` is set, to a static list or to `dynamic`.
    bool hasColumnTiles() const { return static_cast<bool>(getCols()); }
    /// `cols = dynamic`: a dispatcher tiles M at run time.
    bool hasDynamicColumns() const;
    /// The static column tiles, widest first; empty when absent or dynamic.
    ::llvm::ArrayRef<int64_t> getColumnTiles() const;
    /// The widest column tile the kernel runs: the widest static tile, else
    /// `max_cols`.
    int64_t getWidestColumnTile() const;

    /// This decision with `cols` set to `tiles`, or to `dynamic` when
    /// `tiles` is std::nullopt.
    KernelAttr withColumnTiles(
        std::optional<::llvm::ArrayRef<int64_t>> tiles) const;
    /// This decision with `l2_rows` and `l1_k` set.
    KernelAttr withCacheBlocks(int64_t l2Rows, int64_t l1K) const;
    /// Whether the kernel quantizes its activations (`quantize = fused`).
    bool isQuantizeFused() const {
      return getQuantize() == ActivationQuantize::fused;
    }
    /// Whether the kernel decodes each row block once (`decode = once`).
    bool isDecodedOnce() const { return getDecode() == WeightDecode::once; }

    /// The int32 lanes of one vector register of `isa`: the smallest row
    /// interleave its kernels use (a vpdpbusd lane per row).
    static int64_t getLaneRows(KernelIsa isa);
  }];
}

// The precision an op computes or rounds its result to. `f32`: the result is
// the fp32 value. `bf16`: the result is rounded to the nearest bf16 (ties to
// even) and kept in an f32 tensor, which is how the model's bf16 tensors are
// held between kernels.
def Kf_Precision : I32EnumAttr<"Precision", "precision of an op's result",
    [I32EnumAttrCase<"f32", 0>, I32EnumAttrCase<"bf16", 1>]> {
  let cppNamespace = "::mlir::kf";
}


def Kf_EntryPost : I32EnumAttr<"EntryPost",
    "what follows the pooling of a compressed entry",
    [I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"fp8", 1>,
     I32EnumAttrCase<"hadamard_fp4", 2>]> {
  let cppNamespace = "::mlir::kf";
}


// A double held as an f64 APFloat (so it hashes), written as a float literal.
class Kf_DoubleParameter<string desc, string default = "">
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = "::mlir::kf::parseDouble($_parser)";
  let printer = "$_printer << $_self.convertToDouble()";
  let defaultValue = !if(!empty(default), "",
                         "::llvm::APFloat(" # default # ")");
}

def Kf_RopeAttr : Kf_Attr<"Rope", "rope"> {
  let summary = "Rotary position embedding parameters, with optional YaRN";
  let description = [{
    The last `dim` values of each row rotate in interleaved pairs
    `(x[2i], x[2i+1])` by `pos * f_i` with `f_i = base^(-2i/dim)`. With
    `yarn_factor` > 0 the frequencies are YaRN-blended with `f_i / factor`
    over the correction range given by `beta_fast`, `beta_slow` and
    `original_context` (docs/models/deepseek_v4_model.md §2).

    Example:

    ```mlir
    #kf.rope<dim = 64, base = 1.000000e+04>
    #kf.rope<dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01,
             beta_fast = 3.200000e+01, beta_slow = 1.000000e+00,
             original_context = 65536>
    ```
  }];
  let parameters = (ins
    "int64_t":$dim,
    Kf_DoubleParameter<"frequency base">:$base,
    Kf_DoubleParameter<"YaRN factor, 0 without YaRN", "0.0">:$yarn_factor,
    Kf_DoubleParameter<"YaRN beta_fast", "0.0">:$beta_fast,
    Kf_DoubleParameter<"YaRN beta_slow", "0.0">:$beta_slow,
    DefaultValuedParameter<"int64_t", "0">:$original_context
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool hasYarn() const { return getYarnFactor().convertToDouble() > 0; }
    /// The dim/2 frequencies f_i, in the fp64 and fp32 operations and order
    /// of the golden's ropeFrequencies (docs/models/deepseek_v4_model.md §2):
    /// fp32(base^(-2i/dim)), YaRN-blended when hasYarn(). Failure where the
    /// YaRN ramp is empty (its ends meet), which the golden refuses too.
    ::mlir::FailureOr<::llvm::SmallVector<float>> getFrequencies() const;
  }];
}

#endif // KF_DIALECT_KFATTRS
