// RUN: kf-opt %s | FileCheck %s
// The printed form parses back to the same IR.
// RUN: kf-opt %s | kf-opt | FileCheck %s

// CHECK-LABEL: kf_plan.plan @norm_linear max_rows(64) arena(65536) {
// CHECK-NEXT:    kf_plan.buffer "arg0" bytes(0 + 1024)
// CHECK-NEXT:    kf_plan.buffer "result0" bytes(0 + 64) output
// CHECK-NEXT:    kf_plan.weight "arg1" : !kf.qweight<f32, [256]>
// CHECK-NEXT:    kf_plan.weight "arg2" layout("q8_0_r16") : !kf.qweight<q8_0, [16, 256]>
// CHECK-NEXT:    kf_plan.weight "arg3" layout("q8_0_r16") : !kf.qweight<q8_0, [4, 16, 256]>
// CHECK-NEXT:    kf_plan.step "attn_norm" @kernels::@norm items(0 + 1) blocks(1) [#kf_plan.operand<kind = input, index = 0, offset = 0, fixed = 0, per_row = 1024>, #kf_plan.operand<kind = weight, index = 0, offset = 0, fixed = 1024, per_row = 0>, #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 1024>]
// CHECK-NEXT:    kf_plan.step "q" @kernels::@matmul items(16 + 0) blocks(16) barrier [
// CHECK-NEXT:    kf_plan.step "count" @kernels::@norm items(4 + 0) claim(2) [
// CHECK-NEXT:    kf_plan.experts "down" @kernels::@expert experts(4) slots(2) rows(16) rows_per_item(16) x_row_bytes(384) expert_bytes(4352) row_per_slot barrier [
// CHECK-NEXT:  }
module {
  kf_plan.plan @norm_linear max_rows(64) arena(65536) {
    kf_plan.buffer "arg0" bytes(0 + 1024)
    kf_plan.buffer "result0" bytes(0 + 64) output
    kf_plan.weight "arg1" : !kf.qweight<f32, [256]>
    kf_plan.weight "arg2" layout("q8_0_r16") : !kf.qweight<q8_0, [16, 256]>
    kf_plan.weight "arg3" layout("q8_0_r16") : !kf.qweight<q8_0, [4, 16, 256]>
    kf_plan.step "attn_norm" @kernels::@norm items(0 + 1) blocks(1) [
      #kf_plan.operand<kind = input, index = 0, offset = 0, fixed = 0, per_row = 1024>,
      #kf_plan.operand<kind = weight, index = 0, offset = 0, fixed = 1024, per_row = 0>,
      #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 1024>]
    kf_plan.step "q" @kernels::@matmul items(16 + 0) blocks(16) barrier [
      #kf_plan.operand<kind = weight, index = 1, offset = 0, fixed = 4352, per_row = 0>,
      #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 1024>,
      #kf_plan.operand<kind = input, index = 1, offset = 0, fixed = 0, per_row = 64>]
    kf_plan.step "count" @kernels::@norm items(4 + 0) claim(2) [
      #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 16, per_row = 0>]
    kf_plan.experts "down" @kernels::@expert experts(4) slots(2) rows(16) rows_per_item(16)
        x_row_bytes(384) expert_bytes(4352) row_per_slot barrier [
      #kf_plan.operand<kind = weight, index = 2, offset = 0, fixed = 17408, per_row = 0>,
      #kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 768>,
      #kf_plan.operand<kind = arena, index = 0, offset = 50000, fixed = 0, per_row = 8>,
      #kf_plan.operand<kind = arena, index = 0, offset = 51000, fixed = 0, per_row = 128>]
  }
  module @kernels {
    func.func private @norm(!llvm.ptr, i64, i64, i64)
    func.func private @matmul(!llvm.ptr, i64, i64, i64)
    func.func private @expert(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
  }
}
