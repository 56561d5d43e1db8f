//===- KfTypes.td - kf types --------------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFTYPES
#define KF_DIALECT_KFTYPES

include "kf/Dialect/KfAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

// A format written as its bare mnemonic, with an error that lists the formats.
def Kf_FormatParameter : EnumParameter<Kf_Format> {
  let parser = "::mlir::kf::parseFormat($_parser)";
}

// Type summaries start in lower case: ODS completes constraint errors with
// them ("operand #1 must be a weight tensor stored in a block format").
def Kf_QWeightType : Kf_Type<"QWeight", "qweight"> {
  let summary = "a weight tensor stored in a block format";
  let description = [{
    A weight of shape `[rows, cols]`, or `[experts, rows, cols]` for a stack
    of MoE experts, or `[cols]` for a vector (a norm, a bias), stored in
    `format` as in a GGUF file: each row of `cols` elements is
    `cols / block_elems` consecutive blocks, so `cols` must be a multiple of
    the format's block size. Rows are output features, `cols` the input
    features a dot product runs along. Integer tables (`i32`, such as
    DeepSeek-V4's token-to-expert table) are weights too; activation-only
    formats (such as Q8_K) cannot be.

    Example:

    ```mlir
    !kf.qweight<q8_0, [2048, 4096]>        // 2048 rows of 4096 (128 blocks)
    !kf.qweight<f32, [7, 3]>
    !kf.qweight<q8_0, [256, 2048, 4096]>   // 256 experts
    !kf.qweight<f32, [4096]>               // a norm's weight
    !kf.qweight<i32, [129280, 6]>          // a token-to-expert table
    ```
  }];
  let parameters = (ins
    Kf_FormatParameter:$format,
    ArrayRefParameter<"int64_t", "shape, innermost (blocked) dimension last">:$shape
  );
  let assemblyFormat = "`<` $format `,` `[` $shape `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rows of the innermost matrix; 1 for a vector.
    int64_t getRows() const {
      return getShape().size() < 2 ? 1 : getShape()[getShape().size() - 2];
    }
    int64_t getCols() const { return getShape().back(); }
    bool isExpertStack() const { return getShape().size() == 3; }
    /// An integer table (such as tid2eid): looked up, never decoded to floats.
    bool isIntegerTable() const;
    /// Bytes the weight occupies in its format.
    uint64_t getSizeInBytes() const;
  }];
}

def Kf_WindowCacheType : Kf_Type<"WindowCache", "window_cache"> {
  let summary = "a ring of the latest KV rows of one attention layer";
  let description = [{
    `rows` KV rows of `dim` values stored as `element`: the row of position
    `p` lives in slot `p mod rows`. It is state that outlives a call: a
    `kf.cache` symbol declares it, `kf.cache_append` writes it and
    `kf.cache_read` reads it, so passes see the effects.

    Example:

    ```mlir
    !kf.window_cache<rows = 128, dim = 512, element = bf16>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$dim, "::mlir::Type":$element);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kf_CompressedCacheType : Kf_Type<"CompressedCache", "compressed_cache"> {
  let summary = "a compressor's cache of entries and its running state";
  let description = [{
    The compressed KV entries of one layer (or of its indexer), one per
    `ratio` tokens, `dim` values each stored as `element`, and the running
    state that pools the next entry: the projections of the tokens of the
    unfinished block and, when `overlap` is set (ratio 4 in DeepSeek-V4),
    of the last complete block too. `kf.compress` appends to it and
    `kf.cache_read` reads its entries as a `tensor<?x dim x f32>`.

    Example:

    ```mlir
    !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>
    !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>
    ```
  }];
  let parameters = (ins "int64_t":$ratio, "int64_t":$dim, "bool":$overlap,
                        "::mlir::Type":$element);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Projection width of the running state: 2·dim when overlapping.
    int64_t getStateWidth() const { return (getOverlap() ? 2 : 1) * getDim(); }
    /// The entries it holds for sequences of `maxContext` tokens: one per
    /// complete block, and at least one (a block no sequence completes
    /// leaves it unwritten, and never read).
    int64_t getCapacity(int64_t maxContext) const {
      return std::max<int64_t>(1, maxContext / getRatio());
    }
  }];
}

def Kf_CacheType : AnyTypeOf<[Kf_WindowCacheType, Kf_CompressedCacheType],
                             "a kf cache">;

#endif // KF_DIALECT_KFTYPES
