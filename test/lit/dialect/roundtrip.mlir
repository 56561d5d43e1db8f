// RUN: kf-opt %s --split-input-file | FileCheck %s
// The printed form parses back to the same IR.
// RUN: kf-opt %s --split-input-file | kf-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @qweight_types
// CHECK-SAME: !kf.qweight<f32, [7, 3]>
// CHECK-SAME: !kf.qweight<f16, [1, 1]>
// CHECK-SAME: !kf.qweight<bf16, [16, 64]>
// CHECK-SAME: !kf.qweight<q8_0, [2048, 4096]>
// CHECK-SAME: !kf.qweight<q8_0, [256, 2048, 4096]>
// CHECK-SAME: !kf.qweight<iq1_m, [256, 2048, 4096]>
// CHECK-SAME: !kf.qweight<fractal64, [8, 64]>
// CHECK-SAME: !kf.qweight<vq3_64, [8, 128]>
// CHECK-SAME: !kf.qweight<mxfp4, [8, 32]>
func.func @qweight_types(%a: !kf.qweight<f32, [7, 3]>, %b: !kf.qweight<f16, [1, 1]>,
                         %c: !kf.qweight<bf16, [16, 64]>, %d: !kf.qweight<q8_0, [2048, 4096]>,
                         %e: !kf.qweight<q8_0, [256, 2048, 4096]>,
                         %f: !kf.qweight<iq1_m, [256, 2048, 4096]>, %g: !kf.qweight<fractal64, [8, 64]>,
                         %h: !kf.qweight<vq3_64, [8, 128]>, %i: !kf.qweight<mxfp4, [8, 32]>) {
  return
}

// -----

// CHECK-LABEL: func.func @rms_norm
func.func @rms_norm(%x: tensor<?x64xf32>, %g: tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: kf.rms_norm %{{.*}}, %{{.*}} eps(9.99999997E-7) : tensor<?x64xf32>, tensor<64xf32>
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x64xf32>, tensor<64xf32>
  // CHECK: kf.rms_norm %{{.*}} eps(9.99999974E-6) : tensor<?x64xf32>
  %1 = kf.rms_norm %x eps(1.0e-05) : tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm_rank3_dynamic_weight
func.func @rms_norm_rank3_dynamic_weight(%x: tensor<2x3x64xf32>, %g: tensor<?xf32>) -> tensor<2x3x64xf32> {
  // CHECK: kf.rms_norm {{.*}} : tensor<2x3x64xf32>, tensor<?xf32>
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<2x3x64xf32>, tensor<?xf32>
  return %0 : tensor<2x3x64xf32>
}

// -----

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x4096xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>,
                  %y: tensor<5x3xf32>, %v: !kf.qweight<f32, [7, 3]>) -> (tensor<?x2048xf32>, tensor<5x7xf32>) {
  // CHECK: kf.linear %{{.*}}, %{{.*}} : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  %0 = kf.linear %x, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  // CHECK: kf.linear %{{.*}}, %{{.*}} : tensor<5x3xf32>, !kf.qweight<f32, [7, 3]> -> tensor<5x7xf32>
  %1 = kf.linear %y, %v : tensor<5x3xf32>, !kf.qweight<f32, [7, 3]> -> tensor<5x7xf32>
  return %0, %1 : tensor<?x2048xf32>, tensor<5x7xf32>
}

// -----

// CHECK: module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>}
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu",
    cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144,
    l3 = 8388608, cores = 8>} {
}

// -----

// An AArch64 target with no L3.
// CHECK: #kf.target<name = "m", triple = "aarch64-unknown-linux-gnu", cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>
module attributes {kf.target = #kf.target<name = "m", triple = "aarch64-unknown-linux-gnu",
    cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>} {
}
