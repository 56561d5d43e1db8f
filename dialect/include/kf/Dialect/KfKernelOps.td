//===- KfKernelOps.td - kf kernel-call ops -----------------*- tablegen -*-===//
//
// Matmuls after --kf-lower-quant-dot: calls of compiled kernels on packed
// weights and activations. Included by KfOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFKERNELOPS
#define KF_DIALECT_KFKERNELOPS

//===----------------------------------------------------------------------===//
// Kernel ops: matmuls lowered to compiled kernels (--kf-lower-quant-dot)
//===----------------------------------------------------------------------===//

def Kf_QuantizeActivationsOp : Kf_Op<"quantize_activations", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "fp32 activations packed into a matmul kernel's blocks by a kernel";
  let description = [{
    Quantizes each row of the innermost dimension of `input` (`[M, K]`, or
    `[T, k, K]`: one row per slot of a routed expert) into the packed
    activation blocks of `format` the compiled matmul kernels read
    (docs/codegen.md, "Activations"): `q8_0` (the default; K a multiple of
    32) per 32 elements a 48-byte block of the fp32 scale, the int32 sum of
    the quants, four int16 sums of 8 quants and 32 int8 quants,
    `[M, K / 32 * 48]` bytes; `q8_k` (the
    K-quants'; K a multiple of 256) per 256 elements a 292-byte block of the
    fp32 scale, 16 int16 sums of 16 quants and 256 int8 quants,
    `[M, K / 256 * 292]` bytes; `bf16` and `f32` (the float kernels'; any K)
    the elements rounded to bf16 (ties to even) or as they are, in 64-byte
    blocks of 32 bf16 or 16 f32 whose last is padded with zeros,
    `[M, ceil(K / 32) * 64]` or `[M, ceil(K / 16) * 64]` bytes (the leading
    dimensions are kept). `callee` is the quantizer
    kernel, a function in the module's `kernels` module with the ABI
    `(x: !llvm.ptr, ldx: i64, packed: !llvm.ptr, m: i64) -> ()`.

    Example:

    ```mlir
    %xq = kf.quantize_activations @kernels::@kf_quantize_q8_0_k4096(%x) : tensor<?x4096xf32> -> tensor<?x6144xi8>
    %xk = kf.quantize_activations @kernels::@kf_quantize_q8_k_k4096(%x) format(q8_k) : tensor<?x4096xf32> -> tensor<?x4672xi8>
    %xb = kf.quantize_activations @kernels::@kf_quantize_bf16_k100(%y) format(bf16) : tensor<?x100xf32> -> tensor<?x256xi8>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee, Kf_F32Tensor:$input,
    DefaultValuedAttr<Kf_FormatAttr, "::mlir::kf::Format::Q8_0">:$format);
  let results = (outs RankedTensorOf<[I8]>:$result);
  let assemblyFormat = [{
    $callee `(` $input `)` (`format` `(` custom<FormatName>($format)^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_QMatmulOp : Kf_Op<"qmatmul", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Packed activations times a quantized weight, by a kernel";
  let description = [{
    `result[m, n] = sum_k x[m, k] * weight[n, k]` as `kf.linear` computes
    it, with `x` given as the packed activations of
    `kf.quantize_activations` in the weight format's activation format
    (`q8_0`: `[M, K / 32 * 48]` bytes; `q8_k` for the K-quants:
    `[M, K / 256 * 292]`; `bf16` and `f32` for those weights: `[M, ceil(K /
    32) * 64]`, `[M, ceil(K / 16) * 64]`) and the product
    computed by the compiled kernel `callee`, a function in the module's
    `kernels` module with the kernel ABI `(w: !llvm.ptr, x: !llvm.ptr, y:
    !llvm.ptr, ldy: i64, m: i64, nBegin: i64, nEnd: i64) -> ()`. The
    weight's format must take Q8_0, Q8_K, BF16 or F32 activations (every
    format with a kernel does). `precision(bf16)` (the
    default, as for `kf.linear`) says the kernel rounds its results to bf16.

    The result's N columns are the weight's rows from `row_offset` (0 by
    default) on: one group of a `kf.grouped_linear`, whose kernel reads the
    group's rows in place. The offset is a multiple of the layout's row
    group, so the group's packed rows start a packed row group.

    The decisions the kernel was built from stay on the op as its
    `kf.kernel` attribute, which is required: the runtime repacks the
    weight to its `layout` and splits the rows over its `threads`. When it
    says `quantize = fused`, the kernel quantizes its activations itself
    and `x` is the fp32 activations, `[M, K]` (the kernel ABI's `x` then
    points to M rows of K floats).

    Example:

    ```mlir
    %y = kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c8_k4096_n2048_bf16(%xq, %w)
        {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x6144xi8>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
    %g = kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c8_k512_n128_bf16(%xg, %wo) row_offset(256)
        {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x768xi8>, !kf.qweight<q8_0, [1024, 512]> -> tensor<?x128xf32>
    %d = kf.qmatmul @kernels::@kf_matmul_q4_k_avx512vnni_r16_c1_k4096_n2048_bf16_fq(%x1, %wk)
        {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_k_r16, max_cols = 8, threads = 2, cols = [1], quantize = fused>}
        : tensor<1x4096xf32>, !kf.qweight<q4_k, [2048, 4096]> -> tensor<1x2048xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee, RankedTensorOf<[I8, F32]>:$input,
    Kf_QWeightType:$weight,
    DefaultValuedAttr<Kf_Precision, "::mlir::kf::Precision::bf16">:$precision,
    DefaultValuedAttr<I64Attr, "0">:$row_offset);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $callee `(` $input `,` $weight `)` (`row_offset` `(` $row_offset^ `)`)?
    (`precision` `(` $precision^ `)`)? attr-dict
    `:` type($input) `,` qualified(type($weight)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kf_ExpertQMatmulOp : Kf_Op<"expert_qmatmul", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Each routed slot's packed activations times its expert, by a kernel";
  let description = [{
    A routed expert projection of `kf.moe`: `result[t, j, n] = sum_k
    x[k] · weight[ids[t, j], n, k]` for the `[T, k]` expert ids of
    `kf.moe_gate` and an `[E, N, K]` expert stack, where `x` is the packed
    activation row of slot `(t, j)`: `input[t]` when `input` is `[T, B]` (one
    row per token, read by each of its slots: the gate and up projections)
    or `input[t, j]` when it is `[T, k, B]` (one row per slot: the down
    projection). The packed rows are `kf.quantize_activations`' blocks of
    the weight format's activation format, as for `kf.qmatmul`.

    `callee` is one expert's kernel (`N x K`), with `kf.qmatmul`'s kernel ABI
    `(w: !llvm.ptr, x: !llvm.ptr, y: !llvm.ptr, ldy: i64, m: i64, nBegin:
    i64, nEnd: i64) -> ()`. Which slots an expert serves is only known at
    run time, so the executor does the rest (`kf/runtime/moe_dispatch.h`):
    it groups the slots by expert (experts ascending, each expert's slots
    ascending: a fixed order), gathers each group's activation rows side by
    side, calls the kernel once per non-empty group with `m` = the group's
    size and `w` = the expert's packed rows (the stack packed expert by
    expert, `kf::pack_expert_weights`), and scatters the rows to the slots.
    The kernel splits any `m` into its column tiles. `precision(bf16)` (the
    default) says the kernel rounds its results to bf16. A kernel with
    `quantize = fused` (a single token's buckets) takes the fp32 rows
    instead, `[T, K]` or `[T, k, K]`, and quantizes them itself.

    The decisions the kernel was built from stay on the op as its required
    `kf.kernel` attribute, as on `kf.qmatmul`.

    Example:

    ```mlir
    %g = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c8_k4096_n2048_bf16(%xq, %ids, %gate)
        {kf.kernel = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x6144xi8>, tensor<?x6xi32>, !kf.qweight<mxfp4, [256, 2048, 4096]> -> tensor<?x6x2048xf32>
    %d = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c8_k2048_n4096_bf16(%hq, %ids, %down)
        {kf.kernel = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x6x2560xi8>, tensor<?x6xi32>, !kf.qweight<mxfp4, [256, 4096, 2048]> -> tensor<?x6x4096xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee, RankedTensorOf<[I8, F32]>:$input,
    RankedTensorOf<[I32]>:$ids, Kf_QWeightType:$weight,
    DefaultValuedAttr<Kf_Precision, "::mlir::kf::Precision::bf16">:$precision);
  let results = (outs Kf_F32Tensor:$result);
  let assemblyFormat = [{
    $callee `(` $input `,` $ids `,` $weight `)` (`precision` `(` $precision^ `)`)? attr-dict
    `:` type($input) `,` type($ids) `,` qualified(type($weight)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Step ops: graph ops lowered to compiled step kernels (--kf-lower-ops)
//===----------------------------------------------------------------------===//

def Kf_StepOp : Kf_Op<"step", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A graph op computed by a compiled step kernel";
  let description = [{
    The op a step kernel of the plan ABI computes (docs/engine.md, "Op
    kernels"): `callee` is a function of the module's `kernels` module with
    the step ABI `(operands: !llvm.ptr, m: i64, begin: i64, end: i64) -> ()`,
    compiled for one instance of a graph op, which reads the step's inputs
    and writes its results, in this order, through `operands`.

    The step has `items_per_row · M` work items, M the leading (token)
    dimension of its tensors. Item `i` reads and writes only its own slice
    of each tensor, `[i · B, (i + 1) · B)` for the tensor's `B` bytes per
    item (its row's bytes over `items_per_row`), except the inputs listed in
    `whole`, which any item may read in full; weights (`!kf.qweight`) are
    read in full. So two items never write the same byte, and the plan may
    split the items between threads freely; and a step that reads a tensor
    item by item, as the step writing it wrote it, needs no barrier between
    them.

    A cache input (`!kf.window_cache`, `!kf.compressed_cache`) is state the
    kernel reads and writes in place (its bytes in the model's state,
    docs/engine.md, "State"): the step's only effects are on its caches, so
    a step without one is pure, and one with a cache may have no result.

    Example:

    ```mlir
    %y = kf.step @kernels::@kf_rms_norm_d4096_w_e358637bd(%x, %w) items(1)
        : (tensor<?x4096xf32>, !kf.qweight<f32, [4096]>) -> tensor<?x4096xf32>
    %q = kf.step @kernels::@kf_rms_norm_d512_nw_e358637bd_bf16(%h) items(64)
        : (tensor<?x64x512xf32>) -> tensor<?x64x512xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee,
    Variadic<AnyTypeOf<[AnyRankedTensor, Kf_QWeightType, Kf_CacheType]>>:$inputs,
    I64Attr:$items_per_row,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$whole);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` `items` `(` $items_per_row `)`
    (`whole` $whole^)? attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}

#endif // KF_DIALECT_KFKERNELOPS
