//===- KfStateOps.td - kf weight and cache ops -------------*- tablegen -*-===//
//
// What a graph reads and keeps between calls: the model's weights, declared
// by name, and its caches (the attention window, the compressors' entries and
// running state). Included by KfOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFSTATEOPS
#define KF_DIALECT_KFSTATEOPS

//===----------------------------------------------------------------------===//
// Weights and state
//===----------------------------------------------------------------------===//

def Kf_WeightOp : Kf_Op<"weight", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares a model weight by name";
  let description = [{
    A weight of the model, named as its tensor in the model file, with its
    format and shape. The graph refers to it with `kf.get_weight`, so a graph
    can be printed, checked and compiled without the weights; a runtime
    binds the symbol to the file's tensor of the same name.

    Example:

    ```mlir
    kf.weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Kf_QWeightType>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
  let extraClassDeclaration = [{
    QWeightType getWeightType() { return ::llvm::cast<QWeightType>(getType()); }
  }];
}

def Kf_GetWeightOp : Kf_Op<"get_weight", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The value of a declared weight";
  let description = [{
    Reads the `kf.weight` named `name`; the result type must be the declared
    one.

    Example:

    ```mlir
    %w = kf.get_weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Kf_QWeightType:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
}

def Kf_CacheOp : Kf_Op<"cache", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares state that outlives a call: a KV ring or a compressor";
  let description = [{
    A cache of the model (a `!kf.window_cache` or `!kf.compressed_cache`),
    shared by the functions of the module: `@prefill` resets and fills it,
    `@decode` appends one token at a time.

    Example:

    ```mlir
    kf.cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Kf_CacheType>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def Kf_GetCacheOp : Kf_Op<"get_cache", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A reference to a declared cache";
  let description = [{
    The cache named `name`, to be read and written by the cache ops; the
    result type must be the declared one. The op itself has no effect.

    Example:

    ```mlir
    %c = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Kf_CacheType:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
}

def Kf_CacheResetOp : Kf_Op<"cache_reset"> {
  let summary = "Empties a cache when a call starts a new sequence";
  let description = [{
    Forgets every row, entry and running state of the cache if the call
    starts a sequence, its first position `positions[0]` being 0: a prefill
    starts with it. A prefill that continues a sequence (a later chunk of a
    prompt) keeps the cache.

    Example:

    ```mlir
    kf.cache_reset %c at %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?xi64>
    ```
  }];
  let arguments = (ins Arg<Kf_CacheType, "the cache", [MemWrite]>:$cache,
                       RankedTensorOf<[I64]>:$positions);
  let assemblyFormat = [{
    $cache `at` $positions attr-dict `:` qualified(type($cache)) `,` type($positions)
  }];
}

def Kf_CacheAppendOp : Kf_Op<"cache_append"> {
  let summary = "Writes KV rows into a window ring at their positions";
  let description = [{
    Row `t` of `rows` (`[T, dim]`) goes to slot `positions[t] mod rows` of
    the ring; of the rows of one call, a later position overwrites an
    earlier one in the same slot.

    Example:

    ```mlir
    kf.cache_append %c, %kv, %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?x512xf32>, tensor<?xi64>
    ```
  }];
  let arguments = (ins Arg<Kf_WindowCacheType, "the ring", [MemWrite]>:$cache,
                       Kf_F32Tensor:$rows, RankedTensorOf<[I64]>:$positions);
  let assemblyFormat = [{
    $cache `,` $rows `,` $positions attr-dict `:` qualified(type($cache)) `,` type($rows) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def Kf_CacheReadOp : Kf_Op<"cache_read"> {
  let summary = "The rows of a window ring or the entries of a compressor";
  let description = [{
    A window cache reads as its `[rows, dim]` slots (slots never written are
    zero and must not be attended to); a compressed cache as its
    `[entries, dim]` entries so far, in order.

    Example:

    ```mlir
    %ring = kf.cache_read %c : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<128x512xf32>
    %e = kf.cache_read %d : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16> -> tensor<?x512xf32>
    ```
  }];
  let arguments = (ins Arg<Kf_CacheType, "the cache", [MemRead]>:$cache);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = "$cache attr-dict `:` qualified(type($cache)) `->` type($result)";
  let hasVerifier = 1;
}


#endif // KF_DIALECT_KFSTATEOPS
