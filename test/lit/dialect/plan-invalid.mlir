// RUN: kf-opt %s --split-input-file --verify-diagnostics

// A plan that verifies is one the runtime loads: kf::Plan's own checks.

// expected-error @+1 {{'kf_plan.plan' op plan step 0 (norm): operand 0: bytes [4000, +1024) outside the arena of 4096}}
kf_plan.plan @arena max_rows(1) arena(4096) {
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) [
    #kf_plan.operand<kind = arena, index = 0, offset = 4000, fixed = 0, per_row = 1024>]
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

// expected-error @+1 {{'kf_plan.plan' op plan step 0 (norm): operand 0: input 1 of 1}}
kf_plan.plan @input max_rows(8) arena(0) {
  kf_plan.buffer "arg0" bytes(0 + 1024)
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) [
    #kf_plan.operand<kind = input, index = 1, offset = 0, fixed = 0, per_row = 1024>]
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

// expected-error @+1 {{'kf_plan.plan' op plan step 0 (norm): operand 0: outside input arg0 at 1 rows}}
kf_plan.plan @input_size max_rows(8) arena(0) {
  kf_plan.buffer "arg0" bytes(0 + 1024)
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) [
    #kf_plan.operand<kind = input, index = 0, offset = 0, fixed = 1024, per_row = 1024>]
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

// expected-error @+1 {{'kf_plan.plan' op plan step 0 (norm): group 0 < 1}}
kf_plan.plan @group max_rows(8) arena(1024) {
  kf_plan.step "norm" @kernels::@norm items(0 + 1) claim(0) [
    #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 128>]
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

kf_plan.plan @order max_rows(8) arena(1024) {
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) []
  // expected-error @+1 {{'kf_plan.buffer' op must come before the plan's steps}}
  kf_plan.buffer "arg0" bytes(0 + 1024)
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

kf_plan.plan @callee max_rows(8) arena(1024) {
  // expected-error @+1 {{'kf_plan.step' op callee @kernels::@norm has type '(!llvm.ptr, i64, !llvm.ptr, i64) -> ()', expected the step kernel ABI '(!llvm.ptr, i64, i64, i64) -> ()'}}
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) []
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, !llvm.ptr, i64)
}

// -----

kf_plan.plan @missing max_rows(8) arena(1024) {
  // expected-error @+1 {{'kf_plan.step' op callee @kernels::@norm is not a function}}
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) []
}

// -----

kf_plan.plan @index max_rows(8) arena(1024) {
  // expected-error @+1 {{'kf_plan.step' op operand index -1 out of range}}
  kf_plan.step "norm" @kernels::@norm items(0 + 1) blocks(1) [
    #kf_plan.operand<kind = input, index = -1, offset = 0, fixed = 0, per_row = 128>]
}
module @kernels {
  func.func private @norm(!llvm.ptr, i64, i64, i64)
}

// -----

// expected-error @+1 {{'kf_plan.plan' op plan input arg0: invalid size}}
kf_plan.plan @size max_rows(8) arena(1024) {
  kf_plan.buffer "arg0" bytes(0 + -4)
}

// -----

kf_plan.plan @experts max_rows(8) arena(65536) {
  kf_plan.weight "stack" layout("q8_0_r16") : !kf.qweight<q8_0, [4, 16, 256]>
  // expected-error @+1 {{'kf_plan.experts' op callee @kernels::@expert has type '(!llvm.ptr, i64, i64, i64) -> ()', expected the matmul kernel ABI '(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()'}}
  kf_plan.experts "up" @kernels::@expert experts(4) slots(2) rows(16) rows_per_item(16)
      x_row_bytes(384) expert_bytes(4352) [
    #kf_plan.operand<kind = weight, index = 0, offset = 0, fixed = 17408, per_row = 0>,
    #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 384>,
    #kf_plan.operand<kind = arena, index = 0, offset = 8192, fixed = 0, per_row = 8>,
    #kf_plan.operand<kind = arena, index = 0, offset = 16384, fixed = 0, per_row = 128>]
}
module @kernels {
  func.func private @expert(!llvm.ptr, i64, i64, i64)
}

// -----

// expected-error @+1 {{'kf_plan.plan' op plan step 0 (up): its output operand is smaller than its shape}}
kf_plan.plan @expert_output max_rows(8) arena(65536) {
  kf_plan.weight "stack" layout("q8_0_r16") : !kf.qweight<q8_0, [4, 16, 256]>
  kf_plan.experts "up" @kernels::@expert experts(4) slots(2) rows(16) rows_per_item(16)
      x_row_bytes(384) expert_bytes(4352) [
    #kf_plan.operand<kind = weight, index = 0, offset = 0, fixed = 17408, per_row = 0>,
    #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 384>,
    #kf_plan.operand<kind = arena, index = 0, offset = 8192, fixed = 0, per_row = 8>,
    #kf_plan.operand<kind = arena, index = 0, offset = 16384, fixed = 0, per_row = 64>]
}
module @kernels {
  func.func private @expert(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
}
