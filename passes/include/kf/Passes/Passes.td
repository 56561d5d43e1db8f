//===- Passes.td - kf passes --------------------------------*- tablegen -*-===//

#ifndef KF_PASSES_PASSES
#define KF_PASSES_PASSES

include "mlir/Pass/PassBase.td"

def KfSetTarget : Pass<"kf-set-target", "::mlir::ModuleOp"> {
  let summary = "Attach the #kf.target the module is compiled for";
  let description = [{
    Sets the module's `kf.target` attribute to the description of a named
    target (`x86-64-v3`, `znver5`, `neoverse-v1`, ...; `kf-compile
    --list-targets` lists them) or of the host CPU (`host`, the default:
    detected ISA features, cache sizes from sysfs, usable cores). Every later
    kernel decision reads this attribute, never the machine running the
    compiler, so a plan for any target can be compiled and tested anywhere.

    An existing `kf.target` is replaced. An unknown name fails the pass.

    Example: `kf-opt --kf-set-target=target=znver5 in.mlir`
  }];
  let options = [
    Option<"targetName", "target", "std::string", /*default=*/"\"host\"",
           "named target, or 'host' for the CPU running the compiler">
  ];
  let dependentDialects = ["::mlir::kf::KfDialect"];
}

def KfSelectKernels : Pass<"kf-select-kernels", "::mlir::ModuleOp"> {
  let summary = "Decide each matmul's ISA, weight layout, column limit and "
                "threads";
  let description = [{
    Writes a `#kf.kernel` as the discardable attribute `kf.kernel` on every
    `kf.linear` and `kf.grouped_linear`, and on every `kf.moe` a dictionary
    of one `#kf.kernel` per weight stack (`gate_exps`, `up_exps`,
    `down_exps`, `gate_shexp`, `up_shexp`, `down_shexp`), replacing any
    earlier decision. It reads the module's `#kf.target` only, so a test
    states its target and checks every ISA's choice on any host; without
    one the pass fails ("run --kf-set-target first").

    * `isa`: the richest family the target runs: `avx512vnni` with
      avx512f, avx512bw and avx512vnni; else `avx2` with avx2 and fma; else
      `neon_dotprod` with neon and dotprod; else `scalar`. Every weight
      format gets a decision, including those no emitter implements yet
      (the lowering refuses those); an integer table (`i32`) is never a
      matmul weight and fails the pass.
    * `layout`: the weight's format interleaved in row groups of the ISA's
      int32 lanes: 16 rows for `avx512vnni`, 8 for `avx2`, 4 for
      `neon_dotprod`, 1 for `scalar` (`q8_0_r16`).
    * `max_cols`: the default of target/tuning/defaults.tuning (the widest
      micro-kernel).
    * `threads`: the target's cores, or the `threads` option when given.
    * `quantize`: `fused` (the kernel quantizes its activations as its
      prologue) when the emitters build the matmul, M = 1 (a decode step's
      linears, and a single token's expert buckets), no other kernel reads
      the column in the same activation format (another matmul of the same
      input; kf.moe's gate and up projections, which all read the token's
      row) and the packed column fits the kernel's stack (1 MiB); else
      `separate`, not printed.
    * `decode`: `once` (a call of more columns than one tile decodes each
      row block once, into int8 lanes on the kernel's stack, which every
      column tile reads) where the emitters measured it to gain
      (`codegen::decodesOnceByDefault`): from the format's
      `decode_once_from` columns in target/tuning/defaults.tuning, for a
      static M, and for a dynamic M where that is the first call of more
      than one tile; never with `quantize = fused`, nor with a tuned `l2_rows`
      whose rows decoded (by the tuned `l1_k`, else all of K) exceed the
      kernel's 1 MiB of scratch; else `per_tile`, not printed.

    With `tuning-file=PATH`, the rules of that file (kf/Tuning/TuningFile.h)
    override these defaults for the matmuls they match by format, target
    name, default ISA, M, N and K: `isa` (one the target runs; the rows
    follow it unless the rule sets them), `rows`, `max_cols`, `threads` (at
    most the threads available), `l2_rows` and `l1_k` (which
    `--kf-block-caches` then keeps; clamped to the matrix), `quantize`
    (`fused` or `separate`) and `decode` (`once` or `per_tile`). Example
    rule:
    `format=q8_0 target=znver5 n=2048 k=4096 -> l2_rows=64 l1_k=1024`. A
    malformed line is an error at its file, line and column.

    Example: `kf-opt --kf-select-kernels="tuning-file=znver5.tune" in.mlir`
  }];
  let options = [
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "threads the plan may use (0: the target's cores)">,
    Option<"tuningFile", "tuning-file", "std::string", /*default=*/"\"\"",
           "a tuning file whose rules override the default decisions">
  ];
  let dependentDialects = ["::mlir::kf::KfDialect"];
}

def KfTileColumns : Pass<"kf-tile-columns", "::mlir::ModuleOp"> {
  let summary = "Split each matmul's M token columns into micro-kernel widths";
  let description = [{
    Sets `cols` of every `#kf.kernel` that has none. A static M is split
    into the widths {8, 4, 3, 2} up to the kernel's `max_cols`: [1] for
    M = 1; otherwise the fewest tiles, never 1 wide, and among those the
    list that is widest first (M = 9: [4, 3, 2]; M = 17: [8, 4, 3, 2]). Each
    tile is one pass over a row group's weights, so fewer tiles read the
    weights fewer times. A dynamic M (a prefill's tokens; a `kf.moe` expert
    bucket, unless T = 1, whose buckets hold at most that token) gets
    `cols = dynamic`: a generated dispatcher applies the same rule at run
    time (`kf::tiling::decomposeColumns` is the rule).

    A matmul without a `kf.kernel` fails the pass ("run --kf-select-kernels
    first"); `cols` already set (by hand) are kept.

    Example: `kf-opt --kf-select-kernels --kf-tile-columns in.mlir`
  }];
}

def KfBlockCaches : Pass<"kf-block-caches", "::mlir::ModuleOp"> {
  let summary = "Size each matmul's L2 row blocks and L1 K blocks";
  let description = [{
    Sets `l2_rows` and `l1_k` of every `#kf.kernel` from the module's
    `#kf.target` cache sizes (per core), the format table and the matrix:

    * L1: the activation tile, `w` columns x `l1_k` elements in the
      weight's activation format (Q8_0's 34 bytes per 32 for Q8_0, Q4_0,
      MXFP4; Q8_K's 292 per 256 for the K-quants and IQ formats; the float
      formats' own bytes), stays resident while the weight rows stream past
      it, so it takes at most half of L1d. `w` is the widest tile of `cols`
      (`max_cols` when dynamic or unset). `l1_k` is K when that fits;
      otherwise K is split into the fewest blocks that fit, of equal size
      rounded up to the K granule (the least common multiple of the
      weight's block, the activation's block and 32), so the K tail is as
      long as the other blocks, give or take a granule.
    * L2: a block of `l2_rows` weight rows x `l1_k` elements, in the
      format's bytes (block_bytes per block_elems), is reused by every
      column tile, so it takes at most half of L2; the rest holds the
      activations and results. The rows one thread gets (N rounded up to
      row groups of the layout, split over `threads`) are split into the
      fewest such blocks, of equal size rounded up to a row group. N per
      matmul is a group's rows for `kf.grouped_linear` and an expert's for
      a stack. A kernel that decodes once (`decode = once`) keeps a row
      decoded (one byte per weight) beside its packed bytes, so both count,
      and the decoded block stays within the kernel's 1 MiB of scratch.

    Both are at least one granule or row group when a cache is too small
    for even that. A value already set (by the tuning file) is kept, and
    `l2_rows` is sized for a tuned `l1_k`. A matmul without a `kf.kernel`
    or a module without a `kf.target` fails the pass.

    Example: Q8_0 `[2048, 4096]`, M = 17 on znver5 (48 KiB L1d, 1 MiB L2,
    16 threads): the 8-column tile fits 2880 elements of K in 24 KiB, so
    K = 4096 is two blocks of `l1_k = 2048`; 240 rows of 2048 fit in
    512 KiB, more than a thread's 128, so `l2_rows = 128`.
  }];
}

def KfLowerQuantDot : Pass<"kf-lower-quant-dot", "::mlir::ModuleOp"> {
  let summary = "Lower each decided matmul to compiled quantize and dot kernels";
  let description = [{
    Replaces each `kf.linear` and `kf.grouped_linear` whose `#kf.kernel` the
    emitters implement (the weight's format and the decided ISA, on the
    module's `#kf.target`) by a `kf.quantize_activations` of its input and
    a `kf.qmatmul` of the packed
    activations and the weight, which keeps the `kf.kernel` decision. Both
    call kernels the pass builds (docs/codegen.md's loop nest, per-format
    decode and per-ISA dot emitters) as functions of the module's nested
    `module @kernels`, created on first use; matmuls of one shape and
    decision share one function, and a static M builds only the column
    tiles its decomposition uses. A `precision(bf16)` linear gets a kernel
    that rounds its results to bf16 as it stores them.

    The kernels module is what the JIT compiles for this machine and the
    object writer for any target; `kf.quantize_activations` ops of one
    input fold together under CSE.

    A `kf.grouped_linear` becomes one `kf.qmatmul` per group, on its slice
    of the input and, by `row_offset`, its rows of the weight (so a group's
    rows must be a multiple of the layout's row group), by the kernel of one
    group's shape; `tensor.concat` joins the groups' results.

    A `kf.moe` whose six decisions the emitters all build is lowered whole:
    its shared expert to `kf.quantize_activations` + `kf.qmatmul` as a
    linear, its routed stacks to `kf.expert_qmatmul` ops calling one
    expert's kernel (the executor buckets the slots by expert at run time,
    `kf/runtime/moe_dispatch.h`), joined by `kf.swiglu` (the clamps, the
    routing weight before the down projection, bf16), `kf.fp8_sim` of each
    linear's input under `fp8_activations`, and `kf.moe_combine` (the routed
    sum plus the shared expert, bf16). The down projection's activations are
    quantized per slot (`[T, k, F]`).

    A matmul whose decision no emitter builds yet (a format or ISA without
    one) is left as it is, for the graph's reference path (a `kf.moe` whole,
    when any of its stacks has none), unless `require-all` is set, which
    fails on it with the reason. A matmul without a `kf.kernel`, or a module
    without a `kf.target`, fails the pass.

    Example: `kf-opt --kf-set-target=target=znver5 --kf-select-kernels
    --kf-tile-columns --kf-lower-quant-dot in.mlir`
  }];
  let options = [
    Option<"requireAll", "require-all", "bool", /*default=*/"false",
           "fail on a linear no emitter can build instead of leaving it">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"];
}

def KfLowerOps : Pass<"kf-lower-ops", "::mlir::ModuleOp"> {
  let summary = "Lower graph ops to compiled step kernels";
  let description = [{
    Replaces each graph op an op emitter builds (docs/engine.md, "Op
    kernels") by a `kf.step` calling a step kernel the pass builds for the
    op's instance, on the module's `#kf.target`, into the module's nested
    `module @kernels`, created on first use; instances of one shape share
    one function, and every kernel does one innermost row per work item.
    Today: `kf.rms_norm` whose weight, if any, is an f32 `!kf.qweight` (a
    constant weight of ones has been folded away by the canonicalizer),
    `kf.fp8_sim`, `kf.fp4_sim`, `kf.swiglu`, `kf.hadamard`, `kf.rope`
    (its frequencies a constant table of the kernel; its positions, one per
    token, read whole by every item), the hyper-connection ops
    `kf.hc_expand`, `kf.hc_pre`, `kf.hc_post` and `kf.hc_head`, whose
    kernels mix a token's streams, `kf.moe_combine`, which sums a token's
    routed slots and shared expert, `kf.embed`, whose kernel reads a
    token's id (one i32 per item) and decodes its row of the table, read as
    stored (F32, F16, BF16 or Q8_0), and `kf.moe_gate` with a static number
    of experts, whose kernel routes a token, learned (top k of the biased
    scores) or hashed (its id, one i32 per item, selecting a row of the i32
    table): one token per work item; and
    `kf.argmax`, one innermost row per work item (its result drops that
    dimension; the argmax of a rank-1 tensor, a scalar no step writes,
    fails the pass).

    The attention and its caches, on a module bounded by
    `--kf-bound-context` (docs/engine.md, "State"): `kf.cache_reset` is
    erased (every cache is addressed by position); `kf.cache_append` and
    `kf.compress` (an entries step, then a state step) become `kf.step`s
    taking their cache; `kf.window_indices`, `kf.visible_entries` and
    `kf.indexer_topk` do one token per item, `kf.indexer_scores` a block of
    entries of a token, given the positions and ratio of the
    `kf.indexer_topk` that reads its scores (which it must have), and
    `kf.sparse_attention` a group of a token's heads.

    An op no emitter builds yet is left as it is. An op whose instance its
    emitter refuses (a row length the kernel does not take) fails the pass,
    naming the reason, as does a module without a `kf.target`.

    Example: `kf-opt --kf-set-target=target=znver5 --kf-lower-ops in.mlir`
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def KfBoundContext : Pass<"kf-bound-context", "::mlir::ModuleOp"> {
  let summary = "Bound the sequences a plan holds: static shapes for the caches' entries";
  let description = [{
    A plan's memory is static, so its caches are sized for the longest
    sequence it holds: `max-context` tokens, recorded on the module as
    `kf.max_context` (docs/engine.md, "State"). A compressed cache then
    holds at most `max-context / ratio` entries (at least one), and each
    `kf.cache_read` of one reads that many rows (`tensor<?xD>` becomes
    `tensor<ExD>`); the ops whose result has a dimension per entry follow:
    `kf.visible_entries` and `kf.indexer_scores` `[T, E]`, `kf.indexer_topk`
    `[T, min(k, E)]`. Rows past a sequence's entries are never read as
    entries: the visible and top-k columns stop at the query's causal
    entries.

    Example: `kf-opt --kf-bound-context=max-context=4096 in.mlir`
  }];
  let options = [
    Option<"maxContext", "max-context", "int64_t", /*default=*/"4096",
           "The longest sequence (tokens) the caches hold">
  ];
}

def KfBuildPlan : Pass<"kf-build-plan", "::mlir::ModuleOp"> {
  let summary = "Turn each function of kernel calls into a kf_plan.plan";
  let description = [{
    Replaces each function of the module whose ops all call compiled kernels
    (`kf.step`, `kf.quantize_activations`, `kf.qmatmul`,
    `kf.expert_qmatmul`, the reshapes `tensor.expand_shape` and
    `tensor.collapse_shape` that keep the leading token dimension, and the
    column slices and concatenations of a grouped linear) by a `kf_plan.plan` of the same name (docs/engine.md,
    "Building a plan"):

    * its tensor arguments and results become run buffers (`arg<i>`,
      `result<i>`), its `!kf.qweight` arguments and `kf.get_weight`s weights
      (named `arg<i>` or by symbol), packed to the layout of the
      `#kf.kernel` of the matmuls that read them, or kept as stored;
    * every other tensor gets a byte range of the activation arena sized for
      `max-rows` token rows, 64-byte aligned, reused once the tensor is dead
      (first fit, in op order); a reshape and a slice of the innermost
      columns share their operand's range, the parts of a concatenation
      along the innermost dimension are written into its range by the
      matmuls computing them, and a result the function returns is written
      straight into its run buffer;
    * every kernel call becomes a `kf_plan.step`: a `kf.step` over its work
      items, a quantizer over its rows and a matmul over its output
      columns, in row groups, through step kernels built into `module
      @kernels` (kf/Codegen/MatmulSteps.h); a `kf.expert_qmatmul` becomes a
      `kf_plan.experts` the runtime dispatches, its items (expert, L2 row
      block) claimed;
    * a step waits at a barrier only where it touches bytes that another
      thread may have touched since the last barrier with a write on either
      side: a step reading the rows a step before it wrote, item by item,
      with the same items split the same way, needs none.

    The module's caches (`kf.cache`, bounded by `--kf-bound-context`) are
    laid out in the model's state, one after the other, the same for every
    plan (`kf_plan.cache`); a step taking a cache reads and writes it there,
    a `kf.cache_read` is a view of it.

    A function with any other op (a graph op no kernel computes yet, a
    slice of rows) fails the pass naming the op, as does a function that
    returns an argument or one value twice. A static leading dimension is
    the plan's row count; `max-rows` bounds a dynamic one.

    Example: `kf-opt --kf-plan-pipeline --kf-build-plan in.mlir`
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"512",
           "the most token rows one run of a plan with a dynamic token "
           "dimension takes (the prefill chunk)">
  ];
  let dependentDialects = ["::mlir::kf_plan::KfPlanDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect"];
}

def KfGraphStats : Pass<"kf-graph-stats", "::mlir::ModuleOp"> {
  let summary = "Print what a model graph costs: weights, KV cache, arena";
  let description = [{
    Prints a report of the module, as `--print-op-stats` does, and leaves the
    module unchanged:

    * the bytes of the `kf.weight` symbols by `#kf.format`, their total and
      the parameter count (integer tables such as `tid2eid` are looked up,
      not multiplied, and are not parameters);
    * the weight bytes one `@decode` token reads, the numerator of the decode
      roofline, and its active parameters: every weight `@decode` (or a
      function it calls) uses counts whole, except the expert stacks of a
      `kf.moe` or of the `kf.expert_qmatmul`s it is lowered to, of which a
      token reads k of E (k of the `kf.moe_gate` that routes it), and lookup
      tables (the `kf.embed` table, `tid2eid`), of
      which it reads one row and no parameters;
    * the KV cache by layer kind, the layer being the `kf.cache` symbol
      before its last dot (`blk.3`), and its kind the string its caches'
      `kf.layer_kind` attribute holds (the model's name for it, e.g.
      DeepSeek-V4's SWA, CSA, HCA), or else their roles joined by `+`
      (`kv+compressor`). A layer's fixed bytes are its rings and
      the compressors' fp32 running state; its compressed entries grow by
      `dim · element / ratio` bytes per token. The total is at `tokens`.
    * the activation arena of `@prefill` at `prefill-tokens` tokens and of
      `@decode` at a context of `tokens`: the peak, in program order, of the
      bytes of the op results live at once (a reshape shares its operand's
      buffer). Dynamic dimensions are the token count, except compressed
      cache entries (context / ratio) and what follows from them (indexer
      scores, visible entries, and min(k, entries) indexer picks);
    * the matmuls by how they run: compiled (`kf.qmatmul`,
      `kf.expert_qmatmul` and the `kf.moe`s lowered whole) and not
      (`kf.linear`, `kf.grouped_linear`, `kf.moe` left to the reference);
    * one line: the memory weights, KV at `tokens` and the larger arena
      need together.

    docs/graph.md has an example report.

    Example: `kf-opt --kf-graph-stats="tokens=131072 prefill-tokens=4096"
    graph.mlir -o /dev/null`
  }];
  let options = [
    Option<"contextTokens", "tokens", "int64_t", /*default=*/"65536",
           "context length: the KV cache total and the entries @decode reads">,
    Option<"prefillTokens", "prefill-tokens", "int64_t", /*default=*/"2048",
           "tokens of the @prefill whose arena is estimated">
  ];
}

#endif // KF_PASSES_PASSES
