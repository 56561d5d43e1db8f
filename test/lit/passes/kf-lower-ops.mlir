// RUN: kf-opt %s --split-input-file --kf-lower-ops | FileCheck %s

// The target is written out: the lowering reads the module's, nothing of
// the machine running the test.

// A weighted norm, one item per token row, and the weightless per-head bf16
// scaling of a [T, H, D] input, H items per token row; two norms of one
// instance share one kernel.
// CHECK-LABEL: func.func @norms
// CHECK:      %[[A:.*]] = kf.step @kernels::@kf_rms_norm_d64_w_e358637bd(%arg0, %arg1) items(1) : (tensor<?x64xf32>, !kf.qweight<f32, [64]>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[B:.*]] = kf.step @kernels::@kf_rms_norm_d64_w_e358637bd(%[[A]], %arg1) items(1)
// CHECK-NEXT: %[[C:.*]] = kf.step @kernels::@kf_rms_norm_d32_nw_e358637bd_bf16(%arg2) items(4) : (tensor<?x4x32xf32>) -> tensor<?x4x32xf32>
// CHECK-NEXT: return %[[B]], %[[C]]
// CHECK:      module @kernels {
// CHECK:        func.func @kf_rms_norm_d64_w_e358637bd(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME:     target_cpu = "x86-64-v3"
// The sum of squares in fp64, 16 lanes.
// CHECK:          arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK:          vector.reduction <add>, %{{.*}} : vector<16xf64> into f64
// CHECK:          llvm.intr.sqrt
// CHECK:        func.func @kf_rms_norm_d32_nw_e358637bd_bf16(
// CHECK-NOT:    func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @norms(%x: tensor<?x64xf32>, %w: !kf.qweight<f32, [64]>, %h: tensor<?x4x32xf32>) -> (tensor<?x64xf32>, tensor<?x4x32xf32>) {
    %a = kf.rms_norm %x, %w eps(1.0e-06) : tensor<?x64xf32>, !kf.qweight<f32, [64]>
    %b = kf.rms_norm %a, %w eps(1.0e-06) : tensor<?x64xf32>, !kf.qweight<f32, [64]>
    %c = kf.rms_norm %h eps(1.0e-06) compute(bf16) : tensor<?x4x32xf32>
    return %b, %c : tensor<?x64xf32>, tensor<?x4x32xf32>
  }
}

// -----

// Ops without an emitter stay.
// CHECK-LABEL: func.func @no_emitter
// CHECK: kf.hadamard
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @no_emitter(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = kf.hadamard %x : tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}
