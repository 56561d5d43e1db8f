//===- KfBase.td - The kf dialect ---------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFBASE
#define KF_DIALECT_KFBASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kf_Dialect : Dialect {
  let name = "kf";
  let cppNamespace = "::mlir::kf";
  let summary = "Quantized Mixture-of-Experts model graphs and their kernels";
  let description = [{
    The `kf` dialect expresses a quantized transformer forward pass at tensor
    level (graph ops such as `kf.rms_norm` and `kf.linear` over `tensor<...>`
    activations and `!kf.qweight` weights) and, after kernel selection, the
    decisions the compiler takes for each kernel, recorded as attributes.

    The discardable module attribute `kf.target` (a `#kf.target`) names the
    CPU a module is compiled for; `--kf-set-target` attaches it. The
    discardable attribute `kf.kernel` holds the kernel decisions of a matmul
    op (`#kf.kernel`); `--kf-select-kernels` attaches it. The discardable
    attribute `kf.layer_kind` (a non-empty string on a `kf.cache`) is the
    model's name for the kind of the layer the cache belongs to. The
    discardable attribute `kf.max_context` (a positive i64 on the module)
    is the longest sequence its caches hold; `--kf-bound-context` attaches
    it.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let extraClassDeclaration = [{
    /// Name of the discardable attribute holding a module's #kf.target.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "kf.target";
    /// Name of the discardable attribute holding a matmul's #kf.kernel.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "kf.kernel";
    /// Name of the discardable string attribute a model puts on a kf.cache
    /// op to name its layer's kind (e.g. "CSA"), which reports show.
    static constexpr ::llvm::StringLiteral kLayerKindAttrName =
        "kf.layer_kind";
    /// Name of the discardable i64 attribute on a module: the longest
    /// sequence, in tokens, its caches hold.
    static constexpr ::llvm::StringLiteral kMaxContextAttrName =
        "kf.max_context";
    /// Name of the discardable i64 attribute on a module: the most token
    /// rows one call of its functions takes, which its KV window rings were
    /// sized to hold beside the window.
    static constexpr ::llvm::StringLiteral kMaxRowsAttrName = "kf.max_rows";
    /// On a function's result: the name of the run buffer a plan gives it
    /// (kf-build-plan), in place of `result<j>`.
    static constexpr ::llvm::StringLiteral kNameAttrName = "kf.name";
  }];
}

class Kf_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kf_Dialect, mnemonic, traits>;

class Kf_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kf_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Kf_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kf_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // KF_DIALECT_KFBASE
