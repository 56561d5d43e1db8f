//===- PlanOps.td - The kf_plan dialect --------------------*- tablegen -*-===//
//
// A compiled plan (docs/engine.md, "Plans"): step kernel calls in order over
// an activation arena, the run's buffers and the packed weights; op for op
// what the runtime's kf::Plan holds.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_PLAN_PLANOPS
#define KF_DIALECT_PLAN_PLANOPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

def KfPlan_Dialect : Dialect {
  let name = "kf_plan";
  let cppNamespace = "::mlir::kf_plan";
  let summary = "Compiled plans: step kernel calls over a static arena";
  let description = [{
    A `kf_plan.plan` is what the runtime executes (docs/engine.md): its run
    buffers (`kf_plan.buffer`), packed weights (`kf_plan.weight`) and steps
    (`kf_plan.step`, and `kf_plan.experts` for routed expert matmuls) in
    order, each step a call of a step kernel of the
    module's `kernels` module with its operands at byte offsets of the
    arena, a weight or a run buffer, its work items and how threads share
    them, and whether it waits at a barrier first. `--kf-build-plan` writes
    it from a graph whose ops all call compiled kernels.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::kf::KfDialect"];
}

class KfPlan_Op<string mnemonic, list<Trait> traits = []>
    : Op<KfPlan_Dialect, mnemonic, traits>;

def KfPlan_OperandKind : I32EnumAttr<"OperandKind",
    "where a step operand's address comes from", [
  I32EnumAttrCase<"arena", 0>,
  I32EnumAttrCase<"weight", 1>,
  I32EnumAttrCase<"input", 2>,
  I32EnumAttrCase<"state", 3>
]> {
  let cppNamespace = "::mlir::kf_plan";
  let genSpecializedAttr = 0;
}

def KfPlan_WorkSplit : I32EnumAttr<"WorkSplit",
    "how a step's work items are shared between threads", [
  I32EnumAttrCase<"blocks", 0>,
  I32EnumAttrCase<"claim", 1>,
  I32EnumAttrCase<"single", 2>
]> {
  let cppNamespace = "::mlir::kf_plan";
  let genSpecializedAttr = 0;
}

def KfPlan_WorkSplitAttr : EnumAttr<KfPlan_Dialect, KfPlan_WorkSplit, "work_split">;

// A !kf.qweight type, without the kf dialect's definitions.
def KfPlan_QWeightType : Type<CPred<"::llvm::isa<::mlir::kf::QWeightType>($_self)">,
                              "a !kf.qweight">;

def KfPlan_OperandAttr : AttrDef<KfPlan_Dialect, "Operand"> {
  let mnemonic = "operand";
  let summary = "A step operand: a byte range of the arena, a weight or a run buffer";
  let description = [{
    `kind` says where the address comes from (the values of
    `kf_operand_kind`, kf/runtime/plan_abi.h): the arena, the plan's weight
    `index`, its run buffer `index` or the model's state (0 for the arena
    and the state); `offset` is the
    first byte; the kernel may touch `fixed + per_row · m` bytes from it for
    a run of m token rows.

    ```mlir
    #kf_plan.operand<kind = arena, index = 0, offset = 4096, fixed = 0, per_row = 1024>
    ```
  }];
  let parameters = (ins EnumParameter<KfPlan_OperandKind>:$kind, "int64_t":$index,
    "int64_t":$offset, "int64_t":$fixed, "int64_t":$per_row);
  let assemblyFormat = "`<` struct(params) `>`";
}

def KfPlan_PlanOp : KfPlan_Op<"plan", [Symbol, SingleBlock, NoTerminator,
    IsolatedFromAbove]> {
  let summary = "A compiled plan: run buffers, weights and steps, in order";
  let description = [{
    The plan for runs of 1 to `max_rows` token rows with an activation arena
    of `arena_bytes` and, when it has caches, a model state of `state_bytes`
    for sequences of at most `max_context` tokens. Its body holds, in order,
    its run buffers, its weights, its caches and its steps; a buffer's or
    weight's index is its position among its kind. The verifier checks what the runtime checks before it runs a plan
    (kf::Plan::validate): every index in range, every operand inside its
    arena or run buffer at both ends of the row range.

    Example:

    ```mlir
    kf_plan.plan @norm max_rows(64) arena(0) {
      kf_plan.buffer "arg0" bytes(0 + 1024)
      kf_plan.buffer "result0" bytes(0 + 1024) output
      kf_plan.weight "arg1" : !kf.qweight<f32, [256]>
      kf_plan.step "rms_norm" @kernels::@kf_rms_norm_d256_w_e358637bd items(0 + 1) blocks(1) [
          #kf_plan.operand<kind = input, index = 0, offset = 0, fixed = 0, per_row = 1024>,
          #kf_plan.operand<kind = weight, index = 0, offset = 0, fixed = 1024, per_row = 0>,
          #kf_plan.operand<kind = input, index = 1, offset = 0, fixed = 0, per_row = 1024>]
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$max_rows,
    I64Attr:$arena_bytes, DefaultValuedAttr<I64Attr, "0">:$state_bytes,
    DefaultValuedAttr<I64Attr, "0">:$max_context);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `max_rows` `(` $max_rows `)` `arena` `(` $arena_bytes `)`
    (`state` `(` $state_bytes^ `)`)? (`context` `(` $max_context^ `)`)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def KfPlan_BufferOp : KfPlan_Op<"buffer", [HasParent<"PlanOp">]> {
  let summary = "A buffer of the run: an input the caller fills or an output it reads";
  let description = [{
    `fixed + per_row · m` bytes the caller provides for a run of m rows:
    the function's argument or (`output`) result it stands for, by name.
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$fixed, I64Attr:$per_row,
    UnitAttr:$output);
  let assemblyFormat = [{
    $name `bytes` `(` $fixed `+` $per_row `)` (`output` $output^)? attr-dict
  }];
}

def KfPlan_WeightOp : KfPlan_Op<"weight", [HasParent<"PlanOp">]> {
  let summary = "A weight the runtime binds, packed to a kernel's layout";
  let description = [{
    The weight `name` (a model tensor, or the function argument it was) of
    `type`, packed by the runtime to `layout` (docs/codegen.md's packed
    layouts, `q8_0_r16`), or kept as stored when there is none (f32
    vectors, read as they are).
  }];
  let arguments = (ins StrAttr:$name, TypeAttrOf<KfPlan_QWeightType>:$type,
    OptionalAttr<StrAttr>:$layout);
  let assemblyFormat = [{
    $name (`layout` `(` $layout^ `)`)? attr-dict `:` $type
  }];
}

def KfPlan_CacheOp : KfPlan_Op<"cache", [HasParent<"PlanOp">]> {
  let summary = "A cache of the model's state: its bytes in the state";
  let description = [{
    The `kf.cache` `name` (a KV window ring, a compressor's entries and
    running state) at `bytes` from `offset` of the model's state, which
    every plan of the model lays out alike.

    ```mlir
    kf_plan.cache "blk.0.kv" offset(0) bytes(12288)
    ```
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$offset, I64Attr:$bytes);
  let assemblyFormat = [{
    $name `offset` `(` $offset `)` `bytes` `(` $bytes `)` attr-dict
  }];
}

def KfPlan_StepOp : KfPlan_Op<"step", [HasParent<"PlanOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A step kernel's call over its work items";
  let description = [{
    Calls `callee`, a step kernel of the plan ABI in the module's `kernels`
    module, on `items_fixed + items_per_row · m` work items shared between
    the threads as `split` says, in whole groups (or batches) of `group`,
    with `operands` in its order; `barrier` makes every thread wait until
    all have finished the steps before. `rows`, when given, is the token
    rows the kernel is called with whatever the run's (the head of a
    prefill's last row: 1). `name` is the op it executes, for errors and
    profiles.
  }];
  let arguments = (ins StrAttr:$name, SymbolRefAttr:$callee,
    I64Attr:$items_fixed, I64Attr:$items_per_row,
    KfPlan_WorkSplitAttr:$split,
    I64Attr:$group, UnitAttr:$barrier,
    TypedArrayAttrBase<KfPlan_OperandAttr, "step operands">:$operands,
    DefaultValuedAttr<I64Attr, "0">:$rows);
  let assemblyFormat = [{
    $name $callee `items` `(` $items_fixed `+` $items_per_row `)`
    custom<WorkSplit>($split) `(` $group `)` (`rows` `(` $rows^ `)`)?
    (`barrier` $barrier^)? $operands attr-dict
  }];
}

def KfPlan_ExpertsOp : KfPlan_Op<"experts", [HasParent<"PlanOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A routed expert matmul, dispatched by the runtime";
  let description = [{
    The step of a `kf.expert_qmatmul` (docs/engine.md, "Expert dispatch"):
    the runtime groups the `[T, slots]` slots by expert, gathers each
    expert's packed activation rows (`x_row_bytes` each, one per token, or
    one per slot with `row_per_slot`) and calls `callee`, a matmul kernel
    of the kernel ABI (kf/runtime/kernel_abi.h), on work items of (expert,
    block of `rows_per_item` of its `rows` output rows) that the threads
    claim, writing each slot's `rows` floats. Operands: the expert stack
    (expert `e`'s packed rows at `e · expert_bytes`), the activations, the
    ids and the output.

    ```mlir
    kf_plan.experts "ffn_gate_exps" @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c8_k256_n128_bf16
        experts(16) slots(4) rows(128) rows_per_item(64) x_row_bytes(384)
        expert_bytes(18432) barrier [...]
    ```
  }];
  let arguments = (ins StrAttr:$name, SymbolRefAttr:$callee,
    I64Attr:$experts, I64Attr:$slots, I64Attr:$rows, I64Attr:$rows_per_item,
    I64Attr:$x_row_bytes, I64Attr:$expert_bytes, UnitAttr:$row_per_slot,
    UnitAttr:$barrier,
    TypedArrayAttrBase<KfPlan_OperandAttr, "step operands">:$operands);
  let assemblyFormat = [{
    $name $callee `experts` `(` $experts `)` `slots` `(` $slots `)`
    `rows` `(` $rows `)` `rows_per_item` `(` $rows_per_item `)`
    `x_row_bytes` `(` $x_row_bytes `)` `expert_bytes` `(` $expert_bytes `)`
    (`row_per_slot` $row_per_slot^)? (`barrier` $barrier^)? $operands
    attr-dict
  }];
}

#endif // KF_DIALECT_PLAN_PLANOPS
