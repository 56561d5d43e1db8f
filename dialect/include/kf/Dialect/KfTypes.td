//===- KfTypes.td - kf types --------------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFTYPES
#define KF_DIALECT_KFTYPES

include "kf/Dialect/KfAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

// A format written as its bare mnemonic, with an error that lists the formats.
def Kf_FormatParameter : EnumParameter<Kf_Format> {
  let parser = "::mlir::kf::parseFormat($_parser)";
}

def Kf_QWeightType : Kf_Type<"QWeight", "qweight"> {
  let summary = "A weight tensor stored in a block format";
  let description = [{
    A weight of shape `[rows, cols]`, or `[experts, rows, cols]` for a stack
    of MoE experts, stored in `format` as in a GGUF file: each row of `cols`
    elements is `cols / block_elems` consecutive blocks, so `cols` must be a
    multiple of the format's block size. Rows are output features, `cols`
    the input features a dot product runs along. Activation-only formats
    (such as Q8_K) cannot be weights.

    Example:

    ```mlir
    !kf.qweight<q8_0, [2048, 4096]>        // 2048 rows of 4096 (128 blocks)
    !kf.qweight<f32, [7, 3]>
    !kf.qweight<q8_0, [256, 2048, 4096]>   // 256 experts
    ```
  }];
  let parameters = (ins
    Kf_FormatParameter:$format,
    ArrayRefParameter<"int64_t", "shape, innermost (blocked) dimension last">:$shape
  );
  let assemblyFormat = "`<` $format `,` `[` $shape `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[getShape().size() - 2]; }
    int64_t getCols() const { return getShape().back(); }
    bool isExpertStack() const { return getShape().size() == 3; }
    /// Bytes the weight occupies in its format.
    uint64_t getSizeInBytes() const;
  }];
}

#endif // KF_DIALECT_KFTYPES
