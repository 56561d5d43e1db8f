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

#endif // KF_DIALECT_KFATTRS
