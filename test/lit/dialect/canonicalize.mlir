// RUN: kf-opt %s --canonicalize --split-input-file | FileCheck %s

// A constant all-ones weight is dropped: the weightless form.
// CHECK-LABEL: func.func @unit_weight
// CHECK-NOT: arith.constant
// CHECK: %[[N:.*]] = kf.rms_norm %arg0 eps(9.99999997E-7) : tensor<4x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @unit_weight(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %ones = arith.constant dense<1.0> : tensor<64xf32>
  %0 = kf.rms_norm %x, %ones eps(1.0e-06) : tensor<4x64xf32>, tensor<64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// Not a splat, but every element is one.
// CHECK-LABEL: func.func @unit_weight_elementwise
// CHECK: kf.rms_norm %arg0 eps({{.*}}) : tensor<2x4xf32>
func.func @unit_weight_elementwise(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %ones = arith.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %0 = kf.rms_norm %x, %ones eps(1.0e-06) : tensor<2x4xf32>, tensor<4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Negative: one element differs from one.
// CHECK-LABEL: func.func @non_unit_weight
// CHECK: %[[W:.*]] = arith.constant dense<[1.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00]>
// CHECK: kf.rms_norm %arg0, %[[W]] eps
func.func @non_unit_weight(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense<[1.0, 1.0, 1.0, 2.0]> : tensor<4xf32>
  %0 = kf.rms_norm %x, %w eps(1.0e-06) : tensor<2x4xf32>, tensor<4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Negative: a weight that is not a constant.
// CHECK-LABEL: func.func @argument_weight
// CHECK: kf.rms_norm %arg0, %arg1 eps
func.func @argument_weight(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<2x4xf32>, tensor<4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// An unused norm is dead: the ops are Pure.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: kf.rms_norm
// CHECK-NOT: kf.linear
// CHECK: return %arg0
func.func @dead(%x: tensor<2x4xf32>, %w: !kf.qweight<f32, [8, 4]>) -> tensor<2x4xf32> {
  %0 = kf.rms_norm %x eps(1.0e-06) : tensor<2x4xf32>
  %1 = kf.linear %x, %w : tensor<2x4xf32>, !kf.qweight<f32, [8, 4]> -> tensor<2x8xf32>
  return %x : tensor<2x4xf32>
}
