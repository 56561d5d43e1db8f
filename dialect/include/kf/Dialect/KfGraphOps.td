//===- KfGraphOps.td - kf graph ops ------------------------*- tablegen -*-===//
//
// The model's arithmetic on activation tensors, as the graph builder emits it
// and the interpreter runs it: norms, linears, hyper-connections, RoPE, the
// quantization simulations, attention with its compressors and indexer, the
// MoE and sampling. Included by KfOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFGRAPHOPS
#define KF_DIALECT_KFGRAPHOPS

def Kf_RmsNormOp : Kf_Op<"rms_norm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalisation over the innermost dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * weight` along the innermost dimension of
    `input`. Without a weight the op is the weightless RMSNorm (the weight is
    all ones); canonicalization rewrites a constant all-ones weight into that
    form so later passes need not read the weight. The weight, when present,
    is a 1-D tensor or f32 `!kf.qweight` vector as long as the innermost
    dimension.

    `compute` says how the scaling is evaluated (model §8): `f32` (the
    default) computes in fp32 with the sum of squares in fp64 and rounds the
    result to bf16, as every weighted RMSNorm of DeepSeek-V4; `bf16` rounds
    every step to bf16, as the weightless per-head scaling of the attention
    query does.

    Example:

    ```mlir
    %y = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x4096xf32>, tensor<4096xf32>
    %z = kf.rms_norm %x eps(1.0e-06) : tensor<?x4096xf32>
    %q = kf.rms_norm %h eps(1.0e-06) compute(bf16) : tensor<?x64x512xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    Optional<Kf_VectorLike>:$weight,
    F32Attr:$eps,
    DefaultValuedAttr<Kf_Precision, "::mlir::kf::Precision::f32">:$compute
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? `eps` `(` $eps `)` (`compute` `(` $compute^ `)`)? attr-dict `:` type($input) (`,` qualified(type($weight))^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kf_LinearOp : Kf_Op<"linear", [Pure]> {
  let summary = "Activations times the transpose of a quantized weight";
  let description = [{
    `result[m, n] = sum_k input[m, k] * weight[n, k]` for `input` of shape
    `[M, K]` (M token columns, possibly dynamic) and a 2-D `!kf.qweight` of
    shape `[N, K]` in any weight format (not an integer table). The result
    is `[M, N]`, in fp32 or rounded to bf16 (`precision`, default `bf16`:
    the quantized and BF16 linears of model §2; the compressor, router and
    LM head use `f32`). The activation side of a quantized linear's QAT
    simulation is a separate `kf.fp8_sim` on the input.

    Example:

    ```mlir
    %y = kf.linear %x, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
    %l = kf.linear %x, %h precision(f32) : tensor<1x4096xf32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<1x32256xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input, Kf_QWeightType:$weight,
    DefaultValuedAttr<Kf_Precision, "::mlir::kf::Precision::bf16">:$precision);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`precision` `(` $precision^ `)`)? attr-dict `:` type($input) `,` qualified(type($weight)) `->` type($result)
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Embedding and hyper-connections
//===----------------------------------------------------------------------===//

def Kf_EmbedOp : Kf_Op<"embed", [Pure]> {
  let summary = "Embedding lookup, rows rounded to bf16";
  let description = [{
    `result[t] = bf16(table[tokens[t]])`: one decoded row of the `[V, D]`
    table per token id. A token id outside `[0, V)` is an error at run time.

    Example:

    ```mlir
    %x = kf.embed %tokens, %e : tensor<?xi32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$tokens, Kf_QWeightType:$table);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $tokens `,` $table attr-dict `:` type($tokens) `,` qualified(type($table)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_HcExpandOp : Kf_Op<"hc_expand", [Pure]> {
  let summary = "Hyper-connection entry: a hidden state copied into every stream";
  let description = [{
    `result[t, j] = input[t]` for each of the `mult` streams (model §3: the
    embedding repeated into the hyper-connection streams).

    Example:

    ```mlir
    %s = kf.hc_expand %x : tensor<?x4096xf32> -> tensor<?x4x4096xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kf_HcPreOp : Kf_Op<"hc_pre", [Pure]> {
  let summary = "Hyper-connection pre-mix with Sinkhorn (mHC HcPre)";
  let description = [{
    For each token, from its streams `[mult, D]` and the site's `fn`
    (`[(2 + mult)·mult, mult·D]`) and f32 vectors `base`
    (`[(2 + mult)·mult]`) and `scale` (`[3]`): the sublayer input
    `x = bf16(Σ_j pre_j · stream_j)` `[D]`, the post weights `[mult]` and
    the Sinkhorn-normalised combination `[mult, mult]` that `kf.hc_post`
    uses after the sublayer (model §4.1).

    Example:

    ```mlir
    %x, %post, %comb = kf.hc_pre %s, %fn, %base, %scale sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
        : tensor<?x4x4096xf32>, !kf.qweight<f32, [24, 16384]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
        -> tensor<?x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$streams, Kf_QWeightType:$fn,
                       Kf_QWeightType:$base, Kf_QWeightType:$scale,
                       ConfinedAttr<I64Attr, [IntPositive]>:$sinkhorn_iters,
                       F32Attr:$eps, F32Attr:$norm_eps);
  let results = (outs Kf_F32Tensor:$x, Kf_F32Tensor:$post, Kf_F32Tensor:$comb);
  let assemblyFormat = [{
    $streams `,` $fn `,` $base `,` $scale `sinkhorn` `(` $sinkhorn_iters `)` `eps` `(` $eps `)` `norm_eps` `(` $norm_eps `)` attr-dict
    `:` type($streams) `,` qualified(type($fn)) `,` qualified(type($base)) `,` qualified(type($scale))
    `->` type($x) `,` type($post) `,` type($comb)
  }];
  let hasVerifier = 1;
}

def Kf_HcPostOp : Kf_Op<"hc_post", [Pure]> {
  let summary = "Hyper-connection post-mix (mHC HcPost), the residual";
  let description = [{
    New stream `k = bf16(post_k · f + Σ_j comb[j][k] · stream_j)` per token,
    from the sublayer output `f` `[T, D]`, the streams before the sublayer
    `[T, mult, D]` and the `post` `[T, mult]` and `comb` `[T, mult, mult]`
    of the matching `kf.hc_pre` (model §4.1).

    Example:

    ```mlir
    %n = kf.hc_post %f, %s, %post, %comb : tensor<?x4096xf32>, tensor<?x4x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x4096xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input, Kf_F32Tensor:$streams, Kf_F32Tensor:$post,
                       Kf_F32Tensor:$comb);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $streams `,` $post `,` $comb attr-dict `:` type($input) `,` type($streams) `,` type($post) `,` type($comb) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_HcHeadOp : Kf_Op<"hc_head", [Pure]> {
  let summary = "Hyper-connection head: the streams reduced to one";
  let description = [{
    `y = bf16(Σ_j pre_j · stream_j)` per token with `pre` from `fn`
    (`[mult, mult·D]`) and the f32 vectors `base` (`[mult]`) and `scale`
    (`[1]`), without Sinkhorn (model §3).

    Example:

    ```mlir
    %y = kf.hc_head %s, %fn, %base, %scale eps(1.0e-06) norm_eps(1.0e-06)
        : tensor<1x4x4096xf32>, !kf.qweight<f32, [4, 16384]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x4096xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$streams, Kf_QWeightType:$fn,
                       Kf_QWeightType:$base, Kf_QWeightType:$scale,
                       F32Attr:$eps, F32Attr:$norm_eps);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $streams `,` $fn `,` $base `,` $scale `eps` `(` $eps `)` `norm_eps` `(` $norm_eps `)` attr-dict
    `:` type($streams) `,` qualified(type($fn)) `,` qualified(type($base)) `,` qualified(type($scale)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra and elementwise transforms
//===----------------------------------------------------------------------===//

def Kf_GroupedLinearOp : Kf_Op<"grouped_linear", [Pure]> {
  let summary = "Grouped low-rank projection (the attention's wo_a)";
  let description = [{
    The input `[M, K]` splits into `groups` consecutive slices of `K/groups`
    columns; slice `g` is multiplied by rows `g·R .. (g+1)·R − 1` of the
    `[groups·R, K/groups]` weight, giving columns `g·R ..` of the `[M,
    groups·R]` result, rounded to `precision` (default `bf16`).

    Example:

    ```mlir
    %z = kf.grouped_linear %o, %w groups(8) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input, Kf_QWeightType:$weight,
    ConfinedAttr<I64Attr, [IntPositive]>:$groups,
    DefaultValuedAttr<Kf_Precision, "::mlir::kf::Precision::bf16">:$precision);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `groups` `(` $groups `)` (`precision` `(` $precision^ `)`)? attr-dict `:` type($input) `,` qualified(type($weight)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_RopeOp : Kf_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Interleaved rotary position embedding, or its inverse";
  let description = [{
    Rotates the last `rope.dim` values of every innermost row of `input`
    (`[T, D]` or `[T, H, D]`) by the angle of token `t`'s position
    `positions[t]`, in interleaved pairs (GPT-J style); `inverse` rotates
    back (the de-rotation of the attention output, model §4.2). The angle is
    formed in fp32 and the result rounded to bf16.

    The `#kf.rope` parameters are written without the `#kf.rope` prefix, as
    they print: a prefixed attribute right before the `:` would take the
    type list that follows as its own type and fail to parse.

    Example:

    ```mlir
    %q = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> : tensor<?x64x512xf32>, tensor<?xi64>
    %o = kf.rope %y, %pos, <dim = 64, base = 1.000000e+04> inverse : tensor<?x64x512xf32>, tensor<?xi64>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input, RankedTensorOf<[I64]>:$positions,
                       Kf_RopeAttr:$rope, UnitAttr:$inverse);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $positions `,` $rope (`inverse` $inverse^)? attr-dict `:` type($input) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def Kf_HadamardOp : Kf_Op<"hadamard", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Walsh-Hadamard transform of every innermost row";
  let description = [{
    `y_i = n^(-1/2) Σ_j (−1)^popcount(i & j) x_j` over the innermost
    dimension `n`, a power of two, rounded to bf16 (model §2).

    Example:

    ```mlir
    %h = kf.hadamard %q : tensor<?x64x128xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Kf_QuantSimOp<string mnemonic, string what> : Kf_Op<mnemonic,
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Quantization-aware-training simulation: " # what;
  let arguments = (ins Kf_F32Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$leading);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $input `block` `(` $block `)` (`leading` `(` $leading^ `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Kf_Fp8SimOp : Kf_QuantSimOp<"fp8_sim", "round trip through e4m3 blocks"> {
  let description = [{
    FP8SIM of model §2 along the innermost dimension: each block of `block`
    values gets a power-of-two scale from its largest magnitude and is
    replaced by its e4m3 code times the scale, rounded to bf16. With
    `leading`, only the first `leading` values of each row take part (the
    KV latent's non-rope dims); `leading` must be a multiple of `block`.

    Example:

    ```mlir
    %a = kf.fp8_sim %x block(128) : tensor<?x4096xf32>
    %k = kf.fp8_sim %kv block(64) leading(448) : tensor<?x512xf32>
    ```
  }];
}

def Kf_Fp4SimOp : Kf_QuantSimOp<"fp4_sim", "round trip through e2m1 blocks"> {
  let description = [{
    FP4SIM of model §2 along the innermost dimension: each block of `block`
    values gets a power-of-two scale and is replaced by its e2m1 code times
    the scale, rounded to bf16. `leading` as for `kf.fp8_sim`.

    Example:

    ```mlir
    %q = kf.fp4_sim %h block(32) : tensor<?x64x128xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Kf_CompressOp : Kf_Op<"compress"> {
  let summary = "Feeds tokens to a compressor, appending the entries they complete";
  let description = [{
    The compressor of model §4.3 over the tokens at `positions`
    (consecutive), given their fp32 projections by the compressor's `kv` and
    `gate` weights: `values` and `gates` `[T, w]`, `w` the cache's state
    width (two `kf.linear`s compute them, so that they compile as any other
    matmul). Each token's projections join the running state, and every
    block of `ratio` tokens it completes is pooled (a per-channel softmax of
    gate + `ape` `[ratio, w]` (f32 or bf16) over the block's slots, and the
    previous block's when overlapping), rounded to bf16, RMS-normed with the
    f32 vector `norm` `[dim]`, rotated at the block's first position by
    `rope`, given `post`'s simulation and appended to the cache.

    Example:

    ```mlir
    kf.compress %kv, %score, %pos, %c, %ape, %norm, <dim = 64, base = 1.600000e+05> post(fp8) eps(1.0e-06)
        : tensor<?x1024xf32>, tensor<?x1024xf32>, tensor<?xi64>,
          !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 1024]>, !kf.qweight<f32, [512]>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$values, Kf_F32Tensor:$gates,
                       RankedTensorOf<[I64]>:$positions,
                       Arg<Kf_CompressedCacheType, "the compressor", [MemRead, MemWrite]>:$cache,
                       Kf_QWeightType:$ape, Kf_QWeightType:$norm,
                       Kf_RopeAttr:$rope, Kf_EntryPost:$post, F32Attr:$eps);
  let assemblyFormat = [{
    $values `,` $gates `,` $positions `,` $cache `,` $ape `,` $norm `,` $rope `post` `(` $post `)` `eps` `(` $eps `)` attr-dict
    `:` type($values) `,` type($gates) `,` type($positions) `,` qualified(type($cache))
    `,` qualified(type($ape)) `,` qualified(type($norm))
  }];
  let hasVerifier = 1;
}

def Kf_WindowIndicesOp : Kf_Op<"window_indices", [Pure]> {
  let summary = "The rows of the sliding window each query attends to";
  let description = [{
    For the query at position `p = positions[t]`, the positions
    `p − window + 1 .. p` in ascending order as rows of the window bank, −1
    for those before position 0. Without `ring`, the bank holds the call's
    own fresh KV rows, row `i` for position `positions[0] + i`; with
    `ring(R)` it is a `!kf.window_cache` of R ≥ window slots, position `q`
    in slot `q mod R`. A ring of `window + n − 1` slots holds a call of up to
    n fresh rows beside the window before them, so that a prefill can
    continue a sequence in chunks.

    Example:

    ```mlir
    %w = kf.window_indices %pos window(128) : tensor<?xi64> -> tensor<?x128xi32>
    %r = kf.window_indices %pos window(128) ring(639) : tensor<?xi64> -> tensor<?x128xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64]>:$positions,
                       ConfinedAttr<I64Attr, [IntPositive]>:$window,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$ring);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $positions `window` `(` $window `)` (`ring` `(` $ring^ `)`)? attr-dict `:` type($positions) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_VisibleEntriesOp : Kf_Op<"visible_entries", [Pure]> {
  let summary = "All compressed entries a query may see (HCA)";
  let description = [{
    Row `t` lists entry `c` at column `c` if its block ends at or before the
    query, `c < floor((positions[t] + 1) / ratio)`, and −1 otherwise; one
    column per entry of `entries` `[E, dim]` (model §4.2).

    Example:

    ```mlir
    %i = kf.visible_entries %pos, %e ratio(128) : tensor<?xi64>, tensor<?x512xf32> -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64]>:$positions, Kf_F32Tensor:$entries,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ratio);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $positions `,` $entries `ratio` `(` $ratio `)` attr-dict `:` type($positions) `,` type($entries) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_IndexerScoresOp : Kf_Op<"indexer_scores", [Pure]> {
  let summary = "The lightning indexer's score of every compressed entry";
  let description = [{
    `score[t, c] = Σ_h w[t, h] · ReLU(q[t, h] · keys[c])` in the reference's
    bf16 arithmetic (model §4.4, §8), where `w = bf16(weights · scale)`:
    `weights` `[T, H]` is the indexer projection, `q` `[T, H, d]` the
    indexer query and `keys` `[E, d]` the indexer's compressed entries.

    Example:

    ```mlir
    %s = kf.indexer_scores %q, %w, %k scale(0.0110485433)
        : tensor<?x64x128xf32>, tensor<?x64xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$query, Kf_F32Tensor:$weights, Kf_F32Tensor:$keys,
                       F32Attr:$scale);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $weights `,` $keys `scale` `(` $scale `)` attr-dict `:` type($query) `,` type($weights) `,` type($keys) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_IndexerTopKOp : Kf_Op<"indexer_topk", [Pure]> {
  let summary = "The compressed entries the indexer chooses for each query";
  let description = [{
    Row `t`: the `min(k, E)` entries (so at most `k` columns) of highest
    `scores[t]` among the causal ones
    (`c < floor((positions[t] + 1) / ratio)`), in descending order of score
    with ties to the lower index; picks past the causal entries are −1
    (model §4.4).

    Example:

    ```mlir
    %i = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$scores, RankedTensorOf<[I64]>:$positions,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ratio);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $scores `,` $positions `k` `(` $k `)` `ratio` `(` $ratio `)` attr-dict `:` type($scores) `,` type($positions) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_SparseAttentionOp : Kf_Op<"sparse_attention", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "Attention with a sink over listed rows of a window and compressed bank";
  let description = [{
    For each query `q[t]` `[H, d]`: the bank is the `window` rows `[W, d]`
    followed by the compressed `entries` `[E, d]` (each row both key and
    value); token `t` attends to the window rows `window_indices[t]` and
    the entries `entry_indices[t]` (−1 is padding). Per head, a softmax of
    `scale · q·k` together with the head's logit in the f32 vector `sinks`
    `[H]` (which has no value), the probabilities rounded to bf16, the
    output rounded to bf16 (model §2). Sliding-window layers have no entries.

    Example:

    ```mlir
    %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.0441941731)
        : tensor<?x64x512xf32>, !kf.qweight<f32, [64]>, tensor<?x512xf32>, tensor<?x128xi32>,
          tensor<?x512xf32>, tensor<?x?xi32> -> tensor<?x64x512xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$query, Kf_F32Tensor:$window,
                       RankedTensorOf<[I32]>:$window_indices,
                       Optional<Kf_F32Tensor>:$entries,
                       Optional<RankedTensorOf<[I32]>>:$entry_indices,
                       Kf_QWeightType:$sinks, F32Attr:$scale);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $window `[` $window_indices `]` (`,` $entries^ `[` $entry_indices `]`)? `sinks` `(` $sinks `)` `scale` `(` $scale `)` attr-dict
    `:` type($query) `,` qualified(type($sinks)) `,` type($window) `,` type($window_indices) (`,` type($entries)^ `,` type($entry_indices))? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

def Kf_MoeGateOp : Kf_Op<"moe_gate", [Pure, AttrSizedOperandSegments]> {
  let summary = "MoE routing: the experts of each token and their weights";
  let description = [{
    From the router logits `[T, E]`: scores `s = sqrt(softplus(logits))`;
    the `k` experts of a token are the top `k` of `s + bias` (learned
    routing, `bias` an f32 vector `[E]`) or, given the i32 table `tid2eid`
    `[V, k]` and the token ids, the table's row of the token (hash routing,
    the first layers); their weights `s[i] / Σ s · route_scale` from the
    unbiased scores (model §4.5). Results: expert ids `[T, k]` and weights
    `[T, k]`.

    Example:

    ```mlir
    %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [256]>) k(6) route_scale(1.5)
        : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
    %hid, %hw = kf.moe_gate %l hash(%tid2eid : !kf.qweight<i32, [129280, 6]>[%tokens : tensor<?xi32>]) k(6) route_scale(1.5)
        : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$logits, Optional<Kf_QWeightType>:$bias,
                       Optional<Kf_QWeightType>:$tid2eid,
                       Optional<RankedTensorOf<[I32]>>:$tokens,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k,
                       F32Attr:$route_scale);
  let results = (outs RankedTensorOf<[I32]>:$ids, Kf_F32Tensor:$weights);
  let assemblyFormat = [{
    $logits (`bias` `(` $bias^ `:` qualified(type($bias)) `)`)?
    (`hash` `(` $tid2eid^ `:` qualified(type($tid2eid)) `[` $tokens `:` type($tokens) `]` `)`)?
    `k` `(` $k `)` `route_scale` `(` $route_scale `)` attr-dict `:` type($logits) `->` type($ids) `,` type($weights)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isHashRouted() { return static_cast<bool>(getTid2eid()); }
  }];
}

def Kf_MoeOp : Kf_Op<"moe", [Pure]> {
  let summary = "Routed and shared SwiGLU experts, weighted and summed";
  let description = [{
    For each token `x[t]` `[D]`: each routed expert `e = ids[t, j]` computes
    `Lin_down(h)` with `h = bf16(silu(min(g, limit)) · clamp(u, −limit,
    limit) · weights[t, j])`, `g = Lin_gate(x)`, `u = Lin_up(x)`, from the
    `[E, F, D]` gate and up stacks and the `[E, D, F]` down stack; the
    shared expert the same with weight 1 and `shared_limit`. The result is
    `bf16(Σ routed + shared)` `[T, D]` (model §4.5). With `fp8_activations`
    each linear's input takes FP8SIM in blocks of 128, as `kf.fp8_sim`.

    Example:

    ```mlir
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0) fp8_activations
        : tensor<?x4096xf32>, tensor<?x6xi32>, tensor<?x6xf32>,
          !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 4096, 2048]>,
          !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [4096, 2048]> -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input, RankedTensorOf<[I32]>:$ids,
                       Kf_F32Tensor:$weights,
                       Kf_QWeightType:$gate_exps, Kf_QWeightType:$up_exps,
                       Kf_QWeightType:$down_exps,
                       Kf_QWeightType:$gate_shexp, Kf_QWeightType:$up_shexp,
                       Kf_QWeightType:$down_shexp,
                       F32Attr:$limit, F32Attr:$shared_limit,
                       UnitAttr:$fp8_activations);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $ids `,` $weights `experts` `(` $gate_exps `,` $up_exps `,` $down_exps `)`
    `shared` `(` $gate_shexp `,` $up_shexp `,` $down_shexp `)` `limit` `(` $limit `)` `shared_limit` `(` $shared_limit `)`
    (`fp8_activations` $fp8_activations^)? attr-dict
    `:` type($input) `,` type($ids) `,` type($weights) `,` qualified(type($gate_exps)) `,` qualified(type($up_exps)) `,` qualified(type($down_exps))
    `,` qualified(type($gate_shexp)) `,` qualified(type($up_shexp)) `,` qualified(type($down_shexp)) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The block of the FP8SIM `fp8_activations` applies (model §2's
    /// activation quantization).
    static constexpr int64_t kFp8ActivationBlock = 128;
  }];
}

def Kf_SwigluOp : Kf_Op<"swiglu", [Pure, AllTypesMatch<["gate", "up", "result"]>]> {
  let summary = "Clamped SwiGLU of an expert, times its routing weight, in bf16";
  let description = [{
    The step between an expert's up and down projections (model §4.5, §8):
    `result = bf16(silu(min(gate, limit)) · clamp(up, −limit, limit) ·
    weight)` element by element, in fp32 (`silu(g) = g / (1 + e^−g)`
    evaluated in fp64 and rounded to fp32, then the two products in that
    order, then one rounding to bf16), as `reference::swiglu` computes it.
    `weights`, when given, holds one routing weight per innermost row (its
    shape is `gate`'s without the innermost dimension): the routed experts'
    `[T, k, F]` activations take their slot's weight before the down
    projection. Without it the weight is 1 (the shared expert).

    Example:

    ```mlir
    %h = kf.swiglu %g, %u weights(%w : tensor<?x6xf32>) limit(10.0) : tensor<?x6x2048xf32>
    %s = kf.swiglu %sg, %su limit(10.0) : tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$gate, Kf_F32Tensor:$up,
                       Optional<Kf_F32Tensor>:$weights, F32Attr:$limit);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $gate `,` $up (`weights` `(` $weights^ `:` type($weights) `)`)? `limit` `(` $limit `)` attr-dict `:` type($gate)
  }];
  let hasVerifier = 1;
}

def Kf_MoeCombineOp : Kf_Op<"moe_combine", [Pure]> {
  let summary = "The routed experts' outputs summed with the shared expert's, in bf16";
  let description = [{
    The last step of `kf.moe` (model §4.5): `result[t, d] = bf16(Σ_j
    routed[t, j, d] + shared[t, d])` for the `[T, k, D]` outputs of a
    token's k routed experts and the `[T, D]` output of the shared expert.
    The slots are added in order, then the shared expert, in fp64 as the
    reference accumulates (the values are bf16, so fp32 would lose at most
    a few of their low bits; model §8 rates this step's sensitivity low),
    and the sum is rounded to fp32, then to bf16.

    Example:

    ```mlir
    %y = kf.moe_combine %routed, %shared : tensor<?x6x4096xf32>, tensor<?x4096xf32> -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$routed, Kf_F32Tensor:$shared);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $routed `,` $shared attr-dict `:` type($routed) `,` type($shared) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sampling
//===----------------------------------------------------------------------===//

def Kf_ArgmaxOp : Kf_Op<"argmax", [Pure]> {
  let summary = "Index of the largest value of each innermost row";
  let description = [{
    The greedy token: the first index of the maximum along the innermost
    dimension (NaN never wins). `[T, V]` gives `[T]`.

    Example:

    ```mlir
    %tok = kf.argmax %logits : tensor<1x32256xf32> -> tensor<1xi32>
    ```
  }];
  let arguments = (ins Kf_F32Tensor:$input);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}


#endif // KF_DIALECT_KFGRAPHOPS
