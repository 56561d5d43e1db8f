//===- KfAttrs.td - kf attributes ---------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFATTRS
#define KF_DIALECT_KFATTRS

include "kf/Dialect/KfBase.td"
include "mlir/IR/EnumAttr.td"
// Generated from runtime/include/kf/runtime/formats.def: defines Kf_FormatCases.
include "kf/Dialect/KfFormatCases.td"

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
    `original_context` (spec §2).

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
  }];
}

#endif // KF_DIALECT_KFATTRS
