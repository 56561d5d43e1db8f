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

// The other op kernels, one innermost row per item: the simulations (a
// leading span named apart), the routed SwiGLU with its weight per row (k
// items per token row), the transform.
// CHECK-LABEL: func.func @ops
// CHECK:      kf.step @kernels::@kf_fp8_sim_n256_b128(%arg0) items(1) : (tensor<?x256xf32>) -> tensor<?x256xf32>
// CHECK-NEXT: kf.step @kernels::@kf_fp8_sim_n192_b64_l128(%arg1) items(1)
// CHECK-NEXT: kf.step @kernels::@kf_swiglu_f128_w_l40000000(%arg2, %arg3, %arg4) items(4) : (tensor<?x4x128xf32>, tensor<?x4x128xf32>, tensor<?x4xf32>) -> tensor<?x4x128xf32>
// CHECK-NEXT: %[[R:.*]] = kf.step @kernels::@kf_hadamard_n128(%arg5) items(8)
// CHECK-NEXT: kf.step @kernels::@kf_fp4_sim_n128_b32(%[[R]]) items(8)
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @ops(%x: tensor<?x256xf32>, %kv: tensor<?x192xf32>, %g: tensor<?x4x128xf32>, %u: tensor<?x4x128xf32>, %w: tensor<?x4xf32>, %q: tensor<?x8x128xf32>) -> (tensor<?x256xf32>, tensor<?x192xf32>, tensor<?x4x128xf32>, tensor<?x8x128xf32>) {
    %a = kf.fp8_sim %x block(128) : tensor<?x256xf32>
    %b = kf.fp8_sim %kv block(64) leading(128) : tensor<?x192xf32>
    %h = kf.swiglu %g, %u weights(%w : tensor<?x4xf32>) limit(2.0) : tensor<?x4x128xf32>
    %r = kf.hadamard %q : tensor<?x8x128xf32>
    %f = kf.fp4_sim %r block(32) : tensor<?x8x128xf32>
    return %a, %b, %h, %f : tensor<?x256xf32>, tensor<?x192xf32>, tensor<?x4x128xf32>, tensor<?x8x128xf32>
  }
}

// -----

// Ops without an emitter stay.
// CHECK-LABEL: func.func @no_emitter
// CHECK: kf.rope
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @no_emitter(%x: tensor<?x64xf32>, %p: tensor<?xi64>) -> tensor<?x64xf32> {
    %y = kf.rope %x, %p, <dim = 64, base = 1.000000e+04> : tensor<?x64xf32>, tensor<?xi64>
    return %y : tensor<?x64xf32>
  }
}
